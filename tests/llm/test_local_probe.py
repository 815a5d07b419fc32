"""The crash probe: a llama.cpp build that dies by a signal stops the run with a message that says
what crashed and what to try, instead of a bare exit 139; a probe that passed is not run again."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgx.llm import local_probe, local_setup

PASSES = "print('ok')"
CRASHES = "import os, signal\nprint('at the first decode', flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)"
FAILS = "import sys\nsys.exit('llama_model_load: error loading model')"


@pytest.fixture
def kwargs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("KGX_LOCAL_PROBE_DIR", str(tmp_path / "probes"))
    monkeypatch.setattr(local_setup, "MACHINE_LOCK", tmp_path / "llm.lock")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF fake")
    return {
        "model_path": str(model),
        "chat_format": None,
        "n_ctx": 512,
        "n_threads": 1,
        "n_threads_batch": 1,
        "n_batch": 64,
        "use_extra_bufts": False,
        "verbose": False,
    }


def test_a_signal_death_names_the_component_the_signal_the_cpu_and_the_remedies(kwargs, monkeypatch):
    monkeypatch.setattr(local_probe, "cpu_flags", lambda: ["amx_bf16", "amx_tile", "avx2", "avx512f", "sse2"])
    with pytest.raises(local_probe.LocalModelCrash) as caught:
        local_probe.probe(kwargs, code=CRASHES)
    message = str(caught.value)
    assert f"llama.cpp (llama-cpp-python {local_probe.llama_cpp_version()})" in message
    assert "SIGSEGV (signal 11) at the first decode" in message
    assert "CPU flags: amx_bf16 amx_tile avx512f." in message
    assert "use_extra_bufts=False" in message and "Try llm.local.use_extra_bufts" not in message
    assert 'Try reinstalling llama-cpp-python for a generic CPU: CMAKE_ARGS="-DGGML_NATIVE=OFF"' in message
    assert "hosted or served backbone" in message
    assert "Segmentation fault" in message  # the child's faulthandler output
    assert kwargs["model_path"] in message
    assert not local_probe.probe_dir().exists()  # a crash leaves no marker


def test_with_extra_buffers_on_the_message_suggests_turning_them_off(kwargs):
    with pytest.raises(local_probe.LocalModelCrash, match="Try llm.local.use_extra_bufts=false"):
        local_probe.probe({**kwargs, "use_extra_bufts": True}, code=CRASHES)


def test_a_passed_probe_is_remembered_per_settings(kwargs):
    local_probe.probe(kwargs, code=PASSES)
    assert len(list(local_probe.probe_dir().iterdir())) == 1
    local_probe.probe(kwargs, code=CRASHES)  # the marker says these settings work: no child process
    with pytest.raises(local_probe.LocalModelCrash):
        local_probe.probe({**kwargs, "n_threads": 2}, code=CRASHES)
    Path(kwargs["model_path"]).write_bytes(b"GGUF another model")  # a changed file probes again
    with pytest.raises(local_probe.LocalModelCrash):
        local_probe.probe(kwargs, code=CRASHES)


def test_an_ordinary_failure_is_not_called_a_crash_and_shows_its_output(kwargs):
    with pytest.raises(local_setup.LocalModelError) as caught:
        local_probe.probe(kwargs, code=FAILS)
    assert not isinstance(caught.value, local_probe.LocalModelCrash)
    assert "before loading the model" in str(caught.value) and "error loading model" in str(caught.value)
