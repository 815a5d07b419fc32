"""kgx's entry points raise Python's garbage-collector thresholds (kgx.core.collector), and only
when the process has not set its own."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from kgx.core import collector


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_python_defaults_become_kgx_thresholds(thresholds):
    gc.set_threshold(*collector.PYTHON_DEFAULTS)
    collector.tune()
    assert gc.get_threshold() == collector.THRESHOLDS == (10_000, 20, 20)


def test_thresholds_a_process_set_itself_are_kept(thresholds):
    gc.set_threshold(2_000, 5, 5)
    collector.tune()
    assert gc.get_threshold() == (2_000, 5, 5)


def test_python_m_kgx_sets_them_before_importing_litellm_or_mlflow():
    probe = "import gc, sys, kgx.__main__; print(gc.get_threshold(), 'litellm' in sys.modules, 'mlflow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == "(10000, 20, 20) False False"
