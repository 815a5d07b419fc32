"""``python -m kgx ARGS`` run inside the test's own process, for tests of what a run or a sweep writes
and prints rather than of the process itself (signals, exit under kill, imports, the environment).

A subprocess pays kgx's imports again (litellm and MLflow, ~5 s of CPU on the CI machine); this
calls the same Hydra entry point with the same command line, so Hydra records, composes, sweeps
(its basic launcher, one job after another) and logs exactly as it does for a user. What the
entry point leaves in the process is undone: Hydra's global state, the logging handlers its job
logging installs, the working directory and ``sys.argv``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from kgx.core.paths import CONF_DIR


@dataclass(frozen=True)
class Done:
    """What ``subprocess.run(..., capture_output=True, text=True)`` would have given."""

    returncode: int
    stdout: str
    stderr: str


def exit_code(code: object, stderr: io.StringIO) -> int:
    """``SystemExit``'s code as the interpreter turns it into an exit status: a message is printed
    to stderr and exits 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr)
    return 1


def kgx_main(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Done:
    """``python -m kgx *args`` started in ``cwd``, in this process; ``env`` adds variables for its duration."""
    from kgx.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    # The environment tests.helpers.kgx_env gives a subprocess: no tracking URI, no API key.
    dropped = [k for k in os.environ if k == "MLFLOW_TRACKING_URI" or k.endswith("_API_KEY")]
    saved_env = {k: os.environ.get(k) for k in [*dropped, *(env or {})]}
    saved_argv, here = sys.argv, Path.cwd()
    GlobalHydra.instance().clear()
    for key in dropped:
        del os.environ[key]
    os.environ.update(env or {})
    os.chdir(cwd)
    sys.argv = [str(Path(sys.modules["kgx"].__file__).parent / "__main__.py"), *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
                code = 0
            except SystemExit as done:
                code = exit_code(done.code, err)
    finally:
        sys.argv = saved_argv
        os.chdir(here)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.handlers[:], root.level = handlers, level
        GlobalHydra.instance().clear()
        HydraConfig.instance().cfg = None
    return Done(code, out.getvalue(), err.getvalue())


def compose_fresh(*overrides: str) -> DictConfig:
    """Compose conf/ with overrides the way ``python -m kgx`` does (``kgx.run.compose.register_schemas`` first)."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        return compose(config_name="config", overrides=list(overrides))


def paper_sweep(cwd: Path, table: str, *args: str) -> Done:
    """``python -m kgx -m +paper=TABLE llm=scripted ARGS`` in ``cwd``, on the data in ``cwd/data``."""
    return kgx_main(
        cwd,
        "-m",
        f"+paper={table}",
        "llm=scripted",
        "run.progress=false",
        *args,
        env={"KGX_DATA_DIR": str(cwd / "data")},
    )
