"""Freebase from its dump in one command (``python -m kgx.kg freebase build``), on a synthetic dump
in the real format made from the demo KG (gzip, tab-separated lines ending in ``.``, non-English
names, predicates and subjects outside the namespace and malformed lines mixed in).

The filter's counts are checked against an independent reading of the demo KG (pyoxigraph terms,
not the filter's regular expressions). The tests that start Virtuoso are slow and share builds per
module: end to end (build, serve, check, lmp/tog predicting as on ``kg=demo``), a build killed
mid-load and rerun, a disk that fills during the load, a chunk Virtuoso cannot parse.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgx.kg import BUNDLED_KG
from kgx.kg.__main__ import main
from kgx.kg.pipelines import dump_filter as df
from kgx.kg.pipelines import progress_bar as pipeline_bar
from kgx.kg.pipelines.dump_filter import BuildError, FilterState, filter_dump
from kgx.kg.pipelines.dump_synth import NS, write_dump
from kgx.kg.pipelines.freebase_dump import BuildOptions, build_freebase
from kgx.kg.virtuoso import db as virtuoso_db
from kgx.kg.virtuoso.db import VirtuosoDB, saved_sizing, size_for
from tests.helpers import kgx_env

GRAPH = "http://freebase.com"
XSD = "http://www.w3.org/2001/XMLSchema#"
MEMORY = ["--memory-gb", "0.5"]
MALFORMED = 3  # written in copy 0 only
NOISE = 5  # well-formed lines no filter keeps, per copy


# -- the expected counts, from pyoxigraph's reading of the demo KG --------------------------------


def _in_copy(triple: ox.Triple, copy: int) -> bool:
    local = triple.subject.value[len(NS) :] if triple.subject.value.startswith(NS) else ""
    return copy == 0 or local[:2] in ("m.", "g.")


def _english(t: ox.Triple) -> bool:
    o = t.object
    ns = all(isinstance(x, ox.NamedNode) and x.value.startswith(NS) for x in (t.subject, t.predicate))
    if isinstance(o, ox.NamedNode):
        return ns and o.value.startswith(NS)
    return ns and (not o.language or o.language.lower() == "en" or o.language.lower().startswith("en-"))


def _tog(t: ox.Triple) -> bool:
    o, local = t.object, t.subject.value[len(NS) :]
    if not (t.subject.value.startswith(NS) and local[:2] in ("m.", "g.") and t.predicate.value.startswith(NS)):
        return False
    if isinstance(o, ox.NamedNode):
        return o.value.startswith(NS)
    if o.language or o.datatype.value == XSD + "string":
        return o.language in (None, "en") and o.value != "" and not o.value.startswith("/")
    return o.datatype.value.startswith(XSD)


def expected(copies: int, keep) -> tuple[int, int]:
    """(kept, dropped) of write_dump(copies) under ``keep``."""
    triples = list(ox.parse(path=str(BUNDLED_KG), format=ox.RdfFormat.N_TRIPLES))
    included = [t for copy in range(copies) for t in triples if _in_copy(t, copy)]
    kept = sum(1 for t in included if keep(t))
    return kept, len(included) - kept + NOISE * copies


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dump") / "freebase-rdf-latest.gz"
    write_dump(path, BUNDLED_KG, copies=2)
    return path


def run_filter(
    dump: Path,
    out: Path,
    rule: str = "english",
    chunk_lines: int = 1000,
    max_bad: int = 1000,
    state: FilterState | None = None,
) -> FilterState:
    state = state or FilterState(str(dump), dump.stat().st_size, rule, chunk_lines, "gz")
    return filter_dump(dump, out / "chunks", state, out / "filter.json", max_bad)


def chunk_lines(out: Path) -> list[bytes]:
    return [line for chunk in sorted((out / "chunks").glob("part-*")) for line in gzip.open(chunk).read().splitlines()]


# -- the filter (no Virtuoso) ---------------------------------------------------------------------


@pytest.mark.parametrize("rule, keep, pinned", [("english", _english, (6487, 48)), ("tog", _tog, (6332, 203))])
def test_filter_counts_exactly_what_each_rule_keeps(dump, tmp_path, rule, keep, pinned):
    state = run_filter(dump, tmp_path, rule)
    assert (state.kept, state.dropped) == expected(2, keep) == pinned
    assert state.malformed == MALFORMED and state.lines == state.kept + state.dropped + MALFORMED
    assert state.first_malformed == [2, 100, 198]  # the malformed lines of copy 0, by line number
    assert state.done and len(state.chunks) > 3 and sum(c["kept"] for c in state.chunks) == state.kept
    lines = chunk_lines(tmp_path)
    assert len(lines) == state.kept and all(line.endswith(b"\t.") for line in lines)
    assert not any(b"@fr\t" in line or b"www.w3.org/1999" in line for line in lines)
    assert list((tmp_path / "chunks").glob("*.tmp")) == []


def test_worker_processes_write_the_same_chunks(dump, tmp_path):
    alone = run_filter(dump, tmp_path / "alone")
    state = FilterState(str(dump), dump.stat().st_size, "english", 1000, "gz")
    together = filter_dump(dump, tmp_path / "two" / "chunks", state, tmp_path / "two" / "filter.json", 1000, workers=2)
    assert (together.kept, together.dropped, together.first_malformed, together.chunks) == (
        alone.kept,
        alone.dropped,
        alone.first_malformed,
        alone.chunks,
    )
    assert chunk_lines(tmp_path / "two") == chunk_lines(tmp_path / "alone")


def test_tog_keeps_only_mid_subjects_and_no_keys(dump, tmp_path):
    run_filter(dump, tmp_path, "tog")
    lines = chunk_lines(tmp_path)
    assert all(line.startswith((f"<{NS}m.".encode(), f"<{NS}g.".encode())) for line in lines)
    assert not any(b'\t"/' in line for line in lines)


def test_a_full_disk_stops_the_filter_and_the_rerun_resumes_to_the_same_chunks(dump, tmp_path, monkeypatch):
    clean = run_filter(dump, tmp_path / "clean")
    opened = []

    class Full:
        def __init__(self, path):
            self.file = open(path, "wb")

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.file, name)

    def open_chunk(path):
        opened.append(path)
        return Full(path) if len(opened) == 3 else open(path, "wb")

    monkeypatch.setattr(df, "open_chunk", open_chunk)
    with pytest.raises(
        BuildError,
        match=r"disk full writing .*part-000003\.nt\.gz\.tmp .*GB free.*rerun the same "
        r"command; the filter resumes after its 2 finished chunks",
    ):
        run_filter(dump, tmp_path / "full")
    state = FilterState(**json.loads((tmp_path / "full" / "filter.json").read_text()))
    assert len(state.chunks) == 2 and not state.done
    assert sorted(p.name for p in (tmp_path / "full" / "chunks").iterdir()) == [
        "part-000001.nt.gz",
        "part-000002.nt.gz",
    ]
    monkeypatch.undo()
    resumed = run_filter(dump, tmp_path / "full", state=state)
    assert (resumed.kept, resumed.dropped, resumed.malformed, resumed.chunks) == (
        clean.kept,
        clean.dropped,
        clean.malformed,
        clean.chunks,
    )
    assert chunk_lines(tmp_path / "full") == chunk_lines(tmp_path / "clean")


def test_a_blank_field_is_malformed_as_in_the_script(tmp_path):
    dump = tmp_path / "dump.gz"
    with gzip.open(dump, "wt") as out:
        out.write(f'<{NS}m.a>\t<{NS}x.y>\t<{NS}m.b>\t.\n<{NS}m.a>\t \t<{NS}m.b>\t.\n\n<{NS}m.c>\t<{NS}x.y>\t"c"\t.\n')
    state = run_filter(dump, tmp_path)
    assert (state.kept, state.dropped, state.malformed, state.first_malformed) == (2, 0, 1, [2])


def test_a_kill_mid_filter_leaves_a_half_written_chunk_that_the_rerun_rewrites(dump, tmp_path):
    """After ``kill -9`` the chunk being written is a ``.tmp`` (or, killed between the rename and the
    record, a finished-looking file filter.json does not list): both are rewritten from the dump."""
    clean = run_filter(dump, tmp_path / "clean")
    killed = tmp_path / "killed"
    (killed / "chunks").mkdir(parents=True)
    for chunk in clean.chunks[:2]:
        shutil.copy(tmp_path / "clean" / "chunks" / chunk["name"], killed / "chunks")
    (killed / "chunks" / "part-000003.nt.gz.tmp").write_bytes(b"\x1f\x8b half a chunk")
    (killed / "chunks" / "part-000003.nt.gz").write_bytes(b"\x1f\x8b renamed, not recorded")
    state = FilterState(**{**json.loads((tmp_path / "clean" / "filter.json").read_text()), "done": False})
    state.chunks = state.chunks[:2]
    state.lines, state.kept = state.chunks[-1]["lines"], sum(c["kept"] for c in state.chunks)
    state.dropped = state.lines - state.kept - 3  # the three malformed lines come first
    state.save(killed / "filter.json")
    resumed = run_filter(dump, killed, state=state)
    assert (resumed.kept, resumed.dropped, resumed.malformed, resumed.chunks) == (
        clean.kept,
        clean.dropped,
        clean.malformed,
        clean.chunks,
    )
    assert chunk_lines(killed) == chunk_lines(tmp_path / "clean")
    assert not list((killed / "chunks").glob("*.tmp"))


def test_a_dump_that_is_not_gzip_is_named(tmp_path):
    plain = tmp_path / "freebase-rdf-latest"
    plain.write_text(f"<{NS}m.a>\t<{NS}x.y>\t<{NS}m.b>\t.\n")
    with pytest.raises(BuildError, match=rf"{plain} is not gzip .*--filtered"):
        df.check_gzip(plain)


def test_a_truncated_dump_stops_with_its_byte_and_keeps_finished_chunks(dump, tmp_path):
    cut = tmp_path / "cut.gz"
    cut.write_bytes(dump.read_bytes()[: dump.stat().st_size * 2 // 3])
    with pytest.raises(BuildError, match=rf"{cut} ends early at byte .*download it again"):
        run_filter(cut, tmp_path, chunk_lines=500)
    assert len(list((tmp_path / "chunks").glob("part-*.nt.gz"))) >= 2


def test_too_many_malformed_lines_stop_with_their_line_numbers(dump, tmp_path):
    with pytest.raises(
        BuildError,
        match=r"3 lines are not triples \(first at lines 2, 100, 198\), more than "
        r"--max-bad 2: is this the Freebase RDF dump\?",
    ):
        run_filter(dump, tmp_path, max_bad=2)


def test_virtuoso_not_installed_stops_before_any_work(dump, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    db = tmp_path / "db"
    assert main(["freebase", "build", "--dump", str(dump), "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert "error: virtuoso-t is not on PATH" in err and "apt-get install virtuoso-opensource" in err
    assert not db.exists()


def test_sizing_follows_virtuosos_table(monkeypatch):
    assert (size_for(8).buffers, size_for(8).dirty) == (680_000, 510_000)
    assert (size_for(64).buffers, size_for(64).dirty) == (5_440_000, 4_080_000)
    monkeypatch.setattr(virtuoso_db, "available_gb", lambda: 20.0)
    assert size_for().memory_gb == 15.0 and size_for().buffers == 1_275_000
    assert "NumberOfBuffers=1275000 MaxDirtyBuffers=956250" in size_for().describe()


def test_without_a_terminal_the_progress_is_plain_lines_with_rate_and_eta(monkeypatch):
    clock = iter([0.0, 5.0, 15.0, 16.0, 20.0])
    monkeypatch.setattr(pipeline_bar.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    bar = pipeline_bar.PhaseBar(
        "[1/2] filter", 4e9, pipeline_bar.gigabytes, "MB/s", 1e6, stream=out, extra=lambda: "chunks 1/4"
    )
    for done in (1e9, 2e9, 3e9):  # at 5 s (the first), 15 s (10 s later), 16 s (too soon); closed at 20 s
        bar.update(done)
    bar.close()
    assert out.getvalue().splitlines() == [
        "[1/2] filter:  25.0% 1.00 GB/4.00 GB 200.0 MB/s elapsed 0:00:05 ETA 0:00:15 chunks 1/4",
        "[1/2] filter:  50.0% 2.00 GB/4.00 GB 133.3 MB/s elapsed 0:00:15 ETA 0:00:15 chunks 1/4",
        "[1/2] filter:  75.0% 3.00 GB/4.00 GB 150.0 MB/s elapsed 0:00:20 ETA 0:00:06 chunks 1/4",
    ]
    assert "\r" not in out.getvalue()


def test_serve_refuses_a_directory_without_a_finished_build(tmp_path, capsys):
    assert main(["serve", "--engine", "virtuoso", "--db", str(tmp_path)]) == 1
    assert (
        f"{tmp_path} holds no finished Freebase build: run python -m kgx.kg freebase build" in capsys.readouterr().err
    )


# -- Virtuoso (slow): one end-to-end build per module ---------------------------------------------


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgx.kg", *args], capture_output=True, text=True, env=kgx_env(), timeout=600, **kw
    )


@pytest.fixture(scope="module")
def virtuoso_installed() -> None:
    if not (shutil.which("virtuoso-t") and shutil.which("isql-vt")):
        if os.environ.get("CI"):
            pytest.fail("CI must run the Virtuoso tests: apt-get install virtuoso-opensource")
        pytest.skip("virtuoso-t/isql-vt not on PATH: apt-get install virtuoso-opensource")


@pytest.fixture(scope="module")
def built(virtuoso_installed, tmp_path_factory) -> tuple[Path, str]:
    """The demo KG's dump (one copy, noise mixed in) built by the CLI; (DIR, its stdout)."""
    work = tmp_path_factory.mktemp("built")
    write_dump(work / "freebase-rdf-latest.gz", BUNDLED_KG, copies=1)
    done = cli(
        "freebase",
        "build",
        "--dump",
        str(work / "freebase-rdf-latest.gz"),
        "--db",
        str(work / "db"),
        "--chunk-lines",
        "1000",
        "--loaders",
        "2",
        *MEMORY,
    )
    assert done.returncode == 0, done.stderr
    return work / "db", done.stdout


@pytest.fixture(scope="module")
def served(built):
    with VirtuosoDB(built[0], saved_sizing(built[0])) as db:
        yield db


@pytest.mark.slow
def test_the_build_reports_its_filter_sizing_and_load(built):
    db, out = built
    kept, dropped = expected(1, _english)
    assert (
        f"filter: lines={kept + dropped + MALFORMED} kept={kept} dropped={dropped} malformed=3 "
        f"(first at lines 2, 100, 198)" in out
    )
    assert f"triples={kept} " in out and "already_loaded=0" in out
    assert f"serve it: python -m kgx.kg serve --engine virtuoso --db {db}" in out
    assert json.loads((db / "build.json").read_text())["triples"] == kept
    assert "NumberOfBuffers = 42500" in (db / "virtuoso.ini").read_text()


@pytest.mark.slow
def test_a_rerun_of_a_finished_build_redoes_nothing(built):
    db, _ = built
    again = cli(
        "freebase",
        "build",
        "--dump",
        str(db.parent / "freebase-rdf-latest.gz"),
        "--db",
        str(db),
        "--chunk-lines",
        "1000",
        *MEMORY,
    )
    assert again.returncode == 0, again.stderr
    assert "filter: done before" in again.stdout and "loaded_now=0" in again.stdout


@pytest.mark.slow
def test_serve_prints_the_url_check_says_freebase_and_sigterm_leaves_the_database(built):
    db, _ = built
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgx.kg", "serve", "--engine", "virtuoso", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=kgx_env(),
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("SPARQL query endpoint: http://127.0.0.1:"), proc.stderr.read()
        url = line.split()[3]
        assert f"graph {GRAPH}" in line
        looks = cli("check", "--endpoint", url, "--default-graph", GRAPH)
        assert looks.returncode == 0 and "verdict: looks like Freebase" in looks.stdout, looks.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    assert proc.returncode == 0 and not (db / "virtuoso.lck").exists()
    assert (db / "virtuoso.db").stat().st_size > 0


@pytest.mark.slow
@pytest.mark.parametrize("method", ["lmp", "tog"])
def test_methods_predict_on_the_built_virtuoso_as_on_the_demo_kg(served, method, compose_cfg, in_tmp):
    from kgx.run.execute import execute
    from kgx.run.spec import to_run_spec

    def answers(name: str, *kg: str) -> dict[str, list[str]]:
        out = in_tmp / name
        outcome = execute(
            to_run_spec(
                compose_cfg(
                    f"method={method}",
                    "llm=scripted",
                    "dataset=demo",
                    "run.progress=false",
                    f"run.output_dir={out}",
                    f"run.tracking_uri=sqlite:///{out}/mlflow.db",
                    *kg,
                )
            ),
            in_tmp,
        )
        assert outcome.status == "FINISHED" and outcome.summary["errors"] == 0, (name, outcome.failures)
        return {r.id: r.prediction.answers for r in outcome.records}

    demo = answers("demo", "kg=demo")
    assert demo and any(demo.values())
    assert answers("virtuoso", "kg=sparql", f"kg.endpoint={served.url}", f"kg.default_graph={GRAPH}") == demo


# -- resume: a kill -9 mid-load, a full disk, a chunk Virtuoso cannot parse -----------------------


def loads(directory: Path) -> dict[str, tuple[int, str]]:
    """load_list of a built directory: chunk name -> (state, when done)."""
    with VirtuosoDB(directory, saved_sizing(directory)) as db:
        out = db.isql(
            "select concat('kgx-row ', cast(ll_state as varchar), ' ', cast(ll_done as varchar), '|', "
            "ll_file) from DB.DBA.load_list;"
        )
    rows = [line[len("kgx-row ") :].rstrip() for line in out.splitlines() if line.startswith("kgx-row ")]
    return {
        Path(f).name: (int(head.split(" ", 1)[0]), head.split(" ", 1)[1])
        for head, _, f in (row.partition("|") for row in rows)
    }


def triples(directory: Path) -> int:
    with VirtuosoDB(directory, saved_sizing(directory)) as db:
        return db.triples(GRAPH)


@pytest.fixture(scope="module")
def big_dump(virtuoso_installed, tmp_path_factory) -> tuple[Path, list[str], Path]:
    """A 30-copy dump (~96,000 lines), its build options, and a clean build of it."""
    work = tmp_path_factory.mktemp("big")
    write_dump(work / "dump.gz", BUNDLED_KG, copies=30)
    options = [
        "--dump",
        str(work / "dump.gz"),
        "--chunk-lines",
        "8000",
        "--loaders",
        "1",
        "--checkpoint-every-s",
        "0",
        *MEMORY,
    ]
    clean = cli("freebase", "build", "--db", str(work / "clean"), *options)
    assert clean.returncode == 0, clean.stderr
    return work, options, work / "clean"


@pytest.mark.slow
def test_a_build_killed_mid_load_resumes_without_loading_a_chunk_twice(big_dump):
    work, options, clean = big_dump
    db = work / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgx.kg", "freebase", "build", "--db", str(db), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=kgx_env(),
    )
    for line in proc.stderr:
        if line.startswith("[2/2] load"):  # shown after the first chunk is loaded and checkpointed
            break
    proc.kill()
    proc.wait()
    time.sleep(1)  # the server dies with its parent
    before = loads(db)
    done_before = {name: when for name, (state, when) in before.items() if state == 2}
    resumed = cli("freebase", "build", "--db", str(db), *options)
    assert resumed.returncode == 0, resumed.stderr
    total = len(loads(clean))
    assert f"load: {len(done_before)} of {total} chunks already loaded (DB.DBA.load_list)" in resumed.stdout
    assert 0 < len(done_before) < total
    after = loads(db)
    assert sorted(after) == sorted(loads(clean)) and all(state == 2 for state, _ in after.values())
    assert all(after[name][1] == when for name, when in done_before.items())  # not loaded again
    assert triples(db) == triples(clean) == expected(30, _english)[0]


@pytest.mark.slow
def test_a_full_disk_during_the_load_stops_it_and_the_rerun_resumes(big_dump, tmp_path, monkeypatch, capsys):
    _, _, clean = big_dump
    calls = []
    monkeypatch.setattr(virtuoso_db, "free_bytes", lambda path: calls.append(path) or (10**12 if len(calls) < 3 else 0))
    opts = dict(db=tmp_path / "db", filtered=clean / "chunks", loaders=1, memory_gb=0.5, checkpoint_every_s=0)
    with pytest.raises(
        BuildError,
        match=r"only 0\.00 GB free for the database in .*db and the next chunks need "
        r"about .* GB: free space there .*rerun the same command; chunks already "
        r"loaded stay loaded",
    ):
        build_freebase(BuildOptions(**opts))
    monkeypatch.undo()
    report = build_freebase(BuildOptions(**opts), say=lambda _: None)
    assert report.already_loaded == 2 and report.loaded_now == report.chunks - 2
    assert report.triples == triples(clean)


@pytest.mark.slow
def test_a_chunk_virtuoso_cannot_parse_is_named_and_loaded_once_fixed(virtuoso_installed, tmp_path):
    chunks = tmp_path / "filtered"
    chunks.mkdir()
    (chunks / "a.nt").write_text(f"<{NS}m.a>\t<{NS}x.y.z>\t<{NS}m.b>\t.\n")
    (chunks / "b.nt").write_text(f'<{NS}m.c>\t<{NS}x.y.z>\t"unterminated\t.\n')
    opts = dict(db=tmp_path / "db", filtered=chunks, loaders=2, memory_gb=0.5)
    with pytest.raises(
        BuildError,
        match=r"Virtuoso could not load .*b\.nt: .*TURTLE RDF loader.*Fix or remove the "
        r"line the error names, then rerun the same command",
    ):
        build_freebase(BuildOptions(**opts), say=lambda _: None)
    (chunks / "b.nt").write_text(f'<{NS}m.c>\t<{NS}x.y.z>\t"terminated"\t.\n')
    report = build_freebase(BuildOptions(**opts), say=lambda _: None)
    assert (report.already_loaded, report.loaded_now, report.triples) == (1, 1, 2)


@pytest.mark.slow
def test_filtered_takes_one_file_as_togs_setup_leaves_it(built, tmp_path):
    """``--filtered FILE``: one N-Triples file (ToG's FilterFreebase, named with its ending) loads
    with one loader and no filter; a name Virtuoso cannot pick a parser by, or no file, is told."""
    db, _ = built
    one = tmp_path / "FilterFreebase.nt.gz"
    one.write_bytes(b"".join(p.read_bytes() for p in sorted((db / "chunks").glob("part-*"))))  # gzip members
    bare = tmp_path / "FilterFreebase"
    bare.write_bytes(one.read_bytes())
    done = cli("freebase", "build", "--filtered", str(one), "--db", str(tmp_path / "db"), *MEMORY)
    assert done.returncode == 0, done.stderr
    assert "load: 0 of 1 chunks already loaded" in done.stdout and not (tmp_path / "db" / "filter.json").exists()
    assert triples(tmp_path / "db") == expected(1, _english)[0]
    for path, told in (
        (bare, rf"{bare}: Virtuoso's loader picks the parser by the name's ending; name or link it as \.nt"),
        (tmp_path / "absent.nt", r"no N-Triples at .*absent\.nt: --filtered takes a file or a directory"),
    ):
        with pytest.raises(BuildError, match=told):
            build_freebase(BuildOptions(db=tmp_path / "other", filtered=path, memory_gb=0.5), say=lambda _: None)
