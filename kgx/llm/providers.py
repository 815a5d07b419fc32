"""kgx's own litellm providers: the local llama.cpp model and the scripted test double."""
from __future__ import annotations

import logging

import litellm

LOCAL = "kgx-local"
SCRIPTED = "kgx-scripted"

_registered = False


def register() -> None:
    """Add kgx's providers to litellm once per process, keeping any the user registered."""
    global _registered
    if _registered:
        return
    from kgx.llm.local import LocalLlama
    from kgx.llm.scripted import ScriptedLLM

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)
    litellm.suppress_debug_info = True
    litellm.drop_params = True  # e.g. `seed` for providers that do not take it
    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": LOCAL, "custom_handler": LocalLlama()},
        {"provider": SCRIPTED, "custom_handler": ScriptedLLM()},
    ]
    _registered = True
