"""The one LLM client every method uses, over litellm.

A method asks ``ctx.llm(stage, messages, schema=...)``; this module picks the stage's backbone,
serves the call from the response cache or the provider (retrying transient errors with
backoff: ``kgx.llm.retries``), checks structured output against its schema and the method's validator (retrying at
a higher temperature, LMP App. A.7), and meters and traces everything it did.

A reply is text from outside: it is cut at ``llm.max_reply_chars`` and cleaned
(``kgx.core.boundary``) as it arrives, and reaches the cache only once the caller has found it
valid (``keep``), so that an invalid reply is asked again rather than replayed by every rerun.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import litellm

from kgx.core.boundary import SECRETS, Repairs, clean
from kgx.core.config import LLMConfig
from kgx.core.masking import is_secret_key, masked_config
from kgx.core.run_identity import behaviours
from kgx.llm import bounded, pricing, providers
from kgx.llm.cache import Cache, cache_key
from kgx.llm.errors import LLMError
from kgx.llm.messages import Messages
from kgx.llm.oracle_gold import gold_params
from kgx.llm.ratelimit import RateLimiter, share
from kgx.llm.retries import send
from kgx.llm.structured import (
    JSON_OBJECT_SCHEMA,
    PROBE_MAX_TOKENS,
    PROBE_MESSAGES,
    PROMPTED,
    StructuredModes,
    backbone_key,
    response_format,
)


@dataclass
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: Optional[float]
    cached: bool
    retries: int
    truncated: bool = False  # the provider stopped at max_tokens (finish_reason "length")
    cut_from: int = 0  # the reply's length when it was cut at llm.max_reply_chars (0: not cut)
    repairs: Repairs = dataclasses.field(default_factory=Repairs)  # what the boundary changed in it
    key: str = ""  # its response-cache key, until ``LLMClient.keep`` stores it ("" once kept or uncached)
    timeouts: int = 0  # attempts before the reply cut at llm.timeout_s, billed all the same (kgx.llm.pricing)


class LLMClient:
    """Shared by all questions of a run: backbones per stage, cache, provider setup."""

    def __init__(
        self,
        llm: LLMConfig,
        stages: dict[str, LLMConfig],
        cache: Optional[Cache],
        seed: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        providers.install()
        for cfg in [llm, *stages.values()]:
            if cfg.api_key_env:
                SECRETS.add(os.environ.get(cfg.api_key_env), cfg.api_key_env)
            for key, value in cfg.extra.items():  # a key given as llm.extra.api_key=...
                if is_secret_key(key) and isinstance(value, (str, int)):
                    SECRETS.add(str(value), f"llm.extra.{key}")
        self.default = llm
        self.stages = stages
        self.cache = cache
        self.seed = seed
        self.sleep = sleep
        self.invocation = 0  # which invocation of the run this is (the scripted backbone's failures vary by it)
        self.modes = StructuredModes(self._probe_send)
        self.limiters = {
            cfg.name: RateLimiter(share(cfg.rpm), share(cfg.tpm), sleep=sleep)
            for cfg in self.backbones()
            if cfg.rpm or cfg.tpm
        }
        self._ceilings: dict[str, Optional[int]] = {}

    def backbone(self, stage: str) -> LLMConfig:
        return self.stages.get(stage, self.default)

    def backbones(self) -> list[LLMConfig]:
        return [self.default, *self.stages.values()]

    def prepare(self) -> None:
        """Pay one-time costs (litellm's lazy imports, model weights, tokenizers) before the
        clock starts, so that wall_s and the first questions' latency measure answering only.
        litellm's ``mock_response`` runs its whole call path without reaching any provider."""
        if any(providers.in_process(cfg.model) is None for cfg in self.backbones()):
            bounded.warm()  # a provider over HTTP: the call loop and its imports (kgx.llm.bounded)
        for cfg in self.backbones():
            litellm.completion(model=cfg.model, messages=[{"role": "user", "content": "ping"}], mock_response="ok")
            try:
                providers.prepare(cfg.model, dataclasses.asdict(cfg.local))
            except (FileNotFoundError, RuntimeError) as exc:
                raise LLMError(f"llm '{cfg.name}' ({cfg.model}) could not start: {exc}", "llm.local") from exc

    def preflight(self) -> int:
        """One tiny request to every distinct backbone of the run, before any question.

        A wrong key, model name or api_base then stops the run here, with the provider's own
        message, instead of turning every question into an error. Transient errors are retried
        as in a question; the response cache is bypassed (it proves nothing about the provider).
        For a backbone with ``structured_output: auto`` the probe of structured-output forms
        (StructuredModes.probe) is that request: its first request proves the same.
        Returns the number of requests sent, retries included; they are not part of any
        question's figures."""
        distinct: dict[str, LLMConfig] = {}
        # stage backbones often share a server; an auto one probes for all. The oracle answers only
        # with a question's gold, in process: there is nothing to reach ahead of the questions.
        for cfg in (c for c in self.backbones() if not providers.is_oracle(c.model)):
            if backbone_key(cfg) not in distinct or self.modes.unprobed(cfg):
                distinct[backbone_key(cfg)] = cfg
        sent = 0
        for cfg in distinct.values():
            try:
                if self.modes.unprobed(cfg):
                    sent += self.modes.probe(cfg)
                else:
                    request = self._request(cfg, PROBE_MESSAGES, 0.0, None, self.seed)
                    request["max_tokens"] = 8
                    sent += send(cfg, request, self.sleep).retries + 1
            except LLMError as exc:
                raise LLMError(f"pre-flight request failed, no question was run: {exc}", exc.kind) from exc
        return sent

    def structured_modes(self) -> dict[str, str]:
        """{backbone name: structured-output form} of the run's backbones, what ``auto`` chose
        included (``auto`` itself while pre-flight has not probed): a run tag."""
        return self.modes.chosen(self.backbones())

    def wants_gold(self) -> bool:
        """Whether a backbone of the run is the oracle, which needs each question's gold (``bind``)."""
        return any(providers.is_oracle(cfg.model) for cfg in self.backbones())

    def mode(self, cfg: LLMConfig) -> str:
        """How ``cfg`` gets a reply's schema: json_schema, json_object_schema or prompted."""
        return self.modes.of(cfg)

    def ceiling(self, cfg: LLMConfig) -> Optional[int]:
        """The most tokens ``cfg``'s model may generate in one reply, None when unknown: the
        context window for the in-process model (llama.cpp clips further to what the prompt
        leaves of it), else litellm's ``max_output_tokens`` for a model in its map."""
        if cfg.model.startswith(providers.LOCAL + "/"):
            return cfg.local.n_ctx
        if cfg.model not in self._ceilings:
            try:
                self._ceilings[cfg.model] = litellm.get_model_info(cfg.model).get("max_output_tokens")
            except Exception:  # not in litellm's map (served models, kgx's scripted double)
                self._ceilings[cfg.model] = None
        return self._ceilings[cfg.model]

    def limit(self, cfg: LLMConfig, asked: Optional[int]) -> int:
        """A request's max_tokens: the backbone's ``llm.max_tokens``, or more when a stage
        expects a longer reply (``asked``), but never more than the model allows."""
        if asked is None or asked <= cfg.max_tokens:
            return cfg.max_tokens
        top = self.ceiling(cfg)
        return asked if top is None else max(cfg.max_tokens, min(asked, top))

    def complete(
        self,
        cfg: LLMConfig,
        messages: Messages,
        temperature: float,
        response_schema: Optional[dict[str, Any]],
        sample: int,
        max_tokens: Optional[int] = None,
    ) -> Completion:
        """One call, from the cache or the provider; ``response_schema`` goes to response_format
        in the backbone's form (callers prompt with it instead for the prompted form),
        ``max_tokens`` is a stage's expected reply size (see ``limit``). An oracle backbone's call
        carries the question's gold, set around it by the question's LLM (kgx.llm.oracle_gold.given)."""
        seed = self.seed + sample
        limit = self.limit(cfg, max_tokens)
        mode = self.mode(cfg) if response_schema is not None else PROMPTED
        # The in-process model's settings (its file, threads, batch) can change its text.
        local = {"local": dataclasses.asdict(cfg.local)} if cfg.model.startswith(providers.LOCAL + "/") else {}
        # A server may enforce the two forms differently; json_schema keys stay as they were.
        form = {"form": mode} if mode == JSON_OBJECT_SCHEMA else {}
        # The oracle's reply depends on the question's gold: the request carries it, and so does the key.
        oracle = gold_params(cfg) if providers.is_oracle(cfg.model) else {}
        # The limit sent: the backbone's own unless a stage asked for more, so keys made before
        # stages could ask stay valid.
        cached = cfg.cache and self.cache is not None
        key = (
            cache_key(
                model=cfg.model,
                api_base=cfg.api_base,
                messages=messages,
                temperature=temperature,
                schema=response_schema,
                seed=seed,
                sample=sample,
                max_tokens=limit,
                extra=masked_config(cfg.extra),  # a credential in it changes no reply
                **local,
                **form,
                **oracle,
                # A double whose replies changed (its behaviour version, kgx.core.run_identity) is asked anew.
                **({"behaviours": versions} if (versions := behaviours([cfg.model])) else {}),
            )
            if cached
            else ""
        )
        start = time.perf_counter()
        if cached:
            hit = self.cache.get(key)
            # A reply cut at a smaller llm.max_reply_chars than this run's is asked again.
            if hit is not None and not (hit.get("cut_from") and cfg.max_reply_chars > len(hit["text"])):
                text, repairs = clean(hit["text"][: cfg.max_reply_chars])  # an entry older than the boundary
                return Completion(
                    text,
                    hit["input_tokens"],
                    hit["output_tokens"],
                    time.perf_counter() - start,
                    0.0,
                    True,
                    0,
                    bool(hit.get("truncated")),
                    int(hit.get("cut_from", 0)),
                    Repairs(**hit["repairs"]) if "repairs" in hit else repairs,
                )
        limiter = self.limiters.get(cfg.name)
        if limiter is not None:  # counted as the provider counts: prompt plus the completion budget
            limiter.acquire(pricing.prompt_tokens(messages) + limit)
        request = {**self._request(cfg, messages, temperature, response_schema, seed, mode, limit), **oracle}
        sent = send(cfg, request, self.sleep)
        response = sent.response
        if response is None or not getattr(response, "choices", None):  # litellm gives None for some 422s
            raise LLMError(
                f"llm '{cfg.name}' ({cfg.model}): the provider rejected the request (no completion came back)",
                "llm.bad_request",
                sent.timeouts,
            )
        raw = response.choices[0].message.content or ""
        text, repairs = clean(raw[: cfg.max_reply_chars])
        input_tokens, output_tokens, cost = pricing.reply_usage(cfg, messages, response, raw)
        return Completion(
            text,
            input_tokens,
            output_tokens,
            time.perf_counter() - start,
            cost,
            False,
            sent.retries,
            response.choices[0].finish_reason == "length",
            len(raw) if len(raw) > cfg.max_reply_chars else 0,
            repairs,
            key,
            sent.timeouts,
        )

    def keep(self, done: Completion) -> None:
        """Store a reply the caller found valid (or did not check) in the response cache. An invalid
        one is never stored: a rerun or a retry asks the provider again instead of replaying it."""
        if not done.key or self.cache is None:
            return
        self.cache.put(
            done.key,
            {
                "text": done.text,
                "input_tokens": done.input_tokens,
                "output_tokens": done.output_tokens,
                "truncated": done.truncated,
                "cut_from": done.cut_from,
                "repairs": dataclasses.asdict(done.repairs),
            },
        )
        done.key = ""

    def _request(
        self,
        cfg: LLMConfig,
        messages: Messages,
        temperature: float,
        response_schema: Optional[dict[str, Any]],
        seed: int,
        mode: str = PROMPTED,
        max_tokens: Optional[int] = None,
    ) -> dict[str, Any]:
        """litellm.completion's arguments; retries are ours, so litellm's own are off. ``extra``
        holds the rest: litellm sends OpenAI's own parameters by name (``api_key`` too, which then
        takes the place of ``api_key_env``'s) and others (repeat_penalty, top_k, min_p) as extra
        body fields to OpenAI-compatible servers; the ones set here are refused in the config
        (``kgx.core.config_checks.SET_BY_KGX``). ``max_tokens``: the limit ``limit`` chose
        (default the backbone's)."""
        kwargs: dict[str, Any] = dict(
            model=cfg.model,
            messages=messages,
            temperature=temperature,
            max_tokens=max_tokens or cfg.max_tokens,
            timeout=cfg.timeout_s,
            seed=seed,
            num_retries=0,
            **cfg.extra,
        )
        if response_schema is not None and mode != PROMPTED:
            kwargs["response_format"] = response_format(mode, response_schema)
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        # A key given as llm.extra.api_key is the one sent: it is in kwargs already.
        if cfg.api_key_env:
            kwargs.setdefault("api_key", os.environ.get(cfg.api_key_env, ""))
        elif cfg.api_base:
            kwargs.setdefault("api_key", "none")  # local OpenAI-compatible servers accept any key
        if providers.simulated(cfg.model):
            kwargs.update(latency_s=cfg.latency_s, failure_rate=cfg.failure_rate, invocation=self.invocation)
        if cfg.model.startswith(providers.LOCAL + "/"):
            kwargs["local"] = dataclasses.asdict(cfg.local)
        return kwargs

    def _probe_send(
        self, cfg: LLMConfig, mode: str, messages: Messages, schema: Optional[dict[str, Any]]
    ) -> tuple[str, int]:
        """One of StructuredModes' probe requests: (reply text, requests sent)."""
        request = self._request(cfg, messages, 0.0, schema, self.seed, mode)
        request["max_tokens"] = PROBE_MAX_TOKENS
        sent = send(cfg, request, self.sleep)
        choices = getattr(sent.response, "choices", None)  # litellm gives None for some 422s
        return (choices[0].message.content or "") if choices else "", sent.retries + 1
