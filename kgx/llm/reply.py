"""The reply kgx's in-process providers fill in (``kgx.llm.providers``): a plain dataclass where
litellm would build its pydantic ``ModelResponse``. Apart from the provider registry so that the
providers (local, scripted, oracle) depend on it and the registry on them, not both ways."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from litellm import Usage


@dataclass
class Message:
    content: str = ""
    role: str = "assistant"


@dataclass
class Choice:
    message: Message = field(default_factory=Message)
    finish_reason: str = "stop"


@dataclass
class Tokens:
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Reply:
    """The part of litellm's ``ModelResponse`` that kgx's providers fill in and kgx reads
    (``choices[0].message.content``, ``choices[0].finish_reason``, ``usage``, ``model``):
    building a ModelResponse took 45 µs, a twentieth of a scripted question."""

    choices: list[Choice] = field(default_factory=lambda: [Choice()])
    usage: Any = None
    model: str = ""


def usage(response: Any, prompt_tokens: int, completion_tokens: int) -> Any:
    """A reply's token counts: plain ``Tokens`` in a ``Reply``, litellm's ``Usage`` (a pydantic
    model, 15 µs to build) in the ModelResponse of a handler litellm itself called."""
    if isinstance(response, Reply):
        return Tokens(prompt_tokens, completion_tokens)
    return Usage(
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, total_tokens=prompt_tokens + completion_tokens
    )
