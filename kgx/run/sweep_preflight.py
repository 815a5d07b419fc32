"""Pre-flight of a sweep: everything its jobs need that this machine lacks, found before any job
starts, in one message with each way out.

A sweep of 40 paper cells without an API key would otherwise launch 40 jobs that fail one by one,
and leave a parent run with nothing under it. So before the launcher starts anything, and before
the parent run exists, every job's needs are checked once per distinct need:

* the API key of every backbone of every job (``llm.api_key_env`` set, or ``llm.extra.api_key``);
* every dataset's question file (where kgx looked, and where to get it);
* every KG a KG method reads: an endpoint must answer, an embedded store must build, and it must
  hold the topic entities of its dataset's questions (the job's own check, kgx.run.preflight).

``python -m kgx -m ... --no-preflight`` skips it (each job still checks its own needs as it starts).

A sweep whose jobs run the local CPU model says before it starts how long it expects to take: the
questions of every such job at the seconds a question takes there (:func:`local_time`), so that
six jobs of sixteen questions do not run for half an hour unannounced.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from kgx.core.config import ConfigError, DatasetConfig, LLMConfig
from kgx.core.kg_config import EndpointKGConfig
from kgx.run.preflight import kg_fix
from kgx.run.spec import RunSpec

SKIP_ENV = "KGX_NO_PREFLIGHT"  # set by ``--no-preflight`` (kgx.__main__)
SHOWN = 3  # jobs named per problem
# The local CPU model (SmolLM2-135M, llama.cpp on 2 cores): the main job (LMP at depth 2, 16 demo
# questions, 5.3 LLM calls a question) measured 24 s a question, so about 4.5 s a call.
LOCAL_SECONDS_PER_QUESTION = 24.0
LOCAL_SECONDS_PER_CALL = 4.5
LOCAL_ANNOUNCED = 60.0  # seconds: a sweep expected to take longer on the local model says so first


@dataclass
class Problem:
    """One missing need, the jobs that have it, and the ways out."""

    what: str
    fix: str
    jobs: list[str] = field(default_factory=list)

    def line(self) -> str:
        more = f" and {len(self.jobs) - SHOWN} more" if len(self.jobs) > SHOWN else ""
        named = ", ".join(self.jobs[:SHOWN]) + more
        return f"{self.what} ({len(self.jobs)} job{'s' * (len(self.jobs) != 1)}: {named}): {self.fix}"


def skipped() -> bool:
    return os.environ.get(SKIP_ENV) == "1"


def key_problem(cfg: LLMConfig) -> tuple[str, str] | None:
    """(what, fix) when a hosted backbone has no API key here."""
    if not cfg.api_key_env or "api_key" in cfg.extra or os.environ.get(cfg.api_key_env):
        return None
    return (
        f"{cfg.api_key_env} is not set (llm '{cfg.name}', {cfg.model})",
        f"export {cfg.api_key_env}=..., or choose a backbone this machine has (llm=...; llm=scripted runs offline)",
    )


def file_problem(dataset: DatasetConfig) -> str:
    """What is wrong with a dataset's question file (where kgx looked, and where to get it), or ""."""
    from kgx.datasets import DataError, dataset_file

    try:
        dataset_file(dataset)
    except DataError as exc:
        return str(exc)
    return ""


def check(specs: Iterable[tuple[str, RunSpec]]) -> list[Problem]:
    """Every missing need of the jobs (name, spec), one Problem per need."""
    problems: dict[str, Problem] = {}

    def found(key: str, what: str, fix: str, job: str) -> None:
        problems.setdefault(key, Problem(what, fix)).jobs.append(job)

    opened: dict[str, object] = {}  # a KG's config -> the opened KG, or what stopped it (a Problem's what)
    held: dict[str, tuple[str, str] | None] = {}  # a KG's and a dataset's configs -> what lacks
    for job, spec in specs:
        for cfg in (spec.llm, *spec.stages.values()):
            if (missing := key_problem(cfg)) is not None:
                found(f"key {cfg.api_key_env}", *missing, job)
        if data := file_problem(spec.dataset):
            found(f"data {spec.dataset.name}", data, "python -m kgx.datasets lists what this machine can run", job)
            continue
        if spec.method.horizon() is None:  # IO, CoT, SC read no KG
            continue
        kg_key = json.dumps(asdict(spec.kg), sort_keys=True, default=str)
        if kg_key not in opened:
            opened[kg_key] = open_once(spec)
        kg = opened[kg_key]
        if isinstance(kg, str):
            found(f"kg {kg_key}", kg, kg_fix(spec), job)
            continue
        key = json.dumps([kg_key, asdict(spec.dataset)], sort_keys=True, default=str)
        if key not in held:
            held[key] = topics_problem(spec, kg)
        if held[key] is not None:
            found(f"topics {key}", *held[key], job)
    return list(problems.values())


def open_once(spec: RunSpec) -> object:
    """The job's KG, opened as the job opens it (an endpoint asked once, not retried), or what
    stopped it."""
    from kgx.core.sources import SourceError
    from kgx.kg import KGError, open_kg

    endpoint = getattr(spec.kg, "endpoint", "")  # an endpoint's schema has one
    where = f"kg '{spec.kg.name}'" + (f" at {endpoint}" if endpoint else "")
    try:
        once = replace(spec.kg, retries=0) if isinstance(spec.kg, EndpointKGConfig) else spec.kg
        return open_kg(once, Path(spec.run.cache_dir))
    except (KGError, SourceError, FileNotFoundError) as exc:
        return f"{where}: {exc}"


def topics_problem(spec: RunSpec, kg: object) -> tuple[str, str] | None:
    """(what, fix) when the KG does not hold the topic entities of the dataset's questions: the
    job's own check (kgx.run.preflight), its warnings left to the job."""
    from kgx import datasets
    from kgx.datasets import DataError
    from kgx.run import preflight

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            preflight.check(spec, datasets.load(spec.dataset), kg)
    except preflight.NoTopicHeld as exc:
        return exc.what, exc.ways
    except (ConfigError, DataError) as exc:
        return str(exc), kg_fix(spec)
    return None


def message(problems: list[Problem], jobs: int) -> str:
    lines = "\n".join(f"  - {p.line()}" for p in problems)
    return (
        f"kgx: error: the sweep's pre-flight found what its {jobs} jobs need and this machine lacks; "
        f"no job was launched:\n{lines}\n"
        f"  (--no-preflight skips these checks; each job then stops on its own)"
    )


def local_time(specs: Iterable[tuple[str, RunSpec]]) -> str:
    """How long the jobs that run the local model are expected to take, in one line; "" when
    none does, or they take less than ``LOCAL_ANNOUNCED``. A question takes the method's call
    bound (kgx.methods.call_bound) in calls where it has one, else what LMP's took."""
    from kgx.llm.providers import LOCAL
    from kgx.methods import call_bound

    local = [
        (job, spec)
        for job, spec in specs
        if any(cfg.model.startswith(f"{LOCAL}/") for cfg in (spec.llm, *spec.stages.values()))
    ]
    questions = seconds = 0.0
    for _, spec in local:
        count = _questions(spec.dataset)
        bound = call_bound(spec.method)
        questions += count
        seconds += count * (bound * LOCAL_SECONDS_PER_CALL if bound else LOCAL_SECONDS_PER_QUESTION)
    if seconds < LOCAL_ANNOUNCED:
        return ""
    return (
        f"kgx: {len(local)} job{'s' * (len(local) != 1)} of this sweep run the local CPU model on {questions:,.0f} "
        f"questions in all: expect about {seconds / 60:,.0f} min, one job after another "
        f"(~{LOCAL_SECONDS_PER_QUESTION:g} s a question as LMP's main job took on 2 cores; "
        f"~{LOCAL_SECONDS_PER_CALL:g} s a call for a method with a "
        "call bound). python -m kgx.estimate measures it on a pilot; llm=scripted runs in seconds"
    )


def _questions(dataset: DatasetConfig) -> int:
    """How many questions a job answers (its ids, sample and limit applied); 0 for a file that
    cannot be read, which :func:`check` reports."""
    from kgx import datasets
    from kgx.datasets import DataError

    try:
        return len(datasets.load(dataset))
    except DataError:
        return 0
