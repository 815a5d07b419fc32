"""The crash probe: llama.cpp is native code, and a build that does not suit the CPU dies by a
signal (a bare exit 139) with nothing printed.

So before the first load of given settings on a machine, a child process loads the model and
decodes two tokens; if it dies, the run stops with ``LocalModelCrash`` saying what crashed and
what to try. A success is remembered in a marker file, so the check costs once.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from kgx.llm.local_setup import LocalModelError, load_llama, machine_lock

PROBE_TIMEOUT_S = 300.0


class LocalModelCrash(LocalModelError):
    """llama.cpp killed the probe process with a signal: loading it here would kill the run."""


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
