"""The parts of an explanation picture's plan (:mod:`kgx.explain.plan`) as data: node boxes, arrow
routes, label tags, and the plan that holds them.

Units are inches with y up, origin at the graph area's lower left. :mod:`kgx.explain.plan` sets
the boxes and arrows, :mod:`kgx.explain.labels` the tags, and :mod:`kgx.explain.draw` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kgx.core.graph import Edge

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
Point = tuple[float, float]
Measure = Callable[[str, float], tuple[float, float]]  # text, font size (pt) -> width, height (in)


@dataclass
class Shape:
    """A node box: ``role`` is the node's, or ``more`` for the box counting hidden nodes."""

    id: str
    lines: list[str]
    role: str
    column: int
    box: Box = (0.0, 0.0, 0.0, 0.0)


@dataclass
class Route:
    """An arrow as a polyline from a point on its source box to one on its target box;
    ``free`` are the indices of its segments in the gaps between columns, where a label may sit."""

    edge: Edge
    points: list[Point]
    free: list[int]


@dataclass
class Tag:
    """A label placed on arrow ``route``: the relation itself, or (``keyed``) ``[n]`` pointing
    into the key."""

    lines: list[str]
    box: Box
    route: int
    keyed: bool = False


@dataclass
class Plan:
    """A picture's geometry: ``key`` lists relations drawn as numbered tags (or named in full
    where even a tag did not fit), ``notes`` what was left out; ``size`` is the graph area's."""

    shapes: dict[str, Shape]
    routes: list[Route]
    tags: list[Tag]
    key: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    size: tuple[float, float] = (0.0, 0.0)
