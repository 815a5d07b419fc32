"""Sending one request to the provider, retrying what may pass by itself.

litellm's own retries are off (``num_retries=0`` in every request): here a rate limit, a timeout,
a server error or a dropped connection is retried with exponential backoff and jitter, up to
``llm.max_retries``; a refused key, a missing model or a request the provider rejects fails at
once. Either way the error that ends it is an LLMError whose kind (``llm.auth``,
``llm.rate_limit``, ...) says what failed, in the provider's own words, cleaned at the text
boundary (``kgx.core.boundary``: a body echoing the API key shows ``[secret NAME]``). The
provider's exception is not chained to it: its raw text would reach the question's traceback.

An attempt cut at ``llm.timeout_s`` after its request was sent is counted (``Sent.timeouts``,
``LLMError.timeouts``): the provider may have done the work and billed it all the same, so the
client bills it too (``LLMClient.timed_out``). One that never connected is not.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

import httpx
import litellm

from kgx.core.boundary import clean_text
from kgx.core.config import LLMConfig
from kgx.core.masking import masked_url
from kgx.llm import bounded, providers
from kgx.llm.errors import LLMError

# (exception, kind, retried): the first that matches wins, so subclasses come before their bases.
# Only what may pass by itself is retried; a refused key, a missing model or a request the
# provider rejects fails the same way however often it is sent.
ERROR_KINDS: tuple[tuple[type[Exception], str, bool], ...] = (
    (litellm.AuthenticationError, "llm.auth", False),  # 401
    (litellm.PermissionDeniedError, "llm.auth", False),  # 403
    (litellm.NotFoundError, "llm.not_found", False),  # 404
    (litellm.ContextWindowExceededError, "llm.context_window", False),
    (litellm.UnprocessableEntityError, "llm.bad_request", False),  # 422
    (litellm.BadRequestError, "llm.bad_request", False),  # 400
    (litellm.RateLimitError, "llm.rate_limit", True),  # 429
    (litellm.Timeout, "llm.timeout", True),
    (litellm.APIConnectionError, "llm.unreachable", True),
    (litellm.InternalServerError, "llm.server", True),
    (litellm.ServiceUnavailableError, "llm.server", True),
    (litellm.BadGatewayError, "llm.server", True),
)

STATUS_KINDS: dict[int, tuple[str, bool]] = {
    400: ("llm.bad_request", False),
    401: ("llm.auth", False),
    403: ("llm.auth", False),
    404: ("llm.not_found", False),
    408: ("llm.timeout", True),
    413: ("llm.bad_request", False),
    422: ("llm.bad_request", False),
    429: ("llm.rate_limit", True),
}


def error_kind(exc: Exception) -> tuple[str, bool]:
    """``(kind, retried)`` for an exception litellm raised; unknown ones are not retried.

    litellm's exception type depends on the body's wording as well as the status (a 404 "model
    does not exist" comes as BadRequestError, a 403 as the generic APIError), so the HTTP status
    decides where there is one. A 500 whose body is a
    validation error (some servers answer a bad request that way) is a bad request. A server
    that cannot be reached comes as a 500 too (openai/, hosted_vllm/, ollama_chat/ models): the
    exception's causes tell."""
    if _connection_failed(exc):
        return "llm.unreachable", True
    status = getattr(exc, "status_code", None)
    kind, retried = "llm.error", False
    for cls, known, again in ERROR_KINDS:
        if isinstance(exc, cls):
            kind, retried = known, again
            break
    if kind != "llm.context_window" and isinstance(status, int):
        kind, retried = STATUS_KINDS.get(status, ("llm.server", True) if status >= 500 else (kind, retried))
    if kind == "llm.server" and "validation" in str(exc).lower():
        return "llm.bad_request", False
    return kind, retried


def _connection_failed(exc: BaseException) -> bool:
    """Whether a refused or dropped connection caused ``exc``."""
    return _caused_by(exc, (httpx.ConnectError, ConnectionError))


def _caused_by(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether one of ``kinds`` caused ``exc`` (the chain is short; bounded anyway)."""
    cause = exc.__cause__ or exc.__context__
    for _ in range(16):
        if cause is None:
            return False
        if isinstance(cause, kinds):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def timed_out_after_sending(exc: Exception, kind: str) -> bool:
    """A timeout of a request the provider had received: its deadline, or a read that never came
    (not a connection or a pool slot that never came: then nothing was sent)."""
    return kind == "llm.timeout" and not _caused_by(exc, (httpx.ConnectTimeout, httpx.PoolTimeout))


@dataclass
class Sent:
    response: Any  # litellm.completion's reply (a ``Reply`` from a kgx provider)
    retries: int  # transient errors retried before it
    timeouts: int  # of them, attempts cut at the deadline after sending: maybe billed (see above)


def send(cfg: LLMConfig, kwargs: dict[str, Any], sleep: Callable[[float], None]) -> Sent:
    """litellm.completion's reply to ``kwargs`` (or an in-process provider's) and what it took;
    ``sleep`` waits out each backoff. A provider's call ends by ``llm.timeout_s`` however its
    server sends (``kgx.llm.bounded``); an in-process model is bounded by max_tokens."""
    timeouts = 0
    for retry in range(cfg.max_retries + 1):
        try:
            if providers.simulated(cfg.model):
                kwargs["attempt"] = retry
            # litellm's own mock_response (tests, `llm.extra`) is litellm's to answer
            handler = None if "mock_response" in kwargs else providers.in_process(cfg.model)
            if handler is not None:
                return Sent(providers.complete(handler, kwargs), retry, timeouts)
            return Sent(bounded.completion(kwargs, cfg.timeout_s), retry, timeouts)
        except Exception as exc:
            kind, retried = error_kind(exc)
            timeouts += timed_out_after_sending(exc, kind)
            if not retried or retry == cfg.max_retries:
                tries = f" after {retry + 1} attempts" if retried else ""
                raise LLMError(
                    f"llm '{cfg.name}' ({cfg.model}{' at ' + masked_url(cfg.api_base) if cfg.api_base else ''}): "
                    f"{type(exc).__name__}{tries}: {_provider_message(exc)}",
                    kind,
                    timeouts,
                ) from None
            sleep(cfg.backoff_s * 2**retry * (0.5 + random.random()))
    raise AssertionError("unreachable")


def _provider_message(exc: Exception) -> str:
    """The provider's own words, without litellm's boilerplate around them."""
    text = str(getattr(exc, "message", "") or exc)
    return clean_text(text.replace("litellm.", "", 1))[:1000]
