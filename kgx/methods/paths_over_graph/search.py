"""The state of one Paths-over-Graph question and the check every exploration phase ends in.

:class:`Search` holds what the question analysis gave, the question subgraph, the paths each phase
kept, and how they are shown: in prompts, as evidence (the triples they walk) and as the
explanation graph. :meth:`Search.check` is the paper's path summarising and question answering
(Sec. 4.4): ``path_summary`` writes chains of reasoning from the paths, ``reasoning`` says whether
paths and summary suffice and answers if so. Kept apart from the phases (``phases.py``)
so that those read as the paper's exploration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kgx.core.types import Prediction, Question
from kgx.methods import kit
from kgx.methods.answers import conclusion, final_answer, sufficiency_schema
from kgx.methods.base import Context
from kgx.methods.cot import to_prediction
from kgx.methods.paths_over_graph import prompts as prompts
from kgx.methods.paths_over_graph.pruning import Pruner
from kgx.methods.paths_over_graph.routes import Route, Subgraph

PHASES = {1: "topic entity paths", 2: "LLM supplement paths", 3: "node expansion"}


@dataclass
class Analysis:
    """The question analysis: the indicator (entity, relation, entity, ...), the split questions
    and the depth the indicator predicts (its relations)."""

    indicator: list[str]
    split: list[str]
    depth: int


@dataclass
class Search:
    """One question's exploration: the subgraph, the topic entities in the indicator's order
    (``anchors``), the paths each phase kept and, for several topic entities, the reduced graph
    (``within``) the later phases stay in."""

    question: Question
    analysis: Analysis
    ctx: Context
    sub: Subgraph
    anchors: list[str]
    pruner: Pruner
    found: list[Route] = field(default_factory=list)  # phase 1: topic entity paths
    supplemented: list[Route] = field(default_factory=list)  # phase 2: LLM supplement paths
    expanded: list[Route] = field(default_factory=list)  # phase 3: node expansion paths
    within: Optional[frozenset[str]] = None
    summaries: list[str] = field(default_factory=list)
    phase: int = 0  # the phase whose check sufficed (0: none)
    depth: int = 0  # the last depth of phase 1

    @classmethod
    def start(cls, question: Question, analysis: Analysis, ctx: Context, anchors: list[str]) -> "Search":
        sub = Subgraph(ctx, dict(question.topic_entities))
        head = prompts.context(
            question.text, list(question.topic_entities.values()), analysis.indicator, analysis.split
        )
        query = " ".join([question.text, *analysis.indicator])
        return cls(question, analysis, ctx, sub, anchors, Pruner(ctx, question.text, head, query, sub.names))

    @property
    def head(self) -> str:
        return self.pruner.head

    def paths(self) -> list[Route]:
        """Every path kept so far, each once."""
        return list(dict.fromkeys([*self.found, *self.supplemented, *self.expanded]))

    def texts(self, paths: list[Route]) -> list[str]:
        return [self.pruner.text(r) for r in paths]

    def evidence(self, paths: list[Route]) -> list[str]:
        """The triples the paths walk, as ``answer_recall`` reads them."""
        names, shown = self.sub.names, self.ctx.params.max_shown
        return list(
            dict.fromkeys(
                kit.triple_text(names.get(s, s), r, names.get(o, o)) for p in paths for s, r, o in p.triples(shown)
            )
        )

    # ----------------------------------------------------------------------- the check

    def check(self, paths: list[Route], phase: int, where: str) -> Optional[Prediction]:
        """Path summarising, then question answering: a prediction when the paths suffice."""
        if not paths:
            return None
        self.summaries = self.summarise(paths)
        prediction = self.reasoning(paths, where)
        if prediction is not None:
            self.phase = phase
        return prediction

    def summarise(self, paths: list[Route]) -> list[str]:
        """``path_summary``: chains of reasoning written from the paths (none with ``summary=false``)."""
        p = self.ctx.params
        if not p.summary:
            return []
        reply = kit.ask(
            self.ctx,
            "path_summary",
            prompts.messages(
                "path_summary", prompts.paths_prompt(self.head, self.texts(paths), [], self.question.text), p.exemplars
            ),
            schema=prompts.summary_schema(p.width),
            temperature=p.temperature_explore,
            fallback={"chains": []},
            note="no summary: the check reads the paths alone",
        )
        chains = [c.strip() for c in reply["chains"] if c.strip()]
        self.ctx.trace.note("path_summary", "summary", chains=chains)
        return chains

    def reasoning(self, paths: list[Route], where: str) -> Optional[Prediction]:
        p = self.ctx.params
        content = prompts.paths_prompt(self.head, self.texts(paths), self.summaries, self.question.text)
        reply = kit.ask(
            self.ctx,
            "reasoning",
            prompts.messages("reasoning", content, p.exemplars),
            schema=sufficiency_schema(p.max_answers),
            temperature=p.temperature_reason,
            note=f"no verdict after {where}; exploring on",
        )
        if reply is None or not reply["sufficient"]:
            return None
        prediction = to_prediction(reply)
        if not prediction.answers:
            self.ctx.trace.note("reasoning", f"'sufficient' without an answer after {where}; exploring on")
            return None
        prediction.answers = prediction.answers[: p.max_answers]
        prediction.answer = conclusion(reply["reasoning"], prediction.answers)
        prediction.evidence, prediction.reason = self.evidence(paths), f"sufficient after {where}"
        return prediction

    def conclude(self) -> Prediction:
        """No check sufficed: ``answer`` from every path kept and the model's own knowledge."""
        p, paths = self.ctx.params, self.paths()
        why = "no phase's paths sufficed"
        reason = (
            f"{why}: answered from the paths"
            if paths
            else f"{why}: no path found, answered from the model's own knowledge"
        )
        content = prompts.paths_prompt(self.head, self.texts(paths), self.summaries, self.question.text)
        return final_answer(
            self.ctx,
            prompts.messages("answer", content, p.exemplars),
            self.evidence(paths),
            reason,
            temperature=p.temperature_reason,
            max_answers=p.max_answers,
        )

    def finish(self, prediction: Prediction) -> Prediction:
        """The paths as the question's picture; phase, depth and subgraph sizes as stats."""
        paths = self.paths()
        side = [
            "Indicator: " + (" - ".join(self.analysis.indicator) or "(none)"),
            f"Predicted depth: {self.analysis.depth}",
            "Summary:",
            *(self.summaries or ["(none)"]),
            f"Outcome: {prediction.reason}.",
        ]
        triples = [t for r in paths for t in r.triples(self.ctx.params.max_shown)]
        depth = {x: self.sub.depth.get(x, 0) for t in triples for x in (t[0], t[2])}
        depth.update({t: 0 for t in self.anchors})
        text = "\n".join(f"Path {i}: {t}" for i, t in enumerate(self.texts(paths), 1))
        graph = kit.picture(
            self.question.text, triples, self.sub.names, depth, self.anchors, prediction.answers, text, side
        )
        self.ctx.trace.explanation = graph.to_dict()
        prediction.stats = {
            "phase": float(self.phase),
            "depth": float(self.depth),
            "predicted_depth": float(self.analysis.depth),
            "subgraph_entities": float(len(self.sub.depth)),
            "reduced_entities": float(len(self.within) if self.within is not None else len(self.sub.depth)),
            "paths": float(len(paths)),
        }
        return prediction
