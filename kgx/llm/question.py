"""``ctx.llm``: one question's view of the run's LLM client.

Each call is metered per stage (``Usage``) and traced verbatim; structured output is parsed and
checked against its schema and the method's validator, and invalid output is asked again at a
temperature ``llm.retry_temperature_step`` higher (LMP App. A.7), at most the method's retries.
A stage that expects a long reply asks for its size (``max_tokens``); a reply the provider cut
at the limit is named so when it fails, and is asked again with twice the limit. What the text
boundary changed in a reply (``kgx.core.boundary``: a cut at ``llm.max_reply_chars``, lone
surrogates, echoed secrets) is noted in the trace and counted; only a valid reply is cached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from kgx.core.boundary import Repairs, clean_value
from kgx.core.config import LLMConfig
from kgx.core.trace import LLMEvent, Trace
from kgx.core.usage import Usage
from kgx.llm import pricing
from kgx.llm.client import Completion, LLMClient
from kgx.llm.errors import LLMError, OutputError
from kgx.llm.messages import Messages, Validator
from kgx.llm.meter import Meter
from kgx.llm.oracle_gold import given
from kgx.llm.structured import PROMPTED, parse_json, with_schema_instruction

if TYPE_CHECKING:
    from kgx.diagnose.gold_path import GoldHint
    from kgx.llm.oracle_evidence import Evidence


class QuestionLLM:
    """``ctx.llm`` for one question: every call is metered per stage and traced. ``gold`` is the
    question's gold path, which only an oracle backbone is sent (``llm=oracle``)."""

    def __init__(self, client: LLMClient, meter: Meter, trace: Trace, gold: Optional["GoldHint"] = None):
        self.client = client
        self.meter = meter
        self.trace = trace
        self.gold = gold
        self.evidence: Optional["Evidence"] = None
        if gold is not None:  # the oracle answers only from what the method's KG calls returned
            from kgx.llm.oracle_evidence import Evidence

            self.evidence = Evidence(gold)
            trace.watch = self.evidence.watch

    def __call__(
        self,
        stage: str,
        messages: Messages,
        *,
        temperature: Optional[float] = None,
        schema: Optional[dict[str, Any]] = None,
        n: int = 1,
        validate: Optional[Validator] = None,
        retries: Optional[int] = None,
        max_tokens: Optional[int] = None,
    ) -> Any:
        """Text, or the parsed JSON when a schema is given; a list of n results when n > 1, where
        a sample whose output stayed invalid is its OutputError (one bad sample spoils no other).

        ``validate`` may normalise the parsed value or raise ValueError (e.g. a relation that
        is not among the candidates); either failure is retried like invalid JSON, at most
        ``retries`` times (default: the backbone's ``parse_retries``). ``max_tokens`` is the
        reply size the stage expects: the request asks for it where it exceeds the backbone's
        ``llm.max_tokens`` (``LLMClient.limit``).
        """
        if n > 1:
            return [
                self._sample(stage, messages, temperature, schema, validate, sample, retries, max_tokens)
                for sample in range(n)
            ]
        return self._one(stage, messages, temperature, schema, validate, 0, retries, max_tokens)

    def retries(self, stage: str) -> int:
        """The stage backbone's ``parse_retries``, for a method that runs its own retry loop
        (e.g. asking only for what a short reply missed)."""
        return self.client.backbone(stage).parse_retries

    def retry_step(self, stage: str) -> float:
        """The stage backbone's ``retry_temperature_step``: how much warmer each retry asks."""
        return self.client.backbone(stage).retry_temperature_step

    def discard(self, stage: str, reason: str, **data: Any) -> None:
        """Count a part of an accepted reply that had to be dropped (e.g. one invented relation
        among valid ones) as a parse failure, without spending a retry on it."""
        self.meter.record(stage, Usage(parse_failures=1))
        self.trace.note(stage, f"discarded: {reason}", **data)

    def _sample(self, *args: Any) -> Any:
        """One of n samples: its result, or the OutputError it ended in."""
        try:
            return self._one(*args)
        except OutputError as exc:
            return exc

    def _one(
        self,
        stage: str,
        messages: Messages,
        temperature: Optional[float],
        schema: Optional[dict[str, Any]],
        validate: Optional[Validator],
        sample: int,
        retries: Optional[int] = None,
        max_tokens: Optional[int] = None,
    ) -> Any:
        cfg = self.client.backbone(stage)
        limit = self.client.limit(cfg, max_tokens)
        prompted = schema is not None and self.client.mode(cfg) == PROMPTED
        if prompted:
            messages = with_schema_instruction(messages, schema)
        base = cfg.temperature if temperature is None else temperature
        checked = schema is not None or validate is not None
        attempts = (cfg.parse_retries if retries is None else retries) + 1 if checked else 1
        reason = ""
        text = ""
        for attempt in range(attempts):
            temp = min(2.0, base + attempt * cfg.retry_temperature_step)
            try:
                gold = self.evidence.hint(self.gold) if self.evidence and self.gold else self.gold
                with given(gold):
                    done = self.client.complete(cfg, messages, temp, None if prompted else schema, sample, limit)
            except LLMError as exc:
                self._record(stage, cfg, messages, temp, None, attempt, str(exc), limit, exc.timeouts)
                raise
            text = done.text
            self._boundary(stage, cfg, done)
            try:
                value = parse_json(text, schema) if schema is not None else text
                if schema is not None and "\\u" in text:  # an escape may decode to a surrogate or a secret
                    value, repairs = clean_value(value)
                    self._noted(stage, repairs, "parsed reply")
                if validate is not None:
                    value = validate(value)
            except ValueError as exc:
                # A cut reply fails for want of room, whatever the JSON error says.
                reason = f"truncated at max_tokens={limit} ({exc})" if done.truncated else str(exc)
                self._record(stage, cfg, messages, temp, done, attempt, reason, limit)
                if done.truncated and attempt + 1 < attempts:
                    limit = self._widen(stage, cfg, limit)
                continue
            self._record(stage, cfg, messages, temp, done, attempt, "", limit)
            self.client.keep(done)
            return value
        raise OutputError(stage, f"invalid output after {attempts} tries: {reason}", text)

    def _boundary(self, stage: str, cfg: LLMConfig, done: Completion) -> None:
        """Note what the boundary changed in a reply as it arrived; its counts go to the usage."""
        if done.cut_from:
            self.trace.note(
                stage,
                f"reply cut at llm.max_reply_chars={cfg.max_reply_chars} (it had {done.cut_from} characters)",
                chars=done.cut_from,
            )
        self._noted(stage, done.repairs, "reply")

    def _noted(self, stage: str, repairs: Repairs, what: str) -> None:
        if repairs:
            self.trace.note(stage, f"{what} made storable: {repairs.describe()}", **vars(repairs))
            self.meter.record(stage, Usage(unstorable_chars=repairs.replaced, secrets_redacted=repairs.redacted))

    def _widen(self, stage: str, cfg: LLMConfig, limit: int) -> int:
        """The limit for the retry of a reply cut at ``limit``: asked again at the same limit it
        would be cut again, so twice as many tokens, as far as the model allows."""
        wider = self.client.limit(cfg, 2 * limit)
        then = (
            f"the retry asks for max_tokens={wider}"
            if wider > limit
            else "the retry cannot ask for more: the model allows no more"
        )
        self.trace.note(stage, f"reply truncated at max_tokens={limit}: {then}", max_tokens=wider)
        return wider

    def _record(
        self,
        stage: str,
        cfg: LLMConfig,
        messages: Messages,
        temperature: float,
        done: Optional[Completion],
        attempt: int,
        error: str,
        max_tokens: int,
        timeouts: int = 0,
    ) -> None:
        """Meter and trace one call; attempts of it cut at ``llm.timeout_s`` (``timeouts``, those of
        a call that failed) are billed too, though they brought no reply (kgx.llm.pricing)."""
        usage = Usage(
            calls=1,
            parse_failures=int(bool(error) and done is not None),
            truncated=int(bool(done and done.truncated)),
            replies_cut=int(bool(done and done.cut_from)),
        )
        if done is not None:
            usage.input_tokens = done.input_tokens
            usage.output_tokens = done.output_tokens
            usage.latency_s = done.latency_s
            usage.retries = done.retries
            if done.cached:
                usage.cached_calls = 1
            else:
                usage.billed_calls = 1
                usage.billed_input_tokens = done.input_tokens
                usage.billed_output_tokens = done.output_tokens
                if done.cost_usd is None:
                    usage.unpriced_calls = 1
                else:
                    usage.cost_usd = done.cost_usd
        timeouts = done.timeouts if done is not None else timeouts
        self.meter.record(stage, usage + pricing.timed_out(cfg, messages, timeouts) if timeouts else usage)
        self.trace.add(
            LLMEvent(
                stage=stage,
                model=cfg.model,
                messages=messages,
                response=done.text if done else "",
                temperature=temperature,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                latency_s=usage.latency_s,
                cost_usd=None if done is None else (0.0 if done.cached else done.cost_usd),
                cached=bool(done and done.cached),
                retries=usage.retries,
                attempt=attempt,
                error=error,
                max_tokens=max_tokens,
                truncated=bool(usage.truncated),
            )
        )
