"""Where data files live: relative paths resolve under ``$KGX_DATA_DIR``, else a per-user
data directory, so configs name files the same way on every machine."""
from __future__ import annotations

import os
from pathlib import Path

ENV = "KGX_DATA_DIR"


def data_dir() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "kgx" / "data"


def resolve(path: str) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else data_dir() / p
