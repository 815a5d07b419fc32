"""kgx's own litellm providers: the local llama.cpp model, the scripted test double and the oracle
(the scripted double driven by the question's gold path, for method ceilings)."""

from __future__ import annotations

import logging
from typing import Any, Optional

import litellm
from litellm import CustomLLM
from litellm.litellm_core_utils.exception_mapping_utils import exception_type

from kgx.llm.reply import Reply

LOCAL = "kgx-local"
SCRIPTED = "kgx-scripted"
ORACLE = "kgx-oracle"

_handlers: dict[str, CustomLLM] = {}
# litellm.completion's arguments that are not the provider's own parameters.
NOT_PARAMS = frozenset({"model", "messages", "api_base", "api_key", "timeout", "num_retries"})


def install() -> None:
    """Add kgx's providers to litellm once per process, keeping any the user registered."""
    if _handlers:
        return
    from kgx.llm.local import LocalLlama
    from kgx.llm.oracle import OracleLLM
    from kgx.llm.scripted import ScriptedLLM

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)
    litellm.suppress_debug_info = True
    litellm.drop_params = True  # e.g. `seed` for providers that do not take it
    _handlers.update({LOCAL: LocalLlama(), SCRIPTED: ScriptedLLM(), ORACLE: OracleLLM()})
    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        *({"provider": name, "custom_handler": handler} for name, handler in _handlers.items()),
    ]


def simulated(model: str) -> bool:
    """A test double (scripted or oracle): it takes the simulated latency and failure settings."""
    return model.split("/")[0] in (SCRIPTED, ORACLE)


def is_oracle(model: str) -> bool:
    """The oracle backbone: its requests carry the question's gold (kgx.diagnose.gold_path.GoldHint)."""
    return model.split("/")[0] == ORACLE


def prepare(model: str, options: dict[str, Any]) -> None:
    """Load what a kgx provider needs (model weights, tokenizer) ahead of the first request;
    ``options`` are the provider's own settings (``llm.local`` for the local model)."""
    install()
    handler = _handlers.get(model.split("/")[0])
    if handler is not None:
        handler.prepare(options)


def in_process(model: str) -> Optional[CustomLLM]:
    """The handler of a kgx provider (``kgx-local/...``, ``kgx-scripted/...``, ``kgx-oracle/...``),
    None for the rest."""
    install()
    return _handlers.get(model.split("/")[0])


def complete(handler: CustomLLM, request: dict[str, Any]) -> Reply:
    """``litellm.completion(**request)`` for a kgx provider, without litellm's wrapper around it.

    The wrapper's logging and price lookups (which miss for these models and then try every
    generalisation of the name) cost about 4 ms of CPU per call: two thirds of a scripted
    question, and a cap of ~250 questions per second on the loop. The handler gets what litellm
    would give it (the provider's parameters, the model name after the prefix; a ``Reply`` to fill
    in where litellm gives a ModelResponse) and a failure
    becomes the exception litellm would have raised, so retries and error kinds are unchanged."""
    provider, _, name = request["model"].partition("/")
    params = {key: value for key, value in request.items() if key not in NOT_PARAMS}
    try:
        return handler.completion(
            model=name,
            messages=request["messages"],
            api_base=request.get("api_base"),
            custom_prompt_dict={},
            model_response=Reply(),
            print_verbose=None,
            encoding=None,
            api_key=None,
            logging_obj=None,
            optional_params=params,
            timeout=request.get("timeout"),
        )
    except Exception as exc:
        raise exception_type(model=name, original_exception=exc, custom_llm_provider=provider) from exc
