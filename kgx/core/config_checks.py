"""The checks config schemas share (kgx.core.config): the error they raise, and the parsers of
settings that come in several schemas, so each reads alike wherever it is given."""

from __future__ import annotations

from typing import Optional


class ConfigError(ValueError):
    """A config value that composes but cannot be run; the message names the field."""


def check_choice(where: str, value: str, options: tuple[str, ...]) -> None:
    if value not in options:
        raise ConfigError(f"{where}={value}: choose one of {', '.join(options)}")


def check_temperature(where: str, value: float) -> None:
    if not 0.0 <= value <= 2.0:
        raise ConfigError(f"{where}={value}: a temperature must lie in [0, 2]")


def question_share(where: str, value: object) -> str:
    """A setting naming which questions get something: all, off, or N (the first N in dataset order)."""
    text = "off" if str(value).lower() in ("off", "false") else str(value)  # YAML reads a bare off as false
    if text not in ("all", "off") and not (text.isascii() and text.isdigit()):
        raise ConfigError(f"{where}={text}: use all, off, or a number N (the first N questions in dataset order)")
    return text


def share_size(setting: str, total: Optional[int] = None) -> float:
    """How many of ``total`` questions (unbounded when None) a :func:`question_share` names."""
    size = float("inf") if setting == "all" else 0 if setting == "off" else int(setting)
    return size if total is None else min(size, total)
