"""What the command-line entry points share: a module docstring shown as help text without its
reStructuredText markup (````python -m kgx.kg````, ``:class:`~kgx.x.Y```` read as plain text)."""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:class|func|mod|meth|attr|data|obj):`~?([^`]+)`")


def plain(doc: str) -> str:
    """``doc`` without roles (the target's last name stays) and without double backquotes."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], doc)
    return text.replace("``", "")


def count(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``1,000 questions``: a count with its noun in the right number."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
