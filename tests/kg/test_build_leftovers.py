"""A store build killed with ``kill -9`` leaves its temp directory; the next build or opening of a
store beside it removes it and says so in one line, while the temp directory of a build still
running in another process stays."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from kgx.core.kg_config import SubgraphKGConfig
from kgx.kg import open_kg
from kgx.kg.pipelines.leftovers import LOCK
from kgx.kg.pipelines.rog_subgraphs import build_subgraphs
from tests.helpers import kgx_env

GRAPHS = {
    "qA": [["Alice", "people.person.nationality", "France"]],
    "qB": [["Carol", "people.person.nationality", "France"]],
}

# A build that stops after its first question (the loader waiting on the pipe, the store begun)
# and says so: the test kills it there.
HANGING_BUILD = """
import sys, time
from pathlib import Path
from kgx.kg.pipelines import rog_subgraphs as subgraph_build

def stuck(self, *args):
    print("building", flush=True)
    time.sleep(600)

subgraph_build._Writer._question = stuck
subgraph_build.build_subgraphs([Path(sys.argv[1])], Path(sys.argv[2]), progress=False)
"""


@pytest.fixture
def rog_file(tmp_path) -> Path:
    path = tmp_path / "rog.parquet"
    pl.DataFrame(
        {"id": list(GRAPHS), "graph": list(GRAPHS.values())},
        schema_overrides={"graph": pl.List(pl.List(pl.String))},
    ).write_parquet(path)
    return path


def start_build(source: Path, store: Path) -> subprocess.Popen:
    """A build of ``store`` in another process, returned once it is under way."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HANGING_BUILD), str(source), str(store)],
        stdout=subprocess.PIPE,
        text=True,
        env=kgx_env(),
    )
    assert proc.stdout.readline() == "building\n"
    return proc


def temp_dirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("."))


def test_a_killed_build_leaves_its_temp_store_until_the_next_build_removes_it(rog_file, tmp_path, capsys):
    kg = tmp_path / "cache" / "kg"
    builds = [start_build(rog_file, kg / "subgraph") for _ in range(2)]  # the second leaves the first alone
    for build in builds:
        build.kill()  # kill -9
        build.wait()
    left = temp_dirs(kg)
    assert len(left) == 2 and all(re.fullmatch(r"\.subgraph\.\w+", p.name) for p in left)
    assert all((p / LOCK).is_file() and (p / "store").is_dir() for p in left)

    built = build_subgraphs([rog_file], kg / "subgraph", progress=False)
    assert (built.reused, built.questions, temp_dirs(kg)) == (False, 2, [])
    line = capsys.readouterr().err
    assert re.fullmatch(
        rf"kgx: removed 2 temporary stores left by killed builds in {kg}: "
        rf"{left[0].name} \(\d+\.\d MB\), {left[1].name} \(\d+\.\d MB\); \d+\.\d MB in all\n",
        line,
    ), line


def test_opening_a_built_store_removes_what_a_killed_build_of_another_left(rog_file, tmp_path, capsys):
    cache = tmp_path / "cache"
    cfg = SubgraphKGConfig(sources=[str(rog_file)])
    open_kg(cfg, cache)
    capsys.readouterr()  # the build's progress
    build = start_build(rog_file, cache / "kg" / "other")
    build.kill()
    build.wait()
    (left,) = temp_dirs(cache / "kg")
    assert len(open_kg(cfg, cache)) == 6  # the store already built, reused
    assert temp_dirs(cache / "kg") == []
    assert re.fullmatch(
        rf"kgx: removed 1 temporary store left by killed builds in {cache / 'kg'}: {left.name} \(\d+\.\d MB\)\n",
        capsys.readouterr().err,
    )


def test_the_temp_store_of_a_build_running_in_another_process_is_left_alone(rog_file, tmp_path, capsys):
    kg = tmp_path / "kg"
    running = start_build(rog_file, kg / "first")
    try:
        (theirs,) = temp_dirs(kg)
        assert build_subgraphs([rog_file], kg / "second", progress=False).questions == 2
        assert temp_dirs(kg) == [theirs] and capsys.readouterr().err == ""
    finally:
        running.kill()
        running.wait()
    build_subgraphs([rog_file], kg / "third", progress=False)
    assert temp_dirs(kg) == [] and f"{theirs.name} (" in capsys.readouterr().err


def test_a_dot_folder_no_build_made_is_never_touched(rog_file, tmp_path, capsys):
    kg = tmp_path / "kg"
    mine = kg / ".subgraph.mine"
    (mine / "store").mkdir(parents=True)
    build_subgraphs([rog_file], kg / "subgraph", progress=False)
    assert temp_dirs(kg) == [mine] and capsys.readouterr().err == ""
