"""No process kgx starts outlives a ``kill -9`` of the process that started it: a sweep's joblib
workers, ``kgx.kg serve``'s oxigraph, and servers in general (kgx.core.lifeline)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from kgx.core.lifeline import die_with_parent, server_preexec
from kgx.run.sweep_workers import bind_workers
from tests.helpers import TINY_SWEEP, kgx_env
from tests.orphans import kill_and_count, loky_workers, marked, marker, wait_for

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts processes through /proc")


def orphans_of(tmp_path: Path, body: str, children: int, after_s: float) -> int:
    """Run ``body`` (which starts ``children`` processes, grandchildren included) in a parent
    process, ``kill -9`` the parent once they all run, and count those left ``after_s`` later."""
    mark = marker()
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(body) + "\nprint('ready', flush=True)\nimport time\ntime.sleep(120)\n")
    parent = subprocess.Popen(
        [sys.executable, str(script)], env={**kgx_env(), **mark}, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout.readline().strip() == "ready"
    wait_for(lambda: len(marked(mark)) == 1 + children, 30, f"{children} children did not start")
    left, before = kill_and_count(parent, mark, after_s)
    assert len(before) == children
    return left


@linux
def test_a_watched_child_dies_with_its_parent(tmp_path):
    body = """
        import subprocess, sys
        child = "import os, time\\nfrom kgx.core.lifeline import watch_parent\\nwatch_parent(os.getppid(), 0.1)\\nprint('watching', flush=True)\\ntime.sleep(120)"
        subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True).stdout.readline()
        """
    assert orphans_of(tmp_path, body, children=1, after_s=1.0) == 0


@linux
def test_a_server_and_its_own_children_die_with_a_guarded_parent(tmp_path):
    # A "server" in its own group that starts a child of its own, as mlflow starts uvicorn.
    body = """
        import subprocess
        from kgx.core.lifeline import guard_group
        server = subprocess.Popen(["sh", "-c", "sleep 120 & sleep 120"], start_new_session=True)
        guard_group(server.pid, 0.1)
        """
    assert orphans_of(tmp_path, body, children=4, after_s=1.5) == 0  # sh, its 2 sleeps, the guard


@linux
def test_a_preexec_server_dies_with_its_parent_but_only_from_the_main_thread(tmp_path):
    body = """
        import subprocess
        from kgx.core.lifeline import server_preexec
        subprocess.Popen(["sleep", "120"], preexec_fn=server_preexec())
        """
    assert orphans_of(tmp_path, body, children=1, after_s=0.5) == 0
    # The kernel ties the signal to the forking thread: a thread's server would die with the thread.
    assert server_preexec() is die_with_parent
    seen = []
    worker = threading.Thread(target=lambda: seen.append(server_preexec()))
    worker.start()
    worker.join()
    assert seen == [None]


def test_only_the_joblib_launcher_gets_the_worker_hook():
    assert not bind_workers("hydra_plugins.kgx_ray_launcher.ray_launcher.RayLauncher")
    assert not bind_workers("hydra._internal.core_plugins.basic_launcher.BasicLauncher")


@linux
@pytest.mark.slow
def test_kill_9_of_a_sweep_launcher_leaves_no_worker(tmp_path):
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "tiny.yaml").write_text(TINY_SWEEP)
    mark = marker()
    launcher = subprocess.Popen(
        [sys.executable, "-m", "kgx", "-m", "+sweeps=tiny", "llm=scripted", "llm.latency_s=60"]
        + ["run.progress=false", "hydra/launcher=joblib", "hydra.launcher.n_jobs=4"],
        cwd=tmp_path,
        env={**kgx_env(), **mark},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # Every job has started (Hydra writes its .hydra dir first) and waits on the scripted model.
    wait_for(lambda: len(list(tmp_path.glob("outputs/multirun/*/*/*/.hydra"))) == 4, 240, "4 jobs did not start")
    assert loky_workers(mark) == 4
    left, before = kill_and_count(launcher, mark, after_s=10)
    assert len(before) >= 5  # 4 workers and loky's resource tracker(s)
    assert left == 0


@linux
@pytest.mark.slow
def test_kill_9_of_kg_serve_leaves_no_oxigraph(tmp_path):
    from kgx.kg import BUNDLED_KG, build_store
    from kgx.kg.serve import free_port

    store = build_store([BUNDLED_KG], "nt", tmp_path / "demo")
    mark = marker()
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        serve = subprocess.Popen(
            [sys.executable, "-m", "kgx.kg", "serve", "--store", str(store), "--port", str(free_port())],
            env={**kgx_env(), **mark},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    wait_for(lambda: "SPARQL query endpoint" in log.read_text(), 60, "the server did not answer")
    left, before = kill_and_count(serve, mark, after_s=1.0)
    assert len(before) == 1 and left == 0
