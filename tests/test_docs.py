"""The documentation: the MkDocs site builds with --strict, and Getting started's commands run."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GETTING_STARTED = REPO / "docs" / "getting-started.md"


def _docs_env() -> dict[str, str]:
    """Offline, no keys, this checkout importable, and this interpreter first on PATH (as ``python``)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("MLFLOW_TRACKING_URI", None)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["NO_MKDOCS_2_WARNING"] = "1"
    return env


def test_site_builds_strict(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if not os.environ.get("CI"):
            pytest.skip("mkdocs and mkdocs-material are not installed (pip install -e '.[dev]')")
        pytest.fail("CI is set but mkdocs or mkdocs-material is not installed")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        env=_docs_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "index.html").is_file()
    assert (site / "getting-started" / "index.html").is_file()


def getting_started_commands() -> list[str]:
    """Every command line of the ```bash blocks in docs/getting-started.md, continuations joined."""
    text = GETTING_STARTED.read_text(encoding="utf-8")
    commands: list[str] = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            words = shlex.split(line, comments=True)
            # pip install: the test runs in the environment it installed; reinstalling is not its job,
            # and needs the network.
            if words[:2] == ["pip", "install"] or words[:4] == ["python", "-m", "pip", "install"]:
                continue
            # cd: each command starts in the test's working directory, which stands in for it.
            if words[:1] == ["cd"]:
                continue
            commands.append(line)
    return commands


def test_getting_started_commands_are_offline_and_few() -> None:
    commands = getting_started_commands()
    assert commands, "docs/getting-started.md has no ```bash command to run"
    runs = [c for c in commands if re.match(r"python -m kgx(\s|$)", c)]
    assert len(runs) <= 4, f"keep Getting started short (each python -m kgx costs ~20 s): {runs}"
    for command in runs:
        assert "llm=scripted" in command, f"Getting started must run offline (llm=scripted): {command}"


@pytest.mark.slow
def test_getting_started_commands_run(tmp_path: Path) -> None:
    """Each command, in order, from a fresh working directory: everything it writes (outputs/, mlruns/,
    .kgx_cache/) lands in the temp directory, never in the checkout, and the report reads what the
    run and the sweep before it logged there."""
    work = tmp_path / "work"
    work.mkdir()
    env = _docs_env()
    for command in getting_started_commands():
        done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (
            f"`{command}` exited {done.returncode}\n"
            f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )
    assert (work / "mlruns").is_dir() and (work / "outputs").is_dir()
