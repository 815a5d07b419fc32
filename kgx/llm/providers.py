"""kgx's own litellm providers: the local llama.cpp model and the scripted test double."""
from __future__ import annotations

import logging
from typing import Any

import litellm

LOCAL = "kgx-local"
SCRIPTED = "kgx-scripted"

_handlers: dict[str, object] = {}


def register() -> None:
    """Add kgx's providers to litellm once per process, keeping any the user registered."""
    if _handlers:
        return
    from kgx.llm.local import LocalLlama
    from kgx.llm.scripted import ScriptedLLM

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)
    litellm.suppress_debug_info = True
    litellm.drop_params = True  # e.g. `seed` for providers that do not take it
    _handlers.update({LOCAL: LocalLlama(), SCRIPTED: ScriptedLLM()})
    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        *({"provider": name, "custom_handler": handler} for name, handler in _handlers.items()),
    ]


def prepare(model: str, options: dict[str, Any]) -> None:
    """Load what a kgx provider needs (model weights, tokenizer) ahead of the first request;
    ``options`` are the provider's own settings (``llm.local`` for the local model)."""
    register()
    handler = _handlers.get(model.split("/")[0])
    if handler is not None:
        handler.prepare(options)
