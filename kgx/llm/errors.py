"""The two ways an LLM call ends without a usable reply: the call could not be made (``LLMError``,
an infrastructure error the circuit breaker counts) or its output stayed invalid (``OutputError``,
which methods answer with their documented fallback)."""

from __future__ import annotations

import os
from typing import Iterable

from kgx.core.config import LLMConfig
from kgx.core.faults import InfraError


class LLMError(InfraError):
    """A call that cannot be made: no API key, a provider that refuses the request, or
    transient errors past the retry budget. ``kind`` says which (``llm.auth``, ...);
    ``timeouts`` how many of its attempts were cut at ``llm.timeout_s`` after the provider had
    the request (kgx.llm.retries): they are billed."""

    def __init__(self, message: str, kind: str = "llm.error", timeouts: int = 0):
        super().__init__(message, kind)
        self.timeouts = timeouts


class OutputError(ValueError):
    """Output that stayed unparseable or invalid through every retry; methods decide the fallback."""

    def __init__(self, stage: str, reason: str, text: str):
        super().__init__(f"stage '{stage}': {reason}")
        self.stage = stage
        self.text = text


def check_keys(backbones: Iterable[LLMConfig]) -> None:
    """Fail before any question runs when a hosted backbone has no API key (and before litellm
    is imported: bad input is told in a second). A key given as ``llm.extra.api_key`` is sent
    in place of ``api_key_env``'s."""
    for cfg in backbones:
        if cfg.api_key_env and "api_key" not in cfg.extra and not os.environ.get(cfg.api_key_env):
            raise LLMError(
                f"llm '{cfg.name}' ({cfg.model}) needs an API key: set the environment variable {cfg.api_key_env}",
                "llm.auth",
            )
