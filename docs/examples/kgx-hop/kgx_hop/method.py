"""``method=one_hop``: the model chooses one relation of the question's topic entity; the answers
are the entities that relation leads to. A baseline as small as a KG method gets."""

from __future__ import annotations

from dataclasses import dataclass

from kgx.core.config import MethodConfig
from kgx.core.types import Horizon, Prediction, Question
from kgx.methods import Context, register
from kgx.methods.answers import braces
from kgx.methods.kit import choose, few_shot


@dataclass
class OneHopConfig(MethodConfig):
    name: str = "one_hop"
    max_answers: int = 5  # answers kept, in the KG's order

    def horizon(self) -> Horizon:
        return Horizon(depth=1)


@register("one_hop", config=OneHopConfig, stages=("relation",))
def answer(question: Question, ctx: Context) -> Prediction:
    assert ctx.kg is not None  # a KG method: the run gives it the KG
    found: list[str] = []
    for topic, name in question.topic_entities.items():
        relations = ctx.kg.relations(topic, "out")
        if not relations:
            continue
        prompt = few_shot(
            "Choose the relation of the entity that answers the question.",
            [],
            f"Question: {question.text}\nEntity: {name}\nRelations: {', '.join(relations)}",
        )
        chosen = choose(ctx, "relation", prompt, {"relations": relations}, high=1).get("relations", [])
        for relation in chosen:
            found += ctx.kg.neighbors(topic, relation, "out")
    names = ctx.kg.names(found[: ctx.params.max_answers])
    answers = [names.get(e, e) for e in found[: ctx.params.max_answers]]
    return Prediction(answer=braces(answers), answers=answers, status="ok" if answers else "fallback")
