"""Relation labels on their arrows, placed where they hide nothing.

Each label is tried at spots along its arrow's labelled run and slants (see
:mod:`kgx.explain.plan`), centred on the line or just beside it, and takes the cheapest spot
that overlaps no box, arrowhead or earlier label and lies along no other arrow's run. Where
none is free a numbered tag takes its place and the relation goes to the key under the picture.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from kgx.explain.plan import CLEAR, LABEL_FONT, LABEL_LINES, LABEL_PAD, LABEL_WIDTH, wrap
from kgx.explain.plan_parts import Box, Measure, Plan, Point, Route, Tag

HEAD = 0.11  # length of an arrowhead plus a little: kept free of labels


def label(result: Plan, measure: Measure) -> None:
    """Put each relation on its arrow, or a numbered tag plus a key line where it does not fit;
    an arrow with no room even for a tag is named in full in the key."""
    blocked = [_grow(s.box, CLEAR) for s in result.shapes.values()] + [_head(r.points) for r in result.routes]
    names = {s.id: " ".join(s.lines) for s in result.shapes.values()}
    for i, route in enumerate(result.routes):
        if not route.edge.label:
            continue
        lines = wrap(route.edge.label, LABEL_WIDTH)
        if len(lines) <= LABEL_LINES and _put(result, i, lines, measure, blocked):
            continue
        number = f"[{len(result.key) + 1}]"
        if _put(result, i, [number], measure, blocked, keyed=True):
            result.key.append(f"{number} {route.edge.label}")
        else:
            result.key.append(f"{names[route.edge.source]} → {names[route.edge.target]}: {route.edge.label}")


def _put(result: Plan, index: int, lines: list[str], measure: Measure, blocked: list[Box], keyed: bool = False) -> bool:
    """Place ``lines`` on route ``index`` at the best free spot; False when there is none. A
    label may cross other arrows' slants (at a cost) but never lie along another arrow's
    near-horizontal run, which it would hide."""
    w, h = measure("\n".join(lines), LABEL_FONT)
    w, h = w + 2 * LABEL_PAD, h + 2 * LABEL_PAD
    others = [seg for j, r in enumerate(result.routes) if j != index for seg in zip(r.points, r.points[1:])]
    flat = [(p, q) for p, q in others if abs(q[1] - p[1]) <= 0.35 * abs(q[0] - p[0])]
    steep = [(p, q) for p, q in others if abs(q[1] - p[1]) > 0.35 * abs(q[0] - p[0])]
    best: Optional[tuple[float, Box]] = None
    for cost, box in _candidates(result.routes[index], w, h):
        if (
            not _inside(box, result.size)
            or any(_overlap(box, b) for b in blocked)
            or any(_crosses(p, q, box) for p, q in flat)
        ):
            continue
        cost += 0.3 * sum(_crosses(p, q, box) for p, q in steep)
        if best is None or cost < best[0]:
            best = (cost, box)
    if best is None:
        return False
    result.tags.append(Tag(lines, best[1], index, keyed))
    blocked.append(_grow(best[1], CLEAR))
    return True


def _candidates(route: Route, w: float, h: float) -> Iterable[tuple[float, Box]]:
    """Label boxes along the route's free segments with a cost: centred on the labelled
    horizontal run is best; on a slant, beside the line, or nearer an end costs more."""
    shifts = (
        (0.0, 0.0, 0.0),
        (0.0, h / 2 + CLEAR, 0.4),
        (0.0, -h / 2 - CLEAR, 0.4),
        (w / 2 + CLEAR, 0.0, 0.5),
        (-w / 2 - CLEAR, 0.0, 0.5),
    )
    for rank, index in enumerate(route.free):
        (x0, y0), (x1, y1) = route.points[index], route.points[index + 1]
        for t in (0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.18, 0.82, 0.1, 0.9):
            x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
            for dx, dy, extra in shifts:
                yield (
                    abs(t - 0.5) + extra + 0.3 * min(rank, 1),
                    (x + dx - w / 2, y + dy - h / 2, x + dx + w / 2, y + dy + h / 2),
                )


def _head(points: Sequence[Point]) -> Box:
    """The region of the arrowhead (the last, horizontal run ends at the target box)."""
    (x0, _), (x1, y1) = points[-2], points[-1]
    back = x1 - HEAD if x1 >= x0 else x1 + HEAD
    return (min(back, x1), y1 - HEAD / 2, max(back, x1), y1 + HEAD / 2)


def _grow(box: Box, by: float) -> Box:
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(box: Box, size: tuple[float, float]) -> bool:
    return box[0] >= 0 and box[1] >= 0 and box[2] <= size[0] and box[3] <= size[1]


def _crosses(p: Point, q: Point, box: Box) -> bool:
    """Whether segment p-q passes through ``box`` (Liang-Barsky clipping)."""
    low, high = 0.0, 1.0
    for start, delta, lo, hi in ((p[0], q[0] - p[0], box[0], box[2]), (p[1], q[1] - p[1], box[1], box[3])):
        if delta == 0:
            if not lo <= start <= hi:
                return False
            continue
        t0, t1 = sorted(((lo - start) / delta, (hi - start) / delta))
        low, high = max(low, t0), min(high, t1)
    return low <= high
