"""An explanation picture drawn with matplotlib from the geometry of :mod:`kgx.explain.plan`.

Data coordinates are inches (the axes fill the figure), so the text sizes the renderer reports
and the plan's boxes share one unit. The page stacks the question on top, the graph with the
method's side notes to its right, and under them the key of numbered relations, notes on what
was left out, and a line on how to read the marks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.path import Path as LinePath
from matplotlib.text import Text
from matplotlib.transforms import Affine2D, Transform

from kgx.core.graph import Graph
from kgx.explain.labels import label
from kgx.explain.plan import LABEL_FONT, LABEL_PAD, NODE_FONT, plan, wrap
from kgx.explain.plan_parts import Measure, Plan, Shape

DPI = 130
TITLE_FONT, NOTE_FONT = 10.0, 7.5
EDGE = 0.2  # page margin and the space between the page's parts (in)
SIDE_PAD = 0.08  # inside the side-notes panel
FILLS = ("#dbe9f6", "#fde2c8", "#d9f0d3", "#e8dff0", "#fbe3ea", "#dff3f1")
RIMS = {"topic": ("#c99a06", 2.2, "solid"), "answer": ("#c0392b", 2.2, "solid"), "more": ("0.5", 0.9, "dashed")}
LEGEND = "Gold border: topic entity.  Red border: answer.  Arrows run subject → object, as stored in the KG."


@dataclass
class Picture:
    """The figure and the artists a test measures with the renderer (node boxes by id, relation
    labels and tags, arrows with their target's id), so geometry is checked on what matplotlib
    draws rather than on the plan it was drawn from."""

    figure: Figure
    plan: Plan
    boxes: dict[str, FancyBboxPatch]
    labels: list[Text]
    arrows: list[tuple[FancyArrowPatch, str]]


def new_figure() -> Figure:
    """A figure with its own Agg canvas: no pyplot state, safe in threads and servers."""
    figure = Figure(dpi=DPI)
    FigureCanvasAgg(figure)
    return figure


def measurer(figure: Figure) -> Measure:
    """Text size in inches as ``figure``'s renderer lays it out."""
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]

    def measure(text: str, size: float) -> tuple[float, float]:
        probe = figure.text(0, 0, text, fontsize=size)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        return extent.width / figure.dpi, extent.height / figure.dpi

    return measure


def plan_of(graph: Graph, measure: Optional[Measure] = None) -> Plan:
    """The graph's geometry, labels included, measured with the drawing's fonts."""
    measure = measure or measurer(new_figure())
    geometry = plan(graph, measure)
    label(geometry, measure)
    return geometry


def render(graph: Graph) -> Picture:
    """The whole page as a figure sized to its content, with the artists kept: :func:`draw`
    saves the figure, tests measure the artists."""
    figure = new_figure()
    measure = measurer(figure)
    geometry = plan_of(graph, measure)
    title, side, foot = _page_texts(graph, geometry)
    title_w, title_h = measure(title, TITLE_FONT) if title else (0.0, -EDGE)
    side_w, side_h = measure(side, NOTE_FONT) if side else (-2 * SIDE_PAD - EDGE, 0.0)
    foot_w, foot_h = measure(foot, NOTE_FONT)
    graph_w, graph_h = geometry.size
    body = max(graph_h, side_h + 2 * SIDE_PAD)
    width = 2 * EDGE + max(graph_w + EDGE + side_w + 2 * SIDE_PAD, title_w, foot_w)
    height = 4 * EDGE + title_h + body + foot_h
    figure.set_size_inches(width, height)
    axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
    axes.set_xlim(0, width)
    axes.set_ylim(0, height)
    axes.set_axis_off()
    body_top = height - 2 * EDGE - title_h
    axes.text(width / 2, height - EDGE, title, fontsize=TITLE_FONT, ha="center", va="top")
    if side:
        axes.text(
            2 * EDGE + graph_w + SIDE_PAD,
            body_top - SIDE_PAD,
            side,
            fontsize=NOTE_FONT,
            va="top",
            bbox={"boxstyle": f"round,pad={SIDE_PAD * 72 / NOTE_FONT}", "fc": "#f4f4f4", "ec": "0.6"},
        )
    axes.text(EDGE, EDGE, foot, fontsize=NOTE_FONT, va="bottom", color="0.25")
    place = Affine2D().translate(EDGE, body_top - (body + graph_h) / 2) + axes.transData
    return Picture(
        figure, geometry, _nodes(axes, geometry, place), _labels(axes, geometry, place), _arrows(axes, geometry, place)
    )


def _page_texts(graph: Graph, geometry: Plan) -> tuple[str, str, str]:
    """The question on top, the method's side notes, and the footer: the key of relations the
    graph had no room for, notes on what was left out, and how to read the marks."""
    title = "\n".join(wrap(graph.title, 100, 3)) if graph.title else ""
    side = "\n".join(line for entry in graph.side for line in wrap(entry, 60))
    key = [line for entry in geometry.key for line in wrap(entry, 140)]
    return title, side, "\n".join([*key, *geometry.notes, LEGEND])


def _nodes(axes, geometry: Plan, place: Transform) -> dict[str, FancyBboxPatch]:
    boxes = {}
    for shape in geometry.shapes.values():
        x0, y0, x1, y1 = shape.box
        rim, width, style = RIMS.get(shape.role, ("0.35", 0.8, "solid"))
        boxes[shape.id] = axes.add_patch(
            FancyBboxPatch(
                (x0, y0),
                x1 - x0,
                y1 - y0,
                boxstyle="round,pad=0,rounding_size=0.04",
                transform=place,
                fc=_fill(shape),
                ec=rim,
                lw=width,
                ls=style,
                zorder=2,
            )
        )
        axes.text(
            (x0 + x1) / 2,
            (y0 + y1) / 2,
            "\n".join(shape.lines),
            transform=place,
            fontsize=NODE_FONT,
            ha="center",
            va="center",
            multialignment="center",
            zorder=3,
            style="italic" if shape.role == "more" else "normal",
        )
    return boxes


def _fill(shape: Shape) -> str:
    return {"topic": "#fff1c4", "answer": "#f9d3cf", "more": "white"}.get(shape.role, FILLS[shape.column % len(FILLS)])


def _labels(axes, geometry: Plan, place: Transform) -> list[Text]:
    """Relation labels (black) and key tags (blue), each on a white box of the planned size: the
    box pad is ``LABEL_PAD`` in units of the font size, as matplotlib counts it."""
    background = {"boxstyle": f"square,pad={LABEL_PAD * 72 / LABEL_FONT}", "fc": "white", "ec": "none"}
    labels = []
    for tag in geometry.tags:
        x0, y0, x1, y1 = tag.box
        labels.append(
            axes.text(
                (x0 + x1) / 2,
                (y0 + y1) / 2,
                "\n".join(tag.lines),
                transform=place,
                fontsize=LABEL_FONT,
                ha="center",
                va="center",
                zorder=4,
                color="#1f4e9c" if tag.keyed else "0.1",
                bbox=background,
            )
        )
    return labels


def _arrows(axes, geometry: Plan, place: Transform) -> list[tuple[FancyArrowPatch, str]]:
    arrows = []
    for route in geometry.routes:
        arrow = FancyArrowPatch(
            path=LinePath(route.points),
            arrowstyle="-|>,head_length=0.55,head_width=0.22",
            mutation_scale=10,
            color="0.4",
            lw=0.9,
            transform=place,
            zorder=1,
        )
        arrows.append((axes.add_patch(arrow), route.edge.target))
    return arrows


def layout(graph: Graph) -> dict[str, tuple[float, float]]:
    """Centre of each drawn node's box, in inches from the graph area's lower left: columns by
    depth, ordered to cut crossings, boxes sized to their text (so fonts are measured). A capped
    column's "+N more" box appears as ``+more/<depth>``."""
    return {
        node_id: ((s.box[0] + s.box[2]) / 2, (s.box[1] + s.box[3]) / 2) for node_id, s in plan_of(graph).shapes.items()
    }


def draw(graph: Graph, stem: Path) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg``; returns the paths written."""
    figure = render(graph).figure
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = stem.with_suffix(suffix)
        figure.savefig(path, dpi=DPI)
        written.append(path)
    return written


def write(graph: Graph, stem: Path) -> list[Path]:
    """The picture plus ``<stem>.txt``: the title and the text the method gave its LLM."""
    text_path = stem.with_suffix(".txt")
    stem.parent.mkdir(parents=True, exist_ok=True)
    side = "\n" + "\n".join(graph.side) + "\n" if graph.side else ""
    text_path.write_text(f"{graph.title}\n\n{graph.text}\n" + side)
    return [text_path, *draw(graph, stem)]
