"""Figures as people read them: thousands grouped, never in exponent notation.

A mean of 1906.3 tokens a question reads ``1,906``, not ``1.91e+03``; a cost of $0.000023 reads
``0.0000230``, not ``2.3e-05``. Every display of kgx (the run's summary, the sweep's table, text,
Markdown and HTML reports) prints its figures through these; CSV keeps the plain numbers.
"""

from __future__ import annotations

import math

GROUPED_FROM = 999.5  # where three significant digits would round to 1e+03


def readable(value: float) -> str:
    """Three significant digits below a thousand (``5.19``, ``44.2``, ``0.0023``), the whole
    number with its thousands grouped from there (``1,906``)."""
    size = abs(value)
    if size >= GROUPED_FROM:
        return f"{value:,.0f}"
    if size == 0 or size >= 1e-3:
        return f"{value:.3g}"
    return f"{value:.{2 - math.floor(math.log10(size))}f}"
