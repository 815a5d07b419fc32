"""Entities shown to the model without a name: counted per question by the
metered KG, pooled per run into ``unnamed_entity_share``, logged to MLflow, shown in the run's
report, and read back from logs written before the count existed."""

from __future__ import annotations

import json

import pytest

from kgx.core.metrics import QUESTION_METRICS
from kgx.core.trace import Trace
from kgx.core.usage import KGUsage
from kgx.kg import EmbeddedKG, build_store
from kgx.kg.metered import MeteredKG
from kgx.report import html
from kgx.results.figures import summarize
from kgx.results.record import Record
from kgx.run.execute import execute
from kgx.run.spec import to_run_spec
from tests.helpers import mlflow_run

NS = "http://rdf.freebase.com/ns/"
NAME = f"<{NS}type.object.name>"
# Australia holds a CVT (unnamed, described by its attributes), a node with no name and nothing to
# describe it (shown as a bare id), and two named neighbours.
TRIPLES = f"""
<{NS}m.au> {NAME} "Australia"@en .
<{NS}m.au> <{NS}government.governmental_jurisdiction.governing_officials> <{NS}m.pos> .
<{NS}m.pos> <{NS}government.government_position_held.office_holder> <{NS}m.pm> .
<{NS}m.pos> <{NS}government.government_position_held.from> "1949-12-19" .
<{NS}m.pm> {NAME} "Robert Menzies"@en .
<{NS}m.au> <{NS}location.location.contains> <{NS}m.syd> .
<{NS}m.au> <{NS}location.location.contains> <{NS}g.11bare> .
<{NS}m.syd> {NAME} "Sydney"@en .
"""


@pytest.fixture(scope="module")
def nt(tmp_path_factory):
    path = tmp_path_factory.mktemp("unnamed") / "kg.nt"
    path.write_text(TRIPLES)
    return path


@pytest.fixture(scope="module")
def kg(nt) -> EmbeddedKG:
    return EmbeddedKG(build_store([nt], "nt", nt.parent / "store"))


def test_one_question_counts_distinct_entities_shown_and_those_without_a_name(kg):
    metered = MeteredKG(kg, Trace())
    labels = metered.names(["m.pos", "g.11bare", "m.syd", '"1949-12-19"'])
    assert labels["g.11bare"] == "g.11bare" and labels["m.pos"].startswith("(from: 1949-12-19;")
    metered.names(["m.syd", "m.pm", "g.11bare"])  # shown again: counted once
    assert (metered.usage.entities, metered.usage.unnamed, metered.usage.bare) == (4, 2, 1)  # literals are no entity
    assert metered.usage.unnamed_share == 0.5 and KGUsage().unnamed_share != KGUsage().unnamed_share  # NaN


def test_a_kg_that_only_names_counts_an_entity_labelled_by_its_id_as_unnamed(kg):
    class NamesOnly:
        def names(self, ids):
            return kg.names(ids)

    metered = MeteredKG(NamesOnly(), Trace())  # type: ignore[arg-type]
    metered.names(["m.pos", "g.11bare", "m.syd"])
    assert (metered.usage.entities, metered.usage.unnamed, metered.usage.bare) == (3, 1, 1)


def _record(qid: str, usage: KGUsage) -> Record:
    return Record.from_dict(
        {
            "id": qid,
            "status": "ok",
            "prediction": {"answer": ""},
            "kg": usage.to_dict(),
            "scores": dict.fromkeys(QUESTION_METRICS, 0.0),
        }
    )


def test_a_run_pools_the_share_over_its_questions():
    records = [
        _record("a", KGUsage(entities=4, unnamed=2, bare=1)),
        _record("b", KGUsage(entities=6, unnamed=1)),
        _record("c", KGUsage()),
    ]
    figures = summarize(records, wall_s=1.0)
    assert figures["unnamed_entity_share"] == pytest.approx(30.0)  # 3 of 10
    assert figures["bare_entity_share"] == pytest.approx(10.0) and figures["entities_shown_per_q"] == pytest.approx(
        10 / 3
    )
    assert "unnamed_entity_share" not in summarize([_record("d", KGUsage())], 1.0)  # no entity shown: no figure


def test_a_log_line_written_before_the_count_reads_with_none_shown():
    old = {
        "id": "q",
        "status": "ok",
        "prediction": {"answer": ""},
        "kg": {"queries": 3, "latency_s": 0.1, "errors": 0, "capped": 0},
    }
    record = Record.from_dict(old)
    assert (record.kg.queries, record.kg.entities, record.kg.unnamed) == (3, 0, 0)
    assert (
        Record.from_dict(json.loads(json.dumps(_record("n", KGUsage(entities=2, unnamed=1)).to_dict()))).kg.unnamed == 1
    )


def test_a_run_logs_the_share_to_mlflow_and_its_report(compose_cfg, in_tmp, nt):
    questions = in_tmp / "q.jsonl"
    questions.write_text(
        json.dumps(
            {
                "id": "au",
                "question": "Which cities does Australia contain?",
                "answers": [["Sydney"]],
                "topic_entities": {"m.au": "Australia"},
            }
        )
        + "\n"
    )
    spec = to_run_spec(
        compose_cfg(
            "llm=scripted",
            "run.progress=false",
            "method=tog",
            "dataset=custom",
            f"dataset.path={questions}",
            "kg=demo",
            "kg.name=unnamed",
            f"kg.sources=[{nt}]",
        )
    )
    outcome = execute(spec, in_tmp)
    assert outcome.status == "FINISHED"
    (record,) = outcome.records
    kg = record.kg
    # ToG labels Australia's neighbours (the CVT, the bare node, Sydney), then Menzies through the CVT.
    assert (kg.entities, kg.unnamed, kg.bare) == (4, 2, 1)
    share = 50.0
    assert outcome.summary["unnamed_entity_share"] == share and outcome.summary["bare_entity_share"] == 25.0
    assert mlflow_run(in_tmp, outcome.run_id).data.metrics["unnamed_entity_share"] == pytest.approx(share)
    line = json.loads((outcome.out_dir / "predictions.jsonl").read_text().splitlines()[-1])
    assert (line["kg"]["entities"], line["kg"]["unnamed"]) == (kg.entities, kg.unnamed)
    import polars as pl

    table = pl.read_parquet(outcome.out_dir / "predictions.parquet")
    assert table.select("id", "entities_shown", "unnamed_shown").rows() == [("au", 4, 2)]
    page = html.questions([html.RunQuestions(outcome.run_id, "tog", outcome.records, None)], "hits1")
    assert f'<td class="num">{share:.1f}% of {kg.entities}</td>' in page
    assert "20 KG calls, 4 entities shown, 2 without a name (50%)" in page
