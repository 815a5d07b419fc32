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


# What a user reads names behaviours and figures, never the development issue or session that asked
# for them: "issue 35", "issue-33", "(#33)", "sessions 44 and 45", "this session", "the issue's
# target". A repository's own reference (facebookresearch/hydra#2928) and "the issue threads" of the
# papers' code are not development references.
DEV_REFERENCE = re.compile(
    r"(?<![a-z])issues?[ _-]?#?\d+|\bsessions? #?\d+|\(#\d+\)|\bthis session\b|\bthe issue\b(?! threads?| tracker)",
    re.IGNORECASE,
)
USER_FACING = ("kgx", "docs", "tests", "benchmarks", "conf", "sweeps", "hydra_plugins", "notebooks", "README.md")


def user_facing_files() -> list[Path]:
    """The tracked files of the package, docs, tests, benchmarks and configs (all of them outside git)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *USER_FACING], cwd=REPO, capture_output=True, text=True, check=False
    )
    if listed.returncode == 0 and listed.stdout:
        return [REPO / name for name in listed.stdout.split("\0") if name]
    found = [REPO / "README.md"] + [p for top in USER_FACING[:-1] for p in (REPO / top).rglob("*") if p.is_file()]
    return [p for p in found if "__pycache__" not in p.parts]


@pytest.mark.parametrize(
    "text",
    [
        "Numbers and dates (issue 31).",
        "Issue 18: at llm=local's max_tokens of 256 this reply was cut",
        "def test_issue_32s_example():",
        "the changes of sessions 44 and 45",
        "fixed in issue-33",
        "cheaper reads (#33)",
        "the code before this session's change",
        "the issue's target of 6 ms",
    ],
)
def test_a_development_reference_is_recognised(text: str) -> None:
    assert DEV_REFERENCE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "as later Hydra does (facebookresearch/hydra#2928)",
        "reported in ToG's issue threads (DataArcTech/ToG#40)",
        "(who, setup, hours) from the issue threads of the papers' code",
        '@pytest.fixture(scope="session")',
        "answerable after round 3",
        'KnowPath\'s "Name #2"',
    ],
)
def test_an_ordinary_text_is_no_development_reference(text: str) -> None:
    assert not DEV_REFERENCE.search(text)


def test_no_development_issue_or_session_is_named_anywhere_a_user_reads() -> None:
    this = Path(__file__).resolve()
    found = []
    for path in user_facing_files():
        if path.resolve() == this or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary: a parquet file, a picture
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if DEV_REFERENCE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:160]}")
    assert not found, (
        "say what the behaviour or figure is and why, not which issue or session asked for it:\n" + "\n".join(found)
    )
