"""One provider call within ``llm.timeout_s``, from the request to the reply's last byte.

litellm hands ``timeout`` to httpx, which applies it to each socket read: a server that sends one
byte every 0.25 s never trips it, and held each call ~65 s at ``timeout_s=3``. So
the call runs as ``litellm.acompletion`` on one event loop shared by the process, under
``asyncio.timeout``: at the deadline the task is cancelled, which closes its connection (the
server sees the client hang up), and the caller gets ``litellm.Timeout`` -- an ``llm.timeout``
error that ``kgx.llm.retries`` retries and the circuit breaker counts. Nothing is left running:
an abandoned call holds no thread, and the loop's one thread serves every call of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import threading
from typing import Any, Optional

import litellm

GRACE_S = 5.0  # the caller's own wait past the deadline, should the loop itself be stalled
# Imported by the first call to an OpenAI-compatible server (~2.5 s on a busy machine): imported
# ahead, so that no deadline is spent on them. Best effort: another litellm may lay them out otherwise.
FIRST_CALL_IMPORTS = ("openai.resources.chat", "litellm.proxy.openai_files_endpoints.common_utils")

_lock = threading.Lock()
_loop: Optional[asyncio.AbstractEventLoop] = None
_owner = 0  # the process that started ``_loop`` (a forked child starts its own)


def warm() -> asyncio.AbstractEventLoop:
    """The process's call loop, started on first use together with the async path's one-time
    costs (imports, litellm's executor, ~1 s), so that no deadline is spent on them."""
    global _loop, _owner
    with _lock:
        if _loop is None or _owner != os.getpid():
            for module in FIRST_CALL_IMPORTS:
                with contextlib.suppress(ImportError):
                    importlib.import_module(module)
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="kgx-llm-calls", daemon=True).start()
            ping = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "ping"}], "mock_response": "ok"}
            asyncio.run_coroutine_threadsafe(litellm.acompletion(**ping), loop).result()
            _loop, _owner = loop, os.getpid()
        return _loop


def _timeout(request: dict[str, Any], seconds: float) -> litellm.Timeout:
    provider = request["model"].split("/")[0]
    return litellm.Timeout(
        message=f"no complete reply within llm.timeout_s={seconds:g} s (the whole call, however the server "
        f"sends it); raise llm.timeout_s if the model is only slow",
        model=request["model"],
        llm_provider=provider,
    )


async def _within(request: dict[str, Any], seconds: float) -> Any:
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await litellm.acompletion(**request)
    except TimeoutError:
        if scope.expired():
            raise _timeout(request, seconds) from None
        raise


def completion(request: dict[str, Any], seconds: float) -> Any:
    """``litellm.completion(**request)``, raising ``litellm.Timeout`` once ``seconds`` have passed."""
    future = asyncio.run_coroutine_threadsafe(_within(request, seconds), warm())
    try:
        return future.result(timeout=seconds + GRACE_S)
    except TimeoutError:
        future.cancel()
        raise _timeout(request, seconds) from None
