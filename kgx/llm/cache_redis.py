"""LLM responses on a Redis server several machines share (``run.cache_url=redis://...``).

The sqlite file under ``run.cache_dir`` serves one machine; a sweep spread over machines would
otherwise pay for every call once per machine. Here the keys are the sqlite cache's
(``kgx.llm.cache.cache_key``) under the prefix ``kgx:llm:``, so other tools sharing the server
keep to their own names, and the values are the same JSON text, kept without expiry: a rerun on
any machine that shares the server bills nothing. A SET is atomic, so parallel writers (threads,
processes, machines) never leave half a value; two writers of one key store the same response.

The server is pinged when the cache opens, before any question: an unreachable server, a refused
password or a missing ``redis`` package stops the run with a ConfigError naming the URL, its
password masked (``kgx.core.masking.masked_url``) here as in every log. Mid-run, the cache only saves
calls, as with a damaged sqlite file: the first error is warned about once (CacheUnavailable),
the process stops using the server and the provider answers instead; it does not reconnect, so
a flapping server cannot slow every question down by a timeout.
"""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any, Optional

from kgx.core.boundary import SECRETS
from kgx.core.config import ConfigError
from kgx.core.masking import masked_url, url_secrets

PREFIX = "kgx:llm:"
# A dead server answers a connect at once (refused); a hung one must not hold a question longer.
TIMEOUT_S = 5.0


class CacheUnavailable(RuntimeWarning):
    """The Redis response cache failed mid-run; the process no longer uses it."""


class RedisCache:
    """The :class:`kgx.llm.cache.ResponseCache` interface on one Redis database.

    redis-py's client is thread-safe (a pool of connections), so threads share it. A brief blip
    (a connection the server closed while idle) is retried twice within a second by the client;
    an error that outlasts that takes the cache out of use.
    """

    def __init__(self, url: str, prefix: str = PREFIX):
        self.url = masked_url(url)
        self.prefix = prefix
        self._secrets = url_secrets(url)
        for secret in self._secrets:
            SECRETS.add(secret, "run.cache_url")
        try:
            import redis
            from redis.backoff import ExponentialBackoff
            from redis.retry import Retry
        except ImportError:
            raise ConfigError(
                f"run.cache_url={self.url}: a Redis response cache needs the redis package: pip install 'kgx[redis]'"
            ) from None
        self._errors = (redis.RedisError,)
        self._lock = threading.Lock()
        self._usable = True  # false after an error mid-run: every get misses, every put is skipped
        try:
            self._client = redis.Redis.from_url(
                url,
                socket_timeout=TIMEOUT_S,
                socket_connect_timeout=TIMEOUT_S,
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 2),
            )
            self._client.ping()
        except (redis.RedisError, ValueError) as exc:  # ValueError: a URL redis-py cannot parse
            raise ConfigError(
                f"run.cache_url={self.url}: cannot use the Redis response cache "
                f"({self._safe(exc)}); start the server, fix the URL, or leave run.cache_url "
                f"empty for the local sqlite file"
            ) from None

    def get(self, key: str) -> Optional[dict[str, Any]]:
        """The stored response; None when there is none, it is not a JSON object, or the cache
        is out of use."""
        if not self._usable:
            return None
        try:
            raw = self._client.get(self.prefix + key)
        except self._errors as exc:
            self._give_up(exc)
            return None
        try:
            value = json.loads(raw) if raw is not None else None
        except (ValueError, TypeError):  # garbled bytes
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store a response; skipped once the cache is out of use."""
        if not self._usable:
            return
        try:
            self._client.set(self.prefix + key, json.dumps(value))
        except self._errors as exc:
            self._give_up(exc)

    def _give_up(self, exc: BaseException) -> None:
        """Take the cache out of use, warning once however many threads fail at the same time;
        the warning points at the caller's line (stacklevel 3)."""
        with self._lock:
            if not self._usable:
                return
            self._usable = False
        warnings.warn(
            f"LLM response cache {self.url} failed ({self._safe(exc)}): this process no longer "
            f"uses the cache; the provider answers instead",
            CacheUnavailable,
            stacklevel=3,
        )

    def _safe(self, exc: BaseException) -> str:
        """The error as text, without the URL's password should the driver ever repeat it."""
        text = f"{type(exc).__name__}: {exc}"
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text
