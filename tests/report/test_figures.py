"""The data of a sweep's figures (kgx.report.figure_points), value by value, and their drawing's size and labels."""

from __future__ import annotations

import struct
from pathlib import Path

import polars as pl
import pytest

from kgx.datasets.kinds import kind_key
from kgx.report.figure_points import (
    Point,
    cost_points,
    label_text,
    paper_points,
    param_points,
    swept_numbers,
    with_front,
)
from kgx.report.paper_cells import Comparison
from kgx.report.paper_published import paper_table
from kgx.track.tracker import rounded, run_title


def runs(*rows: dict) -> pl.DataFrame:
    """Runs as kgx.report.runs loads them, from short dicts: method, llm, dataset, seed, figures."""
    out = []
    for i, row in enumerate(rows):
        params = {f"params.{k}": str(v) for k, v in row.items() if not k.startswith("metrics.")}
        out.append({"run_id": f"r{i}", **params, **{k: v for k, v in row.items() if k.startswith("metrics.")}})
    return pl.from_dicts(out, infer_schema_length=None)


def run(method: str, dataset: str, hits1: float, tokens: float, seed: int = 0, **more: object) -> dict:
    return {
        "method.name": method,
        "llm.name": "gpt4o-mini",
        "dataset.name": dataset,
        "run.seed": seed,
        **more,
        "metrics.hits1": hits1,
        "metrics.total_tokens_per_q": tokens,
        "metrics.cost_usd": 0.0,
    }


def test_the_pareto_front_is_the_points_no_cheaper_point_beats():
    points = [
        Point("a", "io", 100, 40),
        Point("a", "cot", 300, 35),  # dearer than io and worse: off the front
        Point("a", "tog", 2000, 70),
        Point("a", "lmp", 900, 70),  # as good as tog for less: tog is off the front
        Point("b", "tog", 2000, 10),  # its own panel: alone, on the front
    ]
    front = {(p.panel, p.label) for p in with_front(points) if p.front}
    assert front == {("a", "io"), ("a", "lmp"), ("b", "tog")}


def test_cost_points_are_means_over_seeds_labelled_by_method_and_backbone():
    frame = runs(
        run("io", "cwq", 30.0, 100.0, seed=0),
        run("io", "cwq", 40.0, 120.0, seed=1),
        run("tog", "cwq", 60.0, 2000.0),
        run("tog", "webqsp", 70.0, 1500.0),
    )
    points = cost_points(frame, "hits1", "total_tokens_per_q")
    assert [(p.panel, p.label, p.x, p.y, p.runs, p.front) for p in points] == [
        ("cwq", "io, gpt4o-mini", 110.0, 35.0, 2, True),
        ("cwq", "tog, gpt4o-mini", 2000.0, 60.0, 1, True),
        ("webqsp", "tog, gpt4o-mini", 1500.0, 70.0, 1, True),
    ]
    assert cost_points(frame, "hits1", "cost_usd") == []  # nothing cost a dollar: no dollar figure


def test_a_swept_number_labels_points_and_draws_a_line_per_method():
    frame = runs(
        run("tog", "cwq", 50.0, 900.0, **{"method.depth": 2}),
        run("tog", "cwq", 58.0, 1400.0, **{"method.depth": 3}),
        run("lmp", "cwq", 61.0, 800.0, **{"method.depth": 2}),
        run("lmp", "cwq", 66.0, 1000.0, **{"method.depth": 3}),
    )
    assert swept_numbers(frame) == ["method.depth"]
    assert [p.label for p in cost_points(frame, "hits1", "total_tokens_per_q")] == [
        "lmp, gpt4o-mini, depth=2",
        "lmp, gpt4o-mini, depth=3",
        "tog, gpt4o-mini, depth=2",
        "tog, gpt4o-mini, depth=3",
    ]
    assert [(p.label, p.x, p.y) for p in param_points(frame, "method.depth", "hits1")] == [
        ("lmp, gpt4o-mini", 2.0, 61.0),
        ("lmp, gpt4o-mini", 3.0, 66.0),
        ("tog, gpt4o-mini", 2.0, 50.0),
        ("tog, gpt4o-mini", 3.0, 58.0),
    ]
    assert label_text(["method", "llm", "kg.name"], ["io", "gpt4o-mini", None]) == "io, gpt4o-mini"


def test_the_kind_of_question_is_the_estimates_strata_key():
    metaqa = [{"qtype": "movie_to_director", "hops": 1}, {"qtype": "movie_to_writer", "hops": 1}]
    assert kind_key(metaqa) == "qtype"
    assert kind_key([{"compositionality_type": "conjunction"}, {"compositionality_type": "composition"}]) == (
        "compositionality_type"
    )
    assert kind_key([{"qtype": "movie_to_director", "hops": 1}, {"qtype": "movie_to_director", "hops": 2}]) == "hops"
    assert kind_key([{"level": "iid"}, {"level": "iid"}]) == ""  # one kind: no figure


def test_paper_points_are_the_cells_kgx_ran_with_the_published_figure():
    _, cells = paper_table("lmp_table1")
    io_webqsp, io_cwq = [c for c in cells if c.selector and c.value is not None][:2]
    comparisons = [Comparison(io_webqsp, mean=60.0, low=55.1, high=64.7, runs=1, questions=400), Comparison(io_cwq)]
    [cell] = paper_points(comparisons)  # the cell no run made is not drawn
    assert (cell.label, cell.mean, cell.low, cell.high, cell.published, cell.inside) == (
        "IO + ChatGPT · WebQSP",
        60.0,
        55.1,
        64.7,
        63.3,
        True,
    )


def png_size(path: Path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


def test_a_figure_is_ten_inches_wide_with_every_point_named_on_hover(tmp_path):
    from kgx.report.figure_draw import cost_figure

    points = with_front([Point(f"d{i % 3}", f"m{i}, gpt4o-mini", 100.0 * (i + 1), 10.0 * i) for i in range(6)])
    png, html = cost_figure(points, tmp_path / "hits1_vs_tokens", "hits1", "tokens per question")
    assert png_size(png) == (1000, 900)  # three panels: two rows of two, never a strip
    page = html.read_text()
    assert "<svg" in page and page.count("<title>") == 7  # the page's, and one per point
    assert "<title>m5, gpt4o-mini: hits1 50.0, tokens per question 600 (1 runs), on the Pareto front</title>" in page


def test_the_paper_figure_has_a_line_per_cell_and_names_both_figures(tmp_path):
    from kgx.report.figure_draw import paper_figure
    from kgx.report.figure_points import Cell

    cells = [Cell(f"row {i} · CWQ", 50.0 + i, 45.0 + i, 55.0 + i, 52.0, True) for i in range(10)]
    png, html = paper_figure(cells, tmp_path / "lmp_table1_vs_published", "lmp_table1")
    assert png_size(png) == (1000, 460)  # 10 inches wide; a third of an inch per cell
    assert "<title>row 9 · CWQ: kgx 59.0 [54.0, 64.0], published 52.0</title>" in html.read_text()


def test_metrics_are_rounded_for_display_and_runs_named_by_what_they_ran():
    assert rounded("f1", 90.4766305) == 90.48
    assert rounded("total_tokens_per_q", 1912.4166) == 1912.4
    assert rounded("cost_usd", 0.000123456) == pytest.approx(0.0001235)
    assert rounded("n_questions", 9947.0) == 9947.0
    assert run_title(["tog", "cwq", "gpt4o-mini", "freebase"], "method=tog seed=1 kg.drop=0.1") == (
        "tog · cwq · gpt4o-mini · freebase · seed=1 · kg.drop=0.1"
    )
