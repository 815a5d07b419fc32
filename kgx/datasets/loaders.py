"""Loading a dataset: its reader (kgx.datasets.formats), the question selection, and dataset configs by name."""

from __future__ import annotations

import itertools
import random
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from omegaconf import OmegaConf

from kgx.core.config import ConfigError, DatasetConfig
from kgx.core.gold import scorable
from kgx.core.paths import CONF_DIR
from kgx.core.registry import RegistryError
from kgx.core.types import Question
from kgx.datasets.files import DataError, locate, text_lines
from kgx.datasets.formats import FORMATS, dataset_format
from kgx.datasets.irn import irn
from kgx.datasets.jsonl import read_jsonl
from kgx.datasets.rog import rog

BUNDLED = Path(__file__).resolve().parent / "demo" / "questions.jsonl"


@dataset_format("auto", folders=True)
def read_auto(path: Path, cfg: DatasetConfig) -> Iterable[Question]:
    """``dataset=custom``: RoG's parquet schema for a parquet file or a folder (of shards), kgx's
    JSON lines when the first line is an object, else IRN's tab-separated lines (PathQuestion,
    WC2014), so one's own file needs no loader setting."""
    if path.is_dir() or _is_parquet(path):
        return rog(path, cfg)
    for lineno, line in text_lines(path):
        if line.lstrip().startswith("{"):
            return read_jsonl(path, cfg)
        if "\t" in line:
            return irn(path, cfg)
        raise DataError(
            f"{path}:{lineno}: neither a JSON object (kgx's format) nor tab-separated fields "
            f"(IRN's question<TAB>answer<TAB>path); set dataset.loader to one of {sorted(FORMATS)}"
        )
    return []


def _is_parquet(path: Path) -> bool:
    """A parquet file starts with the magic bytes ``PAR1``, whatever its name ends with."""
    with path.open("rb") as f:
        return f.read(4) == b"PAR1"


def load(cfg: DatasetConfig) -> list[Question]:
    """The dataset's questions in file order, after the config's selection.

    Never empty: a run over no questions would finish and log figures of nothing, so an empty
    file, or a selection that keeps no question, is a DataError naming the file or the selection.
    Questions without a gold answer are kept, with a warning (:func:`warn_no_gold`).
    """
    try:
        reader = FORMATS.named(cfg.loader)
    except RegistryError as exc:
        raise DataError(f"dataset.loader={cfg.loader}: {exc}") from None
    path = dataset_file(cfg)
    read = reader.read(path, cfg)
    # Without ids or a sample (which need every question) a limit stops the reading: the first
    # questions of a 100,000-line file cost the same as those of a short one.
    streams = cfg.limit and not cfg.ids and cfg.sample is None
    questions = list(itertools.islice(read, cfg.limit) if streams else read)
    if not questions:
        raise DataError(f"dataset '{cfg.name}': {path} holds no questions")
    blank = next((i for i, q in enumerate(questions) if not q.id.strip() or not q.text.strip()), None)
    if blank is not None:  # formats with ids or texts of their own; kgx's format says the line
        raise DataError(
            f"{path}: question {blank + 1} has an empty {'id' if not questions[blank].id.strip() else 'text'}"
        )
    duplicates = [qid for qid, n in Counter(q.id for q in questions).items() if n > 1]
    if duplicates:
        raise DataError(f"{path}: question id '{duplicates[0]}' appears more than once")
    selected = select(questions, cfg)
    if not selected:
        raise DataError(
            f"dataset '{cfg.name}': the selection {_selection(cfg)} leaves none of its {len(questions)} questions"
        )
    warn_no_gold(cfg.name, path, selected)
    return selected


def warn_no_gold(name: str, path: Path, questions: list[Question]) -> None:
    """Say how many ``questions`` have no gold answer a prediction could match (empty or null
    answers in the file). They stay: dropping them would change the denominator of every figure
    against the papers' tables, which count every question; they score 0 on every metric, and a
    run's ``no_gold`` counts them, so a table can show why its figures sit lower."""
    without = [q.id for q in questions if not scorable(q.answers)]
    if without:
        shown = ", ".join(without[:5]) + (f" and {len(without) - 5} more" if len(without) > 5 else "")
        print(
            f"kgx: warning: dataset '{name}' ({path}): {len(without)} of {len(questions)} questions have no gold "
            f"answer ({shown}); they stay in every figure's denominator and score 0 (the run's no_gold counts them)",
            file=sys.stderr,
        )


def dataset_file(cfg: DatasetConfig) -> Path:
    """The question file: ``cfg.path`` resolved, or the bundled demo questions, which only kgx's
    own format can stand in for: any other loader without a path is told to name its file."""
    if cfg.path:
        return locate(cfg, cfg.path, folder=cfg.loader in FORMATS and FORMATS[cfg.loader].folders)
    if cfg.loader != "jsonl":
        raise DataError(f"dataset '{cfg.name}': no question file; set dataset.path=FILE ({cfg.source})")
    return BUNDLED


def select(questions: list[Question], cfg: DatasetConfig) -> list[Question]:
    """``ids``, then ``sample``, then ``limit``; each keeps file order, so that a subset reads
    like the dataset it came from."""
    if cfg.ids:
        questions = _by_ids(questions, cfg.ids, cfg.name)
    if cfg.sample is not None:
        questions = _sample(questions, cfg.sample, cfg.seed, cfg.name)
    return questions if cfg.limit is None else questions[: cfg.limit]


def _selection(cfg: DatasetConfig) -> str:
    """The sizes of the config's selection, as written on the command line. ``ids`` is left out:
    known ids always keep a question, so only a sample or limit of 0 can leave none."""
    return " ".join(
        f"dataset.{key}={value}" for key, value in (("sample", cfg.sample), ("limit", cfg.limit)) if value is not None
    )


def _by_ids(questions: list[Question], ids: list[str], name: str) -> list[Question]:
    wanted = set(ids)
    known = {q.id for q in questions}
    unknown = [qid for qid in dict.fromkeys(ids) if qid not in known]
    if unknown:
        shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
        raise DataError(f"dataset '{name}': dataset.ids not in the dataset: {shown}")
    return [q for q in questions if q.id in wanted]


def _sample(questions: list[Question], size: int, seed: int, name: str) -> list[Question]:
    """A seeded draw: the same seed over the same questions gives the same subset."""
    if size > len(questions):
        raise DataError(
            f"dataset '{name}': dataset.sample={size} but only {len(questions)} questions are left to draw from"
        )
    picked = sorted(random.Random(seed).sample(range(len(questions)), size))
    return [questions[i] for i in picked]


def dataset_names() -> list[str]:
    """Every dataset option of ``conf/dataset``."""
    return sorted(p.stem for p in (CONF_DIR / "dataset").glob("*.yaml"))


def dataset_config(name: str, whole: bool = False) -> DatasetConfig:
    """The ``DatasetConfig`` of ``conf/dataset/<name>.yaml``, checked against the schema as
    Hydra checks it in a run. ``whole`` drops the config's subset (ids, sample, limit), as the
    listing and the scorer need: the demo config's ``limit`` is the main job's budget, not the set."""
    path = CONF_DIR / "dataset" / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"dataset '{name}': no conf/dataset/{name}.yaml; options: {dataset_names()}")
    try:
        cfg = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(DatasetConfig), OmegaConf.load(path)))
    except Exception as exc:  # omegaconf's validation errors, and ConfigError from the range checks
        raise ConfigError(f"{path}: {exc}") from exc
    return replace(cfg, ids=[], sample=None, limit=None) if whole else cfg
