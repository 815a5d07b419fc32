"""Where data files live: relative paths resolve under ``$KGX_DATA_DIR``, else a per-user
data directory, so configs name files the same way on every machine; and the file name a
question id gets in a run folder (traces, explanations)."""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from pathlib import Path

ENV = "KGX_DATA_DIR"


def _config_dirs() -> tuple[Path, Path]:
    """kgx's own config directory and sweeps directory: inside the installed package when kgx was
    installed from a wheel (``kgx/conf``, ``kgx/conf/sweeps``: setup.py puts them there), else
    the repository's ``conf/`` and ``sweeps/`` (a checkout, editable install or not)."""
    package = Path(__file__).resolve().parent.parent
    if (package / "conf" / "config.yaml").is_file():
        return package / "conf", package / "conf" / "sweeps"
    return package.parent / "conf", package.parent / "sweeps"


CONF_DIR, SWEEPS_DIR = _config_dirs()


def data_dir() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "kgx" / "data"


def resolve(path: str) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else data_dir() / p


def file_name(qid: str) -> str:
    """A file name per question id, distinct for distinct ids (``x/y`` and ``x_y`` differ):
    percent-encoding, with a hash in place of the tail of very long ids."""
    name = urllib.parse.quote(qid, safe="")
    if len(name) > 120 or name.startswith("."):
        name = name[:100].lstrip(".") + "-" + hashlib.sha256(qid.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return name
