"""A question's gold path: the relations and entities between its topic entities and its answers.

``llm=oracle`` (:mod:`kgx.llm.oracle`) is driven by it, to give each method's ceiling: at every
choice it takes what lies on a gold path, in the path's order. Where the dataset spells the path
out, its relation chain is the gold (MetaQA's question type, PathQuestion's and WC2014's gold
paths), because the KG may also join topic and answer by paths the question does not ask about;
elsewhere each path reachability found in the KG (:mod:`kgx.diagnose.reach`) is a chain of its own
(a shortest path, not necessarily the one the question's wording walks). The entities come from
those KG paths (the ones that follow the chain, where there is one) and from the dataset's own
path, each with its depth: the hop at which a gold path first reaches it (topic entities 0), which
tells the oracle where on the chain a prompt stands. A dataset's path that returns to an entity it
passed is taken without the round trip (:func:`without_round_trips`).

WebQSP's parses carry an ``InferentialChain``, but the loader (``kgx.datasets.freebase_qa``)
does not keep it in meta: WebQSP questions take their relations from the reach paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from kgx.core.reachability import Reach
from kgx.core.types import Question
from kgx.diagnose.chain_walk import on_chain
from kgx.kg.name_level import relation_id

Step = tuple[str, str]  # (relation id, "out" | "in"), walked from the topic side

# MetaQA's question types name entity kinds (``actor_to_movie_to_director``); each kind but the
# movie is the object of one movie relation (kgx.kg.name_level.METAQA_RELATIONS names its KG id).
METAQA_KINDS = {
    "actor": "starred_actors",
    "director": "directed_by",
    "writer": "written_by",
    "genre": "has_genre",
    "language": "in_language",
    "year": "release_year",
    "tag": "has_tags",
    "tags": "has_tags",
    "imdbrating": "has_imdb_rating",
    "imdbvotes": "has_imdb_votes",
}
# IRN's KBs (WC2014) write each edge twice, ``r`` and ``r_inverse``; a KG built with
# ``kg.drop_inverse`` keeps only ``r``, so a gold ``r_inverse`` step is ``r`` walked backwards.
INVERSE = "_inverse"


@dataclass(frozen=True)
class GoldHint:
    """What the oracle backbone knows of one question: the gold answers (alias lists), the
    relations of its gold paths with the direction they are walked from the topic side, the
    entities on them (topic excluded), by name and by id; the topic entities' names, which
    are no candidate to choose but what a clue of the question should name (CGPE); the gold
    chains in the order they are walked (none given: ``relations`` is the one chain); the
    depth of each entity name and id (topics 0, the chain's first step reaches depth 1); whether
    a gold answer is within the method's depth (``reachable``, None when unknown); the names of the
    topic entities' and gold answers' ids (``named``: a method shows a node the KG returned by the
    name it knows, the topic's from the dataset); and, filled in
    per request (:mod:`kgx.llm.oracle_evidence`), the KG texts the method retrieved that state a
    gold answer (``shown``) or hold one inside a longer name (``holding``)."""

    answers: list[list[str]]
    relations: list[Step]
    entities: list[str]
    topics: list[str] = field(default_factory=list)
    chains: list[list[Step]] = field(default_factory=list)
    depths: dict[str, int] = field(default_factory=dict)
    reachable: Optional[bool] = None
    named: dict[str, str] = field(default_factory=dict)
    shown: list[str] = field(default_factory=list)
    holding: list[str] = field(default_factory=list)

    def walks(self) -> list[list[Step]]:
        """The gold chains, each in its order."""
        return self.chains or [list(self.relations)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "answers": [list(a) for a in self.answers],
            "relations": [list(r) for r in self.relations],
            "entities": list(self.entities),
            "topics": list(self.topics),
            "chains": [[list(s) for s in c] for c in self.chains],
            "depths": dict(self.depths),
            "reachable": self.reachable,
            "named": dict(self.named),
            "shown": list(self.shown),
            "holding": list(self.holding),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GoldHint":
        return cls(
            [list(a) for a in data["answers"]],
            [(r, d) for r, d in data["relations"]],
            list(data["entities"]),
            list(data.get("topics", [])),
            [[(r, d) for r, d in c] for c in data.get("chains", [])],
            dict(data.get("depths", {})),
            data.get("reachable"),
            dict(data.get("named", {})),
            list(data.get("shown", [])),
            list(data.get("holding", [])),
        )


def fold(relation: str, direction: str) -> Step:
    """``r_inverse`` walked one way is ``r`` walked the other: one form for both KG builds."""
    if relation.endswith(INVERSE) and relation != INVERSE:
        return relation[: -len(INVERSE)], "in" if direction == "out" else "out"
    return relation, direction


def _metaqa(qtype: str, kg_format: str) -> Optional[list[Step]]:
    """``actor_to_movie_to_director``: from an actor back along the starring relation to the
    movie ("in"), then forwards along directed_by ("out")."""
    kinds = qtype.split("_to_")
    steps: list[Step] = []
    for here, there in zip(kinds, kinds[1:]):
        if here == "movie" and there in METAQA_KINDS:
            steps.append((relation_id(kg_format, METAQA_KINDS[there]), "out"))
        elif there == "movie" and here in METAQA_KINDS:
            steps.append((relation_id(kg_format, METAQA_KINDS[here]), "in"))
        else:
            return None
    return steps


def _paths(question: Question) -> list[list[str]]:
    """The dataset's gold paths ``[subject, r1, e1, ..., answer]`` (PathQuestion, WC2014), each
    without its round trips (:func:`without_round_trips`)."""
    meta = question.meta
    paths = [meta["path"]] if "path" in meta else list(meta.get("paths", []))
    return [without_round_trips(list(p)) for p in paths]


def without_round_trips(path: list[str]) -> list[str]:
    """A gold path ``[subject, r1, e1, ..., answer]`` that returns to an entity it passed, cut from
    that entity's first visit to its last: PathQuestion's "the gender of daughter of X 's parent"
    walks X -parents-> P -children-> X -gender-> female, which is X -gender-> female. The answer
    and the facts on the way are the same; the round trip adds hops and asks a method to walk back
    to where it came from, which StructGPT's and PoG's released code never do. So the oracle,
    standing at X, takes X's gender. No cut leaves a path without a step: one whose answer is its
    subject keeps one way back to it (the oracle needs a step to lead with)."""
    out, i = list(path), 0
    while i < len(out):
        last = max(k for k in range(i, len(out), 2) if out[k] == out[i])
        if last > i and len(out) - (last - i) > 1:
            out = out[:i] + out[last:]
        i += 2
    return out


def chains(question: Question, kg_format: str) -> Optional[list[list[Step]]]:
    """The dataset's gold relation chains, one per gold path, in ``kg_format``'s relation ids;
    None when the dataset gives none or its relations have no id in that KG."""
    try:
        if "qtype" in question.meta:
            found = _metaqa(question.meta["qtype"], kg_format)
            return None if found is None else [found]
        paths = _paths(question)
        if not paths:
            return None
        return [[fold(relation_id(kg_format, r), "out") for r in path[1::2]] for path in paths]
    except ValueError:  # a relation the KG's format does not name (e.g. MetaQA's on a Freebase KG)
        return None


def chain(question: Question, kg_format: str) -> Optional[list[Step]]:
    """The dataset's gold relation chain (a conjunctive question's chains one after the
    other), or None."""
    found = chains(question, kg_format)
    return None if found is None else [step for c in found for step in c]


def depths(question: Question, names: dict[str, str], paths: list) -> dict[str, int]:
    """Each gold entity's name and id with the first hop at which a gold path reaches it
    (topic entities 0): the KG paths' and the dataset's own."""
    found: dict[str, int] = {}

    def meet(key: str, depth: int) -> None:
        found[key] = min(depth, found.get(key, depth))

    for topic_id, name in question.topic_entities.items():
        meet(topic_id, 0)
        meet(name, 0)
    for path in paths:
        for depth, step in enumerate(path, 1):
            meet(step.target, depth)
            if step.target in names:
                meet(names[step.target], depth)
    for path in _paths(question):
        for depth, entity in enumerate(path[::2]):
            meet(entity, depth)
    return found


def gold_hint(question: Question, reach: Optional[Reach], kg_format: str, kg: Any = None) -> GoldHint:
    """The oracle's hint: chains from the dataset when it gives them, else the reach paths';
    entities from the reach paths (those following the chain, where some do), from the dataset's
    own gold path and, given the ``kg``, from the dataset's chains walked in it, with their depths."""
    gold_chains = chains(question, kg_format)
    paths = list(reach.paths) if reach is not None else []
    known = dict(reach.names) if reach is not None else {}
    if gold_chains:
        paths = [p for p in paths if [fold(s.relation, s.direction) for s in p] in gold_chains] or paths
    else:
        others = topic_paths(question, reach, kg)
        if others:
            known.update(kg.names(sorted({s.target for p in others for s in p} - set(known))))
        paths += others
        walked = [[fold(s.relation, s.direction) for s in p] for p in paths]
        gold_chains = [list(c) for c in dict.fromkeys(tuple(c) for c in walked)]
    relations = list(dict.fromkeys(step for c in gold_chains for step in c))
    subjects = [path[0] for path in _paths(question)]
    topics = set(question.topic_entities) | set(subjects)
    ids = [s.target for p in paths for s in p if s.target not in topics]
    names = [known[i] for i in ids if i in known]
    named = [e for path in _paths(question) for e in path[2::2] if e not in topics]
    found = depths(question, known, paths)
    walked = walked_depths(question, reach, kg, chains(question, kg_format) or [])
    for key, depth in walked.items():
        found.setdefault(key, depth)
    return GoldHint(
        question.answers,
        relations,
        list(dict.fromkeys([*names, *named, *ids, *(k for k in walked if k not in topics)])),
        list(dict.fromkeys([*question.topic_entities.values(), *subjects])),
        gold_chains,
        found,
        getattr(reach, "reachable", None),
        {**{i: known[i] for i in getattr(reach, "gold_ids", []) if i in known}, **question.topic_entities},
    )


def topic_paths(question: Question, reach: Optional[Reach], kg: Any) -> list:
    """Shortest gold paths, within the searched depth, from each topic entity that no reach path
    starts from: reachability keeps the shortest paths from any topic, and a conjunctive
    question's nearest topic need not be the one a method starts from (CGPE starts from the
    topics its clues name, in the question's order). Nothing without a KG or a reachable gold."""
    if kg is None or reach is None or not reach.reachable or len(question.topic_entities) < 2:
        return []
    from kgx.diagnose.reach import MAX_OTHER_FRONTIER, other_topic_search

    starts = {p[0].source for p in reach.paths if p}
    out: list = []
    for topic in question.topic_entities:
        if topic not in starts:
            out += other_topic_search(kg, question, topic, reach.depth, MAX_OTHER_FRONTIER).paths
    return out


def walked_depths(question: Question, reach: Optional[Reach], kg: Any, gold_chains: list[list[Step]]) -> dict:
    """The middle nodes of the dataset's chains walked in ``kg`` toward a gold answer (ids and
    names) with their depths; nothing without a KG, reach or chain."""
    if kg is None or reach is None or not reach.gold_ids:
        return {}
    found: dict[str, int] = {}
    for steps in gold_chains:
        layers = on_chain(kg, list(question.topic_entities), steps, set(reach.gold_ids))
        for depth, layer in enumerate(layers[1:-1], 1):
            for node in layer:
                found.setdefault(node, depth)
    names = kg.names(list(found)) if found else {}
    return {**found, **{names[n]: d for n, d in found.items() if n in names}}


def limit(question: Question, reach: Reach, kg: Any, kg_format: str) -> dict[str, str]:
    """Whose limit a ``not_retrieved`` question is: the method's, when the KG walks a gold path to
    a gold answer (the reach paths are such paths; where the dataset gives a chain, the chain
    itself is walked), else the KG's (a gap: the dataset's chain reaches no gold answer in this KG,
    the answer is reachable only by another path, which the oracle does not lead to)."""
    found = chains(question, kg_format)
    if not found:
        return {"limit": "method", "limit_why": "a method limit: the KG holds a gold path"}
    gold = set(reach.gold_ids)
    if any(on_chain(kg, list(question.topic_entities), c, gold)[0] for c in found):
        return {"limit": "method", "limit_why": "a method limit: the KG walks the gold chain to a gold answer"}
    return {"limit": "kg", "limit_why": "a KG gap: the gold chain reaches no gold answer in the KG"}
