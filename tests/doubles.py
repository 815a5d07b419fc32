"""The one LLM test double of the test suite: it stands in for ``ctx.llm`` (``QuestionLLM``).

Replies come per stage, from a list (used in order; an exception in it is raised) or from a
function of the :class:`Call`. Like the real client, each reply is checked against the call's
JSON schema and its ``validate`` function, and an invalid one is asked again, at most
``retries`` times (the method's policy; 5 when the method leaves it to the backbone), before
:class:`~kgx.llm.errors.OutputError`. Every call and every discarded choice is recorded, so a
test asserts real call counts, prompts and temperatures. Tests that need the whole client
(caching, metering, retries at rising temperature) use the scripted backbone instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

import jsonschema

from kgx.core.trace import Trace
from kgx.llm.errors import OutputError

DEFAULT_RETRIES = 5


@dataclass
class Call:
    stage: str
    messages: list[dict[str, str]]
    schema: Optional[dict[str, Any]]
    temperature: Optional[float]
    retries: Optional[int]
    attempt: int = 0  # 0 = first try, then one more per invalid reply
    sample: int = 0  # self-consistency's n samples
    max_tokens: Optional[int] = None  # the reply size the stage asked room for (None: the backbone's)

    @property
    def prompt(self) -> str:
        return self.messages[-1]["content"]


Responder = Callable[[Call], Any]


@dataclass
class FakeLLM:
    """``FakeLLM(answer=[{...}], sampling=lambda call: {...})``; ``default`` answers any other stage."""

    replies: dict[str, list[Any] | Responder] = field(default_factory=dict)
    default: Optional[Responder] = None
    trace: Optional[Trace] = None  # discards are noted here too, as the client notes them
    check_schema: bool = True
    calls: list[Call] = field(default_factory=list)
    discards: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def __init__(
        self,
        default: Optional[Responder] = None,
        trace: Optional[Trace] = None,
        check_schema: bool = True,
        **replies: list[Any] | Responder,
    ):
        self.replies = {stage: list(r) if isinstance(r, (list, tuple)) else r for stage, r in replies.items()}
        self.default, self.trace, self.check_schema = default, trace, check_schema
        self.calls, self.discards = [], []

    def __call__(
        self,
        stage: str,
        messages: list[dict[str, str]],
        *,
        temperature: Optional[float] = None,
        schema: Optional[dict[str, Any]] = None,
        n: int = 1,
        validate: Optional[Callable[[Any], Any]] = None,
        retries: Optional[int] = None,
        max_tokens: Optional[int] = None,
    ) -> Any:
        if n > 1:
            return [
                self._one(stage, messages, temperature, schema, validate, retries, sample, max_tokens)
                for sample in range(n)
            ]
        return self._one(stage, messages, temperature, schema, validate, retries, 0, max_tokens)

    def _one(self, stage, messages, temperature, schema, validate, retries, sample, max_tokens) -> Any:
        reason, value = "", None
        for attempt in range((DEFAULT_RETRIES if retries is None else retries) + 1):
            call = Call(stage, messages, schema, temperature, retries, attempt, sample, max_tokens)
            self.calls.append(call)
            value = self._reply(call)
            try:
                if self.check_schema and schema is not None:
                    jsonschema.validate(value, schema)
                return validate(value) if validate else value
            except (ValueError, jsonschema.ValidationError) as exc:
                reason = str(exc).splitlines()[0]
        raise OutputError(stage, f"invalid output: {reason}", json.dumps(value, default=str))

    def _reply(self, call: Call) -> Any:
        source = self.replies.get(call.stage, self.default)
        if source is None:
            raise AssertionError(f"no reply scripted for stage {call.stage!r}")
        reply = source.pop(0) if isinstance(source, list) else source(call)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def discard(self, stage: str, reason: str, **data: Any) -> None:
        self.discards.append((stage, reason, data))
        if self.trace is not None:
            self.trace.note(stage, f"discarded: {reason}", **data)

    def retries(self, stage: str) -> int:
        return DEFAULT_RETRIES

    def retry_step(self, stage: str) -> float:
        return 0.2

    def stages(self) -> list[str]:
        return [c.stage for c in self.calls]

    def prompts(self, stage: str) -> list[str]:
        return [c.prompt for c in self.calls if c.stage == stage]
