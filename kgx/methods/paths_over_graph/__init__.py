"""Paths-over-Graph (Tan et al., "Paths-over-Graph: Knowledge Graph Empowered Large Language Model
Reasoning", WWW 2025; released code SteveTANTAN/PoG, PoG_single.py and PoG_multi.py). Not kgx's
``pog``, which is Plan-on-Graph.

Per question:
  0. ``question_analysis`` (initialization): one call writes the indicator, the chain of reasoning
     from the topic entities to the answer, and split questions. The indicator's length predicts
     the depth (D_predict, its relations), its order orders the topic entities, and the entities it
     names that the question subgraph holds join them as waypoints.
Then three exploration phases (``phases.py``), each pruning its candidate paths
to ``width`` (``pruning.py``: fuzzy, branch-reduced and precise selection) and
ending in the same check: ``path_summary`` (with ``method.summary``) summarises the paths into
chains of reasoning, and ``reasoning`` says whether paths and summary, with the model's own
knowledge, suffice, and if so answers:
  1. topic entity paths: for D from D_predict (ceil(D_predict / 2) with several topic entities) to
     D_max, the question subgraph grown to D hops and the paths from the topic entity of length D
     (up to D at the first D), or the paths joining the topic entities in the indicator's order,
     each pair through an entity within D hops of both; the entities they pass through are the
     reduced graph the later phases explore (graph reduction);
  2. LLM supplement: one ``supplement`` call predicts answers and chains of reasoning; a predicted
     answer the explored graph holds by name is joined to the topic entities;
  3. node expansion: at most D_max rounds, each expanding the entities on the paths so far by one
     hop inside the explored graph and adding the best edges to the paths.
When no check suffices, ``answer`` answers from every path kept and the model's own knowledge
(status ``fallback`` when no path was found; likewise without any topic entity).

Call bound, retries of invalid output not counted: with P the calls of one pruning
(``pruning.calls``: 2 branch-reduced and 3 precise at the defaults), P' those of
node expansion's selection (3: precise alone, after fuzzy selection), C = 2 the check (1 without
summary), 1 the pruning of the <= 2W paths phases 1 and 2 kept, and 1 a round's re-selection when the
expansion paths outgrow ``max_expansions``:

    1 + D(P + C) + (1 + P + C) + 1 + D(P' + 1 + C) + 1 = 50 at the defaults (D = W = 3).

Where the released code departs from the paper or kgx from it (each in docs/methods/paths_over_graph.md):
the released multi-entity run reads the gold answers twice (it skips a question whose subgraph lacks
them and stops collecting meeting entities once they are all in); kgx never reads the gold. Its LLM
selections loop until few enough paths are left and re-ask a failed reply without limit; kgx asks a
bounded number of times and keeps the fuzzy ranking's best when nothing is chosen. Topic entities that
do not connect within D_max hops are each explored alone (the released run skips such questions). Literal
values are path ends (the released code keeps only ``m.`` entities). The answer of a sufficient
check is its own (the released code asks once more with every path).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgx.core.config import ConfigError, MethodConfig, check_choice, check_temperature
from kgx.core.types import Horizon, Prediction, Question
from kgx.methods.base import Context, register
from kgx.methods.paths_over_graph import pruning as pruning
from kgx.methods.paths_over_graph.phases import begin, expansion, no_topic, supplement, topic_paths
from kgx.methods.samplers import check_available

STAGES = (
    "question_analysis",
    "branch_selection",
    "path_selection",
    "path_summary",
    "reasoning",
    "supplement",
    "answer",
)


@dataclass
class PathsOverGraphConfig(MethodConfig):
    """Paths-over-Graph: the paper's D_max = W_max = 3 and temperatures, the released run's
    pruning widths (PoG_multi.py, beam search ``123``, ``sum``, all relations)."""

    name: str = "paths_over_graph"
    depth: int = 3  # D_max: the deepest exploration, in hops from a topic entity (paper: 3)
    width: int = 3  # W_max: paths kept by each pruning (paper: 3)
    fuzzy_width: int = 80  # paths fuzzy selection keeps (released Beam_search_step1: 80)
    branch_width: int = 20  # branch-reduced selection stops at this many paths (released step 2: 20)
    batch: int = 40  # candidate paths per selection call, more than width (released: 40)
    selection: str = "full"  # full | precise | branch | fuzzy: the released beam search 123 | 13 | 12 | 1
    sampler: str = "bm25"  # bm25 | sbert: fuzzy selection's ranker (the paper's SBERT: sbert, the [sbert] extra)
    summary: bool = True  # path summarising before each check (released "sum"; false: "unsum")
    edges: str = "all"  # all: every relation between two entities (PoG) | one: one relation (PoG-E)
    predictions: int = 3  # answers (and chains) the supplement call predicts (released: three)
    max_expansions: int = 10  # node expansion paths kept before another selection (released: 10)
    max_shown: int = 20  # entities shown per set of a path (released: 20)
    temperature_explore: float = 0.4  # analysis, selections, summary, supplement (paper App. B: 0.4)
    temperature_reason: float = 0.0  # reasoning and answer (paper App. B: 0)
    remove_unnecessary_rel: bool = True  # drop type.object.*, common.*, freebase.*, sameAs relations
    max_relations: int = 100  # KG cap on relations per entity and direction; cuts are recorded
    max_neighbors: int = 100  # KG cap per (entity, relation); cuts are recorded
    max_frontier: int = 500  # entities expanded per hop of the subgraph; cuts are noted
    max_routes: int = 1000  # paths kept per length from an entity, and joining paths; cuts are noted
    exemplars: bool = True  # one worked example per stage, as the released prompts carry (False: zero-shot)
    max_answers: int = 5

    def horizon(self) -> Horizon:
        """Reachability's bound: every path and expansion stays within D_max hops of a topic entity."""
        return Horizon(self.depth)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(
            1,
            "depth",
            "width",
            "fuzzy_width",
            "branch_width",
            "batch",
            "predictions",
            "max_expansions",
            "max_shown",
            "max_relations",
            "max_neighbors",
            "max_frontier",
            "max_routes",
            "max_answers",
        )
        check_choice("method.selection", self.selection, ("full", "precise", "branch", "fuzzy"))
        check_choice("method.sampler", self.sampler, ("bm25", "sbert"))
        check_choice("method.edges", self.edges, ("all", "one"))
        check_temperature("method.temperature_explore", self.temperature_explore)
        check_temperature("method.temperature_reason", self.temperature_reason)
        for wider, narrower in (("fuzzy_width", "branch_width"), ("branch_width", "width")):
            big, small = getattr(self, wider), getattr(self, narrower)
            if big < small:
                raise ConfigError(f"method.{wider}={big}: must be at least method.{narrower}={small}")
        if self.batch <= self.width:
            raise ConfigError(f"method.batch={self.batch}: must be more than method.width={self.width}")


def call_bound(params: PathsOverGraphConfig) -> int:
    """LLM calls per question, at most (the module docstring): the analysis; per depth a pruning and
    a check; the supplement call, its pruning and check; the pruning of what phases 1 and 2 kept;
    per expansion round a pruning, a re-selection and a check; the answer."""
    p = params
    prune = pruning.calls(p, p.fuzzy_width)
    check = 1 + p.summary
    grown = (p.max_expansions + 1) * p.width  # expansion paths after a round's edges are joined on
    rounds = p.depth * (pruning.narrow_calls(p, p.fuzzy_width) + pruning.narrow_calls(p, grown) + check)
    return 1 + p.depth * (prune + check) + (1 + prune + check) + pruning.calls(p, 2 * p.width) + rounds + 1


def check(params: PathsOverGraphConfig) -> None:
    """sbert fuzzy selection needs the [sbert] extra: missing, the run fails before any question."""
    check_available(params.sampler)


@register("paths_over_graph", config=PathsOverGraphConfig, stages=STAGES, check=check)
def answer(question: Question, ctx: Context) -> Prediction:
    if not question.topic_entities:
        return no_topic(question, ctx)
    search = begin(question, ctx)
    found = topic_paths(search) or supplement(search) or expansion(search)
    return search.finish(found or search.conclude())
