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


# Arguments of litellm's completion call that kgx sets itself in every request (kgx.llm.client),
# with where to set each instead: under ``llm.extra`` one would clash with kgx's own value.
SET_BY_KGX: dict[str, str] = {
    "model": "use llm.model",
    "messages": "they are the method's prompts",
    "temperature": "use llm.temperature",
    "max_tokens": "use llm.max_tokens",
    "max_completion_tokens": "use llm.max_tokens",
    "timeout": "use llm.timeout_s",
    "num_retries": "use llm.max_retries",
    "max_retries": "use llm.max_retries",
    "seed": "use run.seed",
    "response_format": "use llm.structured_output",
    "api_base": "use llm.api_base",
    "base_url": "use llm.api_base",
    "local": "use llm.local.*",
    "latency_s": "use llm.latency_s",
    "failure_rate": "use llm.failure_rate",
}


def check_extra(extra: dict[str, object]) -> None:
    """``llm.extra`` is sent as it is (kgx.llm.client): a key kgx sets itself cannot be, and is
    refused before the run, naming the setting to use instead."""
    for key in extra:
        if key in SET_BY_KGX:
            raise ConfigError(f"llm.extra.{key}: kgx sets {key} in every request itself; {SET_BY_KGX[key]}")
