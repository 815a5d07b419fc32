"""A misspelt option or key gets one line with the closest names, not Hydra's composition report.

Hydra answers ``method=lmpp`` with every entry of the group, the ``base_*`` schemas the method files
extend among them, and its config search path; ``method.dept=3`` with OmegaConf's key report. Both
are for Hydra's developers. kgx composes through Hydra's own entry point and reads the exception
Hydra raises (``HYDRA_FULL_ERROR`` lets it through, kgx.__main__), so the message is kgx's:

    kgx: error: method=lmpp: no such method; did you mean lmp? (options: cgpe, cot, io, ...)
    kgx: error: method.dept: lmp has no setting 'dept'; did you mean method.depth?
"""

from __future__ import annotations

import difflib
from dataclasses import fields, is_dataclass
from typing import Optional

from kgx.core.paths import CONF_DIR, SWEEPS_DIR

SCHEMA_PREFIX = "base_"  # the schemas conf/method/<name>.yaml extend: not options (kgx.__main__.refuse_schemas)


def closest(word: str, options: list[str]) -> list[str]:
    """The options nearest ``word`` by spelling, best first (at most three)."""
    return difflib.get_close_matches(word, options, n=3, cutoff=0.5)


def suggestion(word: str, options: list[str], prefix: str = "") -> str:
    near = closest(word, options)
    return f"; did you mean {' or '.join(prefix + n for n in near)}?" if near else ""


def group_options(group: str, given: list[str]) -> list[str]:
    """A config group's options as a user chooses them: no ``base_*`` schemas, and for ``sweeps``
    kgx's own files and the ones in ./sweeps."""
    options = [o for o in given if not o.startswith(SCHEMA_PREFIX)]
    if group == "sweeps":
        from pathlib import Path

        options += [p.stem for folder in (Path.cwd() / "sweeps", SWEEPS_DIR) for p in folder.glob("*.yaml")]
    elif not options and (CONF_DIR / group).is_dir():
        options = [p.stem for p in (CONF_DIR / group).glob("*.yaml")]
    return sorted(set(options))


def default_groups() -> set[str]:
    """The groups conf/config.yaml chooses from by default (``method=``); others are added (``+sweeps=``)."""
    from omegaconf import OmegaConf

    defaults = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "config.yaml").defaults)
    return {key.split("@")[0] for item in defaults if isinstance(item, dict) for key in item}


def missing_option(missing_cfg_file: str, options: list[str]) -> str:
    """``method=lmpp: no such method; did you mean lmp? (options: ...)``."""
    group, _, choice = missing_cfg_file.rpartition("/")
    shown = group_options(group, options)
    what = "sweep" if group == "sweeps" else group.rsplit("/", 1)[-1]
    given = group if group in default_groups() or group.startswith("hydra/") else f"+{group}"
    return f"{given}={choice}: no such {what}{suggestion(choice, shown)} (options: {', '.join(shown) or 'none'})"


def missing_key(full_key: str, object_type: Optional[type], method: str = "") -> str:
    """``method.dept: lmp has no setting 'dept'; did you mean method.depth?``."""
    parent, _, key = full_key.rpartition(".")
    known = [f.name for f in fields(object_type)] if object_type is not None and is_dataclass(object_type) else []
    owner = method if parent == "method" and method else (parent or "the config")
    listed = f" (its settings: {', '.join(known)})" if known and not closest(key, known) else ""
    near = suggestion(key, known, f"{parent}." if parent else "")
    return f"{full_key}: {owner} has no setting '{key}'{near}{listed}"


def message(exc: BaseException) -> Optional[str]:
    """kgx's line for an error Hydra raised composing the config (a typo gets the closest names,
    another composition error Hydra's own compact words), or None for any other exception."""
    from hydra.errors import CompactHydraException, ConfigCompositionException, MissingConfigException
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

    if isinstance(exc, MissingConfigException) and exc.missing_cfg_file:
        return missing_option(exc.missing_cfg_file, list(exc.options or []))
    cause = exc.__cause__
    if isinstance(exc, ConfigCompositionException) and isinstance(cause, (ConfigKeyError, ConfigAttributeError)):
        object_type = getattr(cause, "object_type", None)
        named = [f.default for f in fields(object_type) if f.name == "name"] if is_dataclass(object_type) else []
        return missing_key(str(cause.full_key), object_type, str(named[0]) if named else "")
    if isinstance(exc, CompactHydraException):
        detail = f": {str(cause).splitlines()[0]}" if isinstance(cause, OmegaConfBaseException) else ""
        return f"{exc}{detail}"
    return None
