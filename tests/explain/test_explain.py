"""Explanation pictures: checked on the geometry matplotlib draws, not just on files existing."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.transforms import Bbox

from kgx.core.graph import Edge, Graph, Node
from kgx.explain.draw import Picture, draw, layout, render
from kgx.explain.plan import MAX_ROWS, wrap

RELATIONS = [
    "film.film.directed_by",
    "location.country.official_language",
    "government.governmental_jurisdiction.governing_officials",
    "people.person.nationality",
    "film.film.release_year",
]


def fan(count: int) -> Graph:
    """A topic entity with ``count`` neighbours in one column, one of them the answer."""
    nodes = [Node("t", "Topic entity", 0, "topic")]
    nodes += [Node(f"n{i}", f"Neighbour entity {i}", 1, "answer" if i == 2 else "") for i in range(count)]
    edges = [Edge("t", f"n{i}", RELATIONS[i % len(RELATIONS)]) for i in range(count)]
    return Graph(nodes=nodes, edges=edges, title="Which neighbour?", side=["Outcome: answered at depth 1."])


def both_ways() -> Graph:
    return Graph(
        nodes=[Node("a", "Australia", 0, "topic"), Node("b", "Canberra", 1, "answer")],
        edges=[Edge("a", "b", "location.country.capital"), Edge("b", "a", "location.administrative_division.country")],
    )


def busy() -> Graph:
    """Over a column's cap, with arrows within a column, skipping a column and pointing back."""
    nodes = [Node("t", "A topic entity whose name is long enough to wrap over lines", 0, "topic")]
    nodes += [Node(f"m{i}", f"Member {i}", 1) for i in range(MAX_ROWS + 4)]
    nodes += [Node("x", "Deep", 2, "answer"), Node("y", "Deeper", 3)]
    edges = [Edge("t", f"m{i}", RELATIONS[i % len(RELATIONS)]) for i in range(MAX_ROWS + 4)]
    edges += [
        Edge("m1", "m4", "same.column.link"),
        Edge("m2", "x", "film.film.genre"),
        Edge("t", "y", "skips.two.columns"),
        Edge("x", "m5", "points.back_wards"),
        Edge("y", "t", "all.the_way.back"),
    ]
    return Graph(nodes=nodes, edges=edges, title="Busy")


def drawn(graph: Graph) -> tuple[Picture, object]:
    picture = render(graph)
    picture.figure.canvas.draw()
    return picture, picture.figure.canvas.get_renderer()


def label_boxes(picture: Picture, renderer) -> list[Bbox]:
    """Each label's white box together with its text, in pixels."""
    return [
        Bbox.union([t.get_bbox_patch().get_window_extent(renderer), t.get_window_extent(renderer)])
        for t in picture.labels
    ]


def overlap(a: Bbox, b: Bbox, slack: float = 0.5) -> bool:
    return a.x0 + slack < b.x1 and b.x0 + slack < a.x1 and a.y0 + slack < b.y1 and b.y0 + slack < a.y1


def assert_labels_clear(picture: Picture, renderer) -> None:
    nodes = [p.get_window_extent(renderer) for p in picture.boxes.values()]
    labels = label_boxes(picture, renderer)
    for i, box in enumerate(labels):
        assert not any(overlap(box, node) for node in nodes), picture.labels[i].get_text()
        assert not any(overlap(box, other) for other in labels[i + 1 :]), picture.labels[i].get_text()


def stroke_reach(arrow, dpi: float) -> float:
    """How far the stroked, mitred tip of a ``-|>`` head reaches past its outline's tip vertex
    (matplotlib pulls the vertex back by just this much so the stroke ends on the end point)."""
    style = arrow.get_arrowstyle()
    sine = style.head_width / (style.head_length**2 + style.head_width**2) ** 0.5
    return arrow.get_linewidth() * dpi / 72 / 2 / sine


def signed_distance(box: Bbox, x: float, y: float) -> float:
    """Distance from (x, y) to the box's boundary: positive outside, negative inside."""
    outside = (max(box.x0 - x, 0, x - box.x1) ** 2 + max(box.y0 - y, 0, y - box.y1) ** 2) ** 0.5
    return outside or -min(x - box.x0, box.x1 - x, y - box.y0, box.y1 - y)


def assert_arrows_touch(picture: Picture, renderer, tolerance: float = 2.0) -> None:
    """The arrowhead's drawn tip lies on its target box's boundary; nothing of the arrow is inside.
    The head is the path's last closed triangle; its tip is the corner nearest the box."""
    for arrow, target in picture.arrows:
        box = picture.boxes[target].get_window_extent(renderer)
        points = arrow.get_transform().transform(arrow.get_path().vertices)
        tip = min(signed_distance(box, x, y) for x, y in points[-4:-1]) - stroke_reach(arrow, picture.figure.dpi)
        assert abs(tip) <= tolerance, f"arrowhead into {target} is {tip:.1f} px off its box (+: short)"
        inside = -min(signed_distance(box, x, y) for x, y in points)
        assert inside <= tolerance, f"arrow into {target} enters its box by {inside:.1f} px"


def assert_breaks_between_words(text: str, lines: list[str]) -> None:
    """``lines`` rebuild ``text`` and every break falls at a space or after a dot or underscore."""
    at = 0
    for i, line in enumerate(lines):
        while text[at] == " ":
            at += 1
        assert text.startswith(line, at), (text, lines)
        at += len(line)
        if i < len(lines) - 1:
            assert text[at] == " " or text[at - 1] in "._", f"break inside a word: {line!r} | {lines[i + 1]!r}"
    assert at == len(text)


def assert_readable(graph: Graph) -> Picture:
    picture, renderer = drawn(graph)
    assert_labels_clear(picture, renderer)
    assert_arrows_touch(picture, renderer)
    for tag in picture.plan.tags:
        if not tag.keyed:
            assert_breaks_between_words(picture.plan.routes[tag.route].edge.label, tag.lines)
    assert min(t.get_fontsize() for t in picture.figure.findobj(lambda a: hasattr(a, "get_fontsize"))) >= 7
    return picture


@pytest.mark.parametrize(
    "text",
    [
        *RELATIONS,
        "film.film.starring; film.film.written_by; film.film.produced_by",
        "The entity Australia has relation location.country.capital with Canberra.",
        "Supercalifragilisticexpialidocious word",
        "a_b_c_d_e_f_g_h_i_j_k_l_m",
    ],
)
@pytest.mark.parametrize("width", [8, 14, 26])
def test_wrap_breaks_only_at_spaces_dots_and_underscores(text: str, width: int) -> None:
    lines = wrap(text, width)
    assert_breaks_between_words(text, lines)
    assert all(len(line) <= width or not any(c in line[:-1] for c in " ._") for line in lines)


def test_wrap_prefers_dots_and_marks_cut_text() -> None:
    assert wrap("film.film.directed_by", 12) == ["film.film.", "directed_by"]
    assert wrap("government.governmental_jurisdiction.governing_officials", 26) == [
        "government.",
        "governmental_jurisdiction.",
        "governing_officials",
    ]
    assert wrap("one two three four", 4, max_lines=2) == ["one", "two …"]


def test_twelve_nodes_in_one_column_are_readable() -> None:
    picture = assert_readable(fan(12))
    assert len(picture.boxes) == 13 and len(picture.arrows) == 12
    assert not picture.plan.key, "twelve labels should all fit on their arrows"


def test_parallel_arrows_both_ways_are_apart_and_labelled() -> None:
    picture = assert_readable(both_ways())
    assert sorted(t.get_text().replace("\n", "") for t in picture.labels) == [
        "location.administrative_division.country",
        "location.country.capital",
    ]
    lines = [arrow.get_transform().transform(arrow.get_path().vertices) for arrow, _ in picture.arrows]
    assert abs(lines[0][:, 1].mean() - lines[1][:, 1].mean()) > 5, "the two arrows are drawn on top of each other"


def test_busy_graph_caps_columns_and_says_so() -> None:
    picture = assert_readable(busy())
    hidden = [s for s in picture.plan.shapes.values() if s.role == "more"]
    assert [s.lines for s in hidden] == [["+5 more"]]
    assert any("5 more entities not drawn" in note for note in picture.plan.notes)
    footer = "\n".join(t.get_text() for t in picture.figure.axes[0].texts)
    assert "5 more entities not drawn" in footer


def test_relation_too_long_for_its_arrow_goes_to_the_key() -> None:
    label = "; ".join(f"film.film.relation_number_{i}" for i in range(6))
    graph = Graph(nodes=[Node("a", "A", 0, "topic"), Node("b", "B", 1)], edges=[Edge("a", "b", label)])
    picture = assert_readable(graph)
    assert [t.get_text() for t in picture.labels] == ["[1]"]
    assert picture.plan.key == [f"[1] {label}"]
    assert any("[1] film.film.relation_number_0;" in t.get_text() for t in picture.figure.axes[0].texts)


def test_layout_puts_deeper_nodes_further_right() -> None:
    where = layout(fan(3))
    assert all(where["t"][0] < where[f"n{i}"][0] for i in range(3))
    assert len({round(where[f"n{i}"][0], 6) for i in range(3)}) == 1


def test_draw_writes_png_and_svg_at_the_figure_size(tmp_path: Path) -> None:
    from PIL import Image

    written = draw(both_ways(), tmp_path / "out" / "q1")
    assert [p.suffix for p in written] == [".png", ".svg"] and all(p.stat().st_size for p in written)
    width, height = render(both_ways()).figure.get_size_inches() * 130
    png_width, png_height = Image.open(written[0]).size
    assert abs(png_width - width) <= 1 and abs(png_height - height) <= 1, "the PNG was cropped or padded"


def test_graph_round_trips_and_empty_graph_draws(tmp_path: Path) -> None:
    graph = fan(2)
    assert Graph.from_dict(graph.to_dict()) == graph
    assert len(draw(Graph(title="nothing explored"), tmp_path / "empty")) == 2
