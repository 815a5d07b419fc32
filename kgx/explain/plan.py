"""Geometry of an explanation picture, free of matplotlib: where every box, arrow and label goes.

Units are inches with y up, origin at the graph area's lower left. Nodes stand in columns by
depth; each arrow leaves its box from the side facing its target, runs horizontally out of its
column, crosses the gap between columns on a slant and enters the target box horizontally, so
arrowheads end exactly on a box side and no arrow crosses a box. One horizontal run per arrow is
long enough to carry its relation label (placed by :mod:`kgx.explain.labels`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kgx.core.graph import Edge, Graph, Node
from kgx.explain.plan_parts import Box, Measure, Plan, Route, Shape

NODE_FONT, LABEL_FONT = 8.0, 7.0
NODE_WIDTH, NODE_LINES = 28, 4  # characters a line, lines a node label
LABEL_WIDTH, LABEL_LINES = 26, 4  # the same for relation labels drawn on their arrow
PAD = 0.07  # around a node's text inside its box
LABEL_PAD = 0.025  # white margin around a relation label
ROW_GAP = 0.2  # between the boxes of one column
PORT_STEP = 0.075  # between arrow ends on one side of a box: wider than an arrowhead
STUB = 0.16  # horizontal run of an arrow beyond its column before it turns
LANE_STEP = 0.08  # between the lanes of arrows joining two nodes of one column
SLANT = 0.7  # width of the slanted part of an arrow between two columns
MARGIN = 0.3  # free band around the graph area: room for detours and labels
CLEAR = 0.03  # minimum air between a label and a box, arrowhead or other label
MAX_ROWS = 24  # boxes a column shows; the rest are counted in a "+N more" box


def wrap(text: str, width: int, max_lines: Optional[int] = None) -> list[str]:
    """Lines of about ``width`` characters broken only at spaces or, inside a token too long for
    a line, after its dots and then its underscores (``film.film.`` / ``directed_by``), so no
    word is cut; a token with no such break stays whole. Past ``max_lines`` the last kept line
    ends with an ellipsis."""
    lines: list[str] = []
    for word in text.split():
        for i, piece in enumerate(_pieces(word, width)):
            glue = "" if i else " "
            if lines and len(lines[-1]) + len(glue) + len(piece) <= width:
                lines[-1] += glue + piece
            else:
                lines.append(piece)
    if max_lines is not None and len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] += " …"
    return lines or [""]


def _pieces(word: str, width: int) -> list[str]:
    """A long token cut after its dots, and any still-long part after its underscores."""
    if len(word) <= width:
        return [word]
    return [bit for part in _cut_after(word, ".") for bit in (_cut_after(part, "_") if len(part) > width else [part])]


def _cut_after(text: str, mark: str) -> list[str]:
    parts = [p + mark for p in text.split(mark)]
    parts[-1] = parts[-1][: -len(mark)]
    return [p for p in parts if p]


def plan(graph: Graph, measure: Measure) -> Plan:
    """Boxes and arrows, measured with ``measure`` so boxes fit their text; labels are placed
    afterwards by :func:`kgx.explain.labels.label`."""
    columns, notes = _columns(graph)
    shapes = {s.id: s for column in columns for s in column}
    edges = [e for e in graph.edges if e.source in shapes and e.target in shapes]
    if len(edges) < len(graph.edges):
        notes.append(f"Arrows left out with the entities not drawn: {len(graph.edges) - len(edges)}.")
    if not shapes:
        return Plan({}, [], [], notes=notes, size=(1.0, 0.5))
    ports: dict[tuple[str, int], int] = {}
    for edge in edges:
        for end in _ends(edge, shapes):
            ports[end] = ports.get(end, 0) + 1
    run = _run(edges, measure)
    gap = 2 * STUB + run + SLANT
    labelled = _labelled_columns(columns, ports)
    slots = _slots(_sizes(shapes, ports, measure), edges, shapes, labelled, measure)
    lefts, rights, height = _place(columns, slots, edges, gap)
    grid = _Grid(columns, lefts, rights, run, labelled)
    lanes = _loop_lanes(edges, shapes)
    looped = any(shapes[edges[i].source].column == len(columns) - 1 for i in lanes)
    width = rights[-1] + MARGIN + (gap if looped else 0.0)
    routes = [_route(e, shapes, grid, lanes.get(i, 0)) for i, e in enumerate(edges)]
    _spread_ports(routes, shapes)
    return Plan(shapes, routes, [], notes=notes, size=(width, height))


@dataclass
class _Grid:
    """The columns once placed: their edges, the length of an arrow's labelled horizontal run,
    for each gap the column whose side of it holds those runs, and how many arrows already
    cross a column at each free height."""

    columns: list[list[Shape]]
    lefts: list[float]
    rights: list[float]
    run: float
    labelled: list[int]
    crossings: dict[tuple[int, float], int] = field(default_factory=dict)


def _columns(graph: Graph) -> tuple[list[list[Shape]], list[str]]:
    """Nodes by depth (a column per depth present), each capped at ``MAX_ROWS`` boxes: topic
    entities and answers are kept first, the rest counted in a last "+N more" box."""
    by_depth: dict[int, list[Node]] = {}
    for node in graph.nodes:
        by_depth.setdefault(node.depth, []).append(node)
    columns, notes = [], []
    for c, depth in enumerate(sorted(by_depth)):
        nodes = by_depth[depth]
        kept = nodes
        if len(nodes) > MAX_ROWS:
            first = sorted(range(len(nodes)), key=lambda i: (nodes[i].role == "", i))[: MAX_ROWS - 1]
            kept = [nodes[i] for i in sorted(first)]
            notes.append(
                f"Depth {depth}: {len(nodes) - len(kept)} more entities not drawn (a column shows {MAX_ROWS - 1})."
            )
        column = [Shape(n.id, wrap(n.label, NODE_WIDTH, NODE_LINES), n.role, c) for n in kept]
        if len(kept) < len(nodes):
            column.append(Shape(f"+more/{depth}", [f"+{len(nodes) - len(kept)} more"], "more", c))
        columns.append(column)
    return columns, notes


def _side(mine: int, other: int) -> int:
    """The side of a box in column ``mine`` an arrow to column ``other`` uses: -1 left, 1 right
    (arrows within a column loop out to the right)."""
    return -1 if other < mine else 1


def _ends(edge: Edge, shapes: dict[str, Shape]) -> tuple[tuple[str, int], tuple[str, int]]:
    a, b = shapes[edge.source].column, shapes[edge.target].column
    return (edge.source, _side(a, b)), (edge.target, _side(b, a))


def _sizes(
    shapes: dict[str, Shape], ports: dict[tuple[str, int], int], measure: Measure
) -> dict[str, tuple[float, float]]:
    """Box sizes: the text plus padding, tall enough for one arrow end per ``PORT_STEP``."""
    sizes = {}
    for s in shapes.values():
        w, h = measure("\n".join(s.lines), NODE_FONT)
        most = max(ports.get((s.id, -1), 0), ports.get((s.id, 1), 0))
        sizes[s.id] = (w + 2 * PAD, max(h + 2 * PAD, most * PORT_STEP + PAD))
    return sizes


def _labelled_columns(columns: list[list[Shape]], ports: dict[tuple[str, int], int]) -> list[int]:
    """For each gap, the column next to which arrows get their labelled runs: the one whose box
    sides facing the gap share fewer arrow ends (labels on runs from one side would collide),
    the right one on a tie. One side per gap keeps runs from meeting in its middle."""

    def crowd(column: int, side: int) -> int:
        return sum(n for n in (ports.get((s.id, side), 0) for s in columns[column]) if n > 1)

    return [g if crowd(g, 1) < crowd(g + 1, -1) else g + 1 for g in range(len(columns) - 1)]


def _labelled_end(edge: Edge, shapes: dict[str, Shape], labelled: list[int]) -> Optional[str]:
    """The node whose horizontal run carries the arrow's label: the target where its gap's
    labelled column is the target's, else the source where that holds for the source's gap."""
    a, b = shapes[edge.source].column, shapes[edge.target].column
    if a == b:
        return None
    step = 1 if b > a else -1
    if labelled[min(b, b - step)] == b:
        return edge.target
    return edge.source if labelled[min(a, a + step)] == a else None


def _slots(
    sizes: dict[str, tuple[float, float]],
    edges: list[Edge],
    shapes: dict[str, Shape],
    labelled: list[int],
    measure: Measure,
) -> dict[str, tuple[float, float, float]]:
    """Each box's size and the height of its row: tall enough for the tallest label on an
    arrow run that ends at the box, so labels of neighbouring rows do not meet."""
    rows = {node: size[1] for node, size in sizes.items()}
    for edge in edges:
        lines = wrap(edge.label, LABEL_WIDTH)
        node = _labelled_end(edge, shapes, labelled)
        if node and edge.label and len(lines) <= LABEL_LINES:
            need = measure("\n".join(lines), LABEL_FONT)[1] + 2 * (LABEL_PAD + CLEAR)
            rows[node] = max(rows[node], need)
    return {node: (w, h, rows[node]) for node, (w, h) in sizes.items()}


def _run(edges: list[Edge], measure: Measure) -> float:
    """Length of the horizontal run at an arrow's labelled end: the widest relation label
    drawn on its arrow fits on it."""
    widths = [
        measure("\n".join(lines), LABEL_FONT)[0]
        for lines in (wrap(e.label, LABEL_WIDTH) for e in edges)
        if len(lines) <= LABEL_LINES
    ]
    return max(widths, default=0.0) + 2 * (LABEL_PAD + CLEAR)


def _place(
    columns: list[list[Shape]], slots: dict[str, tuple[float, float, float]], edges: list[Edge], gap: float
) -> tuple[list[float], list[float], float]:
    """Set every box, centred in its row; returns the columns' left and right edges and the
    graph area's height. Each column is ordered by the mean height of its neighbours in earlier
    columns (fewer crossings), stacked top to bottom and centred."""
    heights = [sum(slots[s.id][2] for s in col) + ROW_GAP * (len(col) - 1) for col in columns]
    height = max(heights, default=0.0) + 2 * MARGIN
    lefts, rights, x, centres = [], [], MARGIN, {}
    for col, col_height in zip(columns, heights):
        col.sort(key=lambda s: _barycentre(s.id, edges, centres))
        width = max(slots[s.id][0] for s in col)
        y = (height + col_height) / 2
        for s in col:
            w, h, row = slots[s.id]
            middle = y - row / 2
            s.box = (x + (width - w) / 2, middle - h / 2, x + (width + w) / 2, middle + h / 2)
            centres[s.id] = middle
            y -= row + ROW_GAP
        lefts.append(x)
        rights.append(x + width)
        x += width + gap
    return lefts, rights, height


def _barycentre(node: str, edges: list[Edge], centres: dict[str, float]) -> tuple[int, float]:
    """Sort key: nodes joined to placed ones first, highest mean neighbour first; others after."""
    ys = [
        centres[other]
        for e in edges
        for me, other in ((e.source, e.target), (e.target, e.source))
        if me == node and other in centres
    ]
    return (0, -sum(ys) / len(ys)) if ys else (1, 0.0)


def _loop_lanes(edges: list[Edge], shapes: dict[str, Shape]) -> dict[int, int]:
    """Lane of each looping arrow, counted per column so its loops do not overlap."""
    lanes: dict[int, int] = {}
    used: dict[int, int] = {}
    for i, e in enumerate(edges):
        column = shapes[e.source].column
        if column == shapes[e.target].column:
            lanes[i] = used.get(column, -1) + 1
            used[column] = lanes[i]
    return lanes


def _route(edge: Edge, shapes: dict[str, Shape], grid: _Grid, lane: int) -> Route:
    """The arrow's polyline with its ends at the vertical middle of the facing box sides (moved
    apart later by :func:`_spread_ports`): a horizontal run out of the source, a slant across
    the gap, a horizontal run into the target. The run on the gap's labelled side is long
    enough for the label, so fanned-out arrows get their labels apart. Arrows skipping columns
    cross each one in a gap between its boxes."""
    source, target = shapes[edge.source], shapes[edge.target]
    a, b = source.column, target.column
    ys, yt = _middle(source.box), _middle(target.box)
    if a == b:
        x = grid.rights[a] + STUB + LANE_STEP * lane
        return Route(edge, [(source.box[2], ys), (x, ys), (x, yt), (target.box[2], yt)], [1])
    step = 1 if b > a else -1
    near, far = (grid.rights, grid.lefts) if step == 1 else (grid.lefts, grid.rights)
    end = _labelled_end(edge, shapes, grid.labelled)
    at_target, at_source = end == edge.target, end == edge.source
    points = [
        (source.box[2] if step == 1 else source.box[0], ys),
        (near[a] + step * (STUB + (grid.run if at_source else 0.0)), ys),
    ]
    for c in range(a + step, b, step):
        y = _lane(grid, c, ys + (yt - ys) * (c - a) / (b - a))
        points += [(far[c] - step * STUB, y), (near[c] + step * STUB, y)]
    points += [
        (far[b] - step * (STUB + (grid.run if at_target else 0.0)), yt),
        (target.box[0] if step == 1 else target.box[2], yt),
    ]
    runs = [0] if at_source else [len(points) - 2] if at_target else []
    return Route(edge, points, [*runs, *range(1, len(points) - 1, 2)])


def _middle(box: Box) -> float:
    return (box[1] + box[3]) / 2


def _lane(grid: _Grid, column: int, wanted: float) -> float:
    """The height nearest ``wanted`` where an arrow can cross ``column`` without touching a box;
    arrows crossing at the same place are set apart, alternately above and below."""
    tops = [s.box[3] for s in grid.columns[column]]
    bottoms = [s.box[1] for s in grid.columns[column]]
    free = [max(tops) + MARGIN / 2, min(bottoms) - MARGIN / 2]
    free += [(low + high) / 2 for low, high in zip(bottoms, tops[1:])]
    y = min(free, key=lambda y: abs(y - wanted))
    k = grid.crossings.get((column, y), 0)
    grid.crossings[(column, y)] = k + 1
    return y + LANE_STEP / 2 * ((k + 1) // 2) * (1 if k % 2 else -1)


def _spread_ports(routes: list[Route], shapes: dict[str, Shape]) -> None:
    """Give every arrow end its own point on its box side, ordered by where the arrow goes so
    neighbouring arrows do not cross, and keep the first and last runs horizontal."""
    sides: dict[tuple[str, int], list[tuple[float, int, int]]] = {}
    for i, r in enumerate(routes):
        (s, s_side), (t, t_side) = _ends(r.edge, shapes)
        sides.setdefault((s, s_side), []).append((-r.points[-1][1], i, 0))
        sides.setdefault((t, t_side), []).append((-r.points[0][1], i, -1))
    for (node, _), ends in sides.items():
        box = shapes[node].box
        step = min(PORT_STEP, (box[3] - box[1] - PAD) / max(len(ends) - 1, 1))
        for k, (_, i, at) in enumerate(sorted(ends)):
            y = _middle(box) + ((len(ends) - 1) / 2 - k) * step
            points = routes[i].points
            points[at] = (points[at][0], y)
            points[1 if at == 0 else -2] = (points[1 if at == 0 else -2][0], y)
