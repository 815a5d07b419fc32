"""Do the run's questions start from entities its KG holds? Checked once, before any question.

A KG method answers a question whose topic entity its KG lacks from the model's own knowledge
(status ``fallback``, "has no relations in the KG"). A run of such answers still prints figures,
so a dataset on the wrong KG (``dataset=cwq`` on the default demo KG) would look like a result:
``fallback 100.0%`` is easy to miss. So before any question:

* topic entities given by name (IRN files, a JSON-lines list of names) become the ids of the
  entities of that exact name in the KG; a name the KG lacks stops the run, listing near matches;
* on a KG built from names (``kg.format`` tsv, metaqa, pathquestion, custom: the replay KG), a
  topic entity given as a Freebase mid the KG lacks becomes the entity carrying the name the
  dataset gives with it (CWQ's ``{mid: name}``): such a KG ids entities by name, not by mid;
* every topic id must be an entity with an edge in the KG its question sees (under
  ``kg.scope=question``, its own subgraph: ``SparqlKG.for_question``). If one is missing, the run stops
  with the dataset, the KG, a few missing ids, and the fix: the dataset's own KG
  (``dataset.kg``), or ``kg.allow_missing_topics=true``. It goes on with a warning instead when
  the user chose the KG (``kg=`` on the command line or a sweep axis) or it is the dataset's own
  KG: then a missing entity is a property of the data, not a wrong default. Except when the KG
  holds no topic entity of any question: every answer would be a fallback, the model alone under
  the method's name, so the run stops whoever chose the KG, and only
  ``kg.allow_missing_topics=true`` runs it;
* a question file that records hop counts (``meta.hops``) deeper than ``method.depth`` gets a
  warning naming the depth to set.

The prompting baselines (``PROMPT_ONLY``) never read the KG, so their runs skip all of this.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Any, Optional

from kgx.core.config import ConfigError
from kgx.core.types import Question
from kgx.datasets.irn import TOPIC_NAMES
from kgx.kg.entities import missing, named, near
from kgx.kg.name_level import NAME_LEVEL_FORMATS
from kgx.kg.sparql import SparqlKG
from kgx.run.spec import RunSpec

# Methods that answer from the question alone (IO, CoT, self-consistency): sweeps put them on
# every dataset with whatever KG is default, and their results do not depend on it.
PROMPT_ONLY = frozenset({"io", "cot", "sc"})
SHOWN = 5  # missing ids or names named in a message
NEAR = 3  # near matches offered per unknown name
REPLAYED = ("webqsp", "cwq", "grailqa", "simpleqa")  # datasets $KGX_DATA_DIR/replay_kg has a KG for


class NoTopicHeld(ConfigError):
    """The KG holds no topic entity of any question: ``what`` says so, ``ways`` are the ways out
    (a sweep's pre-flight lists the two apart)."""

    def __init__(self, what: str, ways: str):
        super().__init__(f"{what}. Ways out: {ways}")
        self.what, self.ways = what, ways


@dataclass(frozen=True)
class Unknown:
    """A topic entity name the KG does not have, where it was asked, and names it does have."""

    name: str
    question: str
    near: list[str]


def check(spec: RunSpec, questions: list[Question], kg: SparqlKG) -> list[Question]:
    """The questions with their topic names resolved to KG ids; stops the run (ConfigError) on
    topic entities the KG lacks, unless allowed (see the module docstring)."""
    if spec.method.name in PROMPT_ONLY:
        return questions
    allowed = spec.kg.allow_missing_topics
    names = {n for q in questions for n in q.meta.get(TOPIC_NAMES, [])}
    questions, unknown = resolve_names(questions, kg)
    if unknown:
        _unknown_names(spec, unknown, len(names), allowed)
    if spec.kg.data_format in NAME_LEVEL_FORMATS:
        questions = resolve_mids(questions, kg)
    views = _views(questions, kg)
    absent = _absent_topics(views)
    checked = [q for q in questions if q.topic_entities]
    if absent and len(absent) == sum(len(q.topic_entities) for q in checked) and not allowed:
        raise _none_held(spec, len(checked))
    if absent:
        hit = len({q for q, _ in absent})
        own = any(seen.view for seen, _ in views)  # each question sees its own subgraph
        shown = _listed(list(dict.fromkeys(f"{t} ({name})" + (f" in {q}" if own else "") for q, (t, name) in absent)))
        where = "their own subgraphs lack" if own else "the KG does not hold"
        text = (
            f"dataset '{spec.dataset.name}' on kg '{spec.kg.name}': {hit} of {len(questions)} questions start "
            f"from topic entities {where} ({shown}); every KG method answers those from the "
            f"model's own knowledge (status fallback)"
        )
        if allowed or spec.kg.name == spec.dataset.kg or kg_chosen():
            warn(text)
        else:
            raise ConfigError(f"{text}. {_fix(spec)}")
    _check_depth(spec, questions)
    return questions


def _views(questions: list[Question], kg: SparqlKG) -> list[tuple[SparqlKG, list[Question]]]:
    """The questions grouped by the part of the KG each sees (``SparqlKG.for_question``): one
    group for most KGs, one per question for per-question subgraphs (``kg.scope=question``)."""
    groups: dict[str, tuple[SparqlKG, list[Question]]] = {}
    for q in questions:
        seen = kg.for_question(q.id)
        groups.setdefault(seen.view, (seen, []))[1].append(q)
    return list(groups.values())


def _absent_topics(views: list[tuple[SparqlKG, list[Question]]]) -> list[tuple[str, tuple[str, str]]]:
    """(question id, (topic id, name)) of every topic entity missing from the KG its question
    sees, looked up in one batch per view."""
    absent = []
    for seen, group in views:
        gone = set(missing(seen, list({t: None for q in group for t in q.topic_entities})))
        absent += [(q.id, item) for q in group for item in q.topic_entities.items() if item[0] in gone]
    return absent


def resolve_names(questions: list[Question], kg: SparqlKG) -> tuple[list[Question], list[Unknown]]:
    """Questions whose topic entities came by name, now with the ids of the entities so named
    (the first id where a name has several), and the names the KG lacks."""
    wanted = list(dict.fromkeys(n for q in questions for n in q.meta.get(TOPIC_NAMES, [])))
    if not wanted:
        return questions, []
    ids = named(kg, wanted)
    ambiguous = [n for n in wanted if len(ids.get(n, [])) > 1]
    if ambiguous:
        warn(
            f"{len(ambiguous)} topic entity names belong to several KG entities; the first id is used "
            f"({_listed([f'{n} -> {ids[n][0]}' for n in ambiguous])})"
        )
    resolved, unknown = [], {}
    for q in questions:
        names = q.meta.get(TOPIC_NAMES)
        if not names:
            resolved.append(q)
            continue
        for n in names:
            if n not in ids and n not in unknown:
                unknown[n] = Unknown(n, q.id, near(kg, n, NEAR))
        meta = {k: v for k, v in q.meta.items() if k != TOPIC_NAMES}
        topics = {**q.topic_entities, **{ids[n][0]: n for n in names if n in ids}}
        resolved.append(replace(q, topic_entities=topics, meta=meta))
    return resolved, list(unknown.values())


def resolve_mids(questions: list[Question], kg: SparqlKG) -> list[Question]:
    """Questions whose topic ids the KG lacks, with each such id replaced by the (first) entity
    carrying the name the dataset gives it, where one does; the others are left to the check."""
    topics = {t: name for q in questions for t, name in q.topic_entities.items()}
    absent = set(missing(kg, list(topics)))
    ids = named(kg, list(dict.fromkeys(topics[t] for t in absent))) if absent else {}
    if not ids:
        return questions
    moved = {t: ids[name][0] for t, name in topics.items() if t in absent and name in ids}
    print(
        f"kgx: {len(moved)} of {len(absent)} topic entity ids the KG lacks were found by the name the dataset "
        f"gives them ({_listed([f'{t} ({topics[t]}) -> {moved[t]}' for t in moved])})",
        file=sys.stderr,
    )
    return [
        replace(q, topic_entities={moved.get(t, t): name for t, name in q.topic_entities.items()})
        if moved.keys() & q.topic_entities.keys()
        else q
        for q in questions
    ]


def kg_chosen() -> bool:
    """Whether this run's command line (or its sweep axis) set ``kg=``: the user chose the KG."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return False
    return any(o.lstrip("+~").split("=", 1)[0] == "kg" for o in HydraConfig.get().overrides.task)


def warn(text: str) -> None:
    print(f"kgx: warning: {text}", file=sys.stderr)


def _listed(items: list[Any]) -> str:
    more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    return ", ".join(str(i) for i in items[:SHOWN]) + more


def _fix(spec: RunSpec) -> str:
    if spec.dataset.kg and spec.dataset.kg != spec.kg.name:
        return (
            f"Its KG: kg={spec.dataset.kg}. Or kg.allow_missing_topics=true (or kg={spec.kg.name} on the "
            f"command line) to run on this KG anyway"
        )
    return (
        "Choose the KG that holds them (your own KB: kg=custom kg.sources=[FILE.tsv]), or "
        "kg.allow_missing_topics=true to run anyway"
    )


def _none_held(spec: RunSpec, checked: int) -> NoTopicHeld:
    """The stop of a run whose KG holds no topic entity of any of its ``checked`` questions, with
    the ways to a KG that does: the dataset's own, and those for its data (:func:`kg_fix`)."""
    ways = [f"its own KG, kg={spec.dataset.kg}"] if spec.dataset.kg and spec.dataset.kg != spec.kg.name else []
    if spec.dataset.loader in ("rog", "auto"):
        ways.append("kg=subgraph for a file in RoG's parquet schema")
    ways += [kg_fix(spec), "a KG served by python -m kgx.kg serve (kg=sparql kg.endpoint=URL)"]
    return NoTopicHeld(
        f"kg '{spec.kg.name}' holds no topic entity of dataset '{spec.dataset.name}' ({checked} questions "
        f"checked): a KG method would answer every question from the model's own knowledge (status fallback)",
        f"{'; '.join(ways)}; or kg.allow_missing_topics=true to run anyway",
    )


def kg_fix(spec: RunSpec) -> str:
    """Ways to a KG that serves the dataset, the ones a researcher without a Freebase server has too."""
    ways = []
    if spec.kg.backend == "endpoint":
        ways.append(
            f"start the endpoint at {spec.kg.endpoint} (python -m kgx.kg serve --engine virtuoso --db DIR "
            f"--port PORT; docs/operations/virtuoso.md)"
        )
    if spec.dataset.name in ("webqsp", "cwq"):
        ways.append(
            "run WebQSP and CWQ on RoG's per-question subgraphs, no server: dataset=webqsp_rog,cwq_rog kg=subgraph"
        )
    if spec.dataset.name in REPLAYED:
        ways.append("or on the replay KG of released exploration paths (kg=replay: for tests, not accuracy)")
    return "; ".join(ways) or "choose a KG that holds the dataset's topic entities (kg=...)"


def _unknown_names(spec: RunSpec, unknown: list[Unknown], total: int, allowed: bool) -> None:
    """Stop (or, when allowed, warn) naming the unknown names, the questions they came from and
    the names the KG has instead; when the KG knows none of them, the KG is the likelier mistake."""
    shown = [
        f"'{u.name}' (question {u.question}; " + (f"near: {', '.join(u.near)})" if u.near else "no near match)")
        for u in unknown
    ]
    where = f" ({spec.dataset.path})" if spec.dataset.path else ""
    text = (
        f"dataset '{spec.dataset.name}'{where} on kg '{spec.kg.name}': {len(unknown)} of its {total} topic "
        f"entity names name no entity of the KG: {_listed(shown)}"
    )
    if allowed:
        warn(f"{text}; their questions have no topic entity there")
        return
    fix = (
        f"The KG has none of them. {_fix(spec)}"
        if len(unknown) == total
        else "Spell them as the KG names them, or set kg.allow_missing_topics=true to run anyway (those questions "
        "fall back to the model's own knowledge)"
    )
    raise ConfigError(f"{text}. {fix}")


def _check_depth(spec: RunSpec, questions: list[Question]) -> None:
    depth: Optional[int] = getattr(spec.method, "depth", None)
    hops = [h for q in questions if isinstance(h := q.meta.get("hops"), int)]
    if isinstance(depth, int) and hops and max(hops) > depth:
        warn(
            f"questions of dataset '{spec.dataset.name}' reach up to {max(hops)} hops from their topic entities "
            f"(meta hops) but method.depth={depth}: set method.depth={max(hops)} for {spec.method.name} to walk "
            f"that far"
        )
