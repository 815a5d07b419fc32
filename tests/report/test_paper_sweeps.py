"""What became of a paper sweep's jobs: a job that failed shows its cell ``failed`` with the reason in one
line, and the notes count the failed jobs and name the command that reruns them; ``--parent NAME`` takes
the latest sweep of that name with finished runs and says so, listing the others with their overrides,
counts and start times; bad input (a name no sweep has, an unknown table, a released file in an unknown
format) is one line saying what and how to fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from kgx.report.__main__ import main as report_main
from kgx.report.sweeps import reason
from tests.helpers import unwrapped
from tests.inprocess import Done, paper_sweep

CWQ = [
    {"ID": "c1", "question": "What is the capital of Australia?", "answer": "Canberra"}
    | {"compositionality_type": "composition", "topic_entity": {"m.0_kk": "Australia"}},
    {"ID": "c2", "question": "Who wrote Hamlet?", "answer": "William Shakespeare"}
    | {"compositionality_type": "conjunction", "topic_entity": {"m.03u0": "Hamlet"}},
]
ROWS = "+paper/row=io_gpt35,cot_gpt35"
# The scripted backbone failing its every call: each job's first request fails, so no question runs.
FAILING = ("llm.failure_rate=0.99", "llm.max_retries=0")


def sweep(cwd: Path, *args: str) -> Done:
    return paper_sweep(cwd, "tog_table1", ROWS, "dataset=cwq", *args)


@pytest.fixture(scope="module")
def twice(tmp_path_factory, _mlflow_template) -> Path:
    """ToG Table 1's IO and CoT rows on CWQ swept twice: finished, then (other overrides) failed."""
    cwd = tmp_path_factory.mktemp("paper-twice")
    (cwd / "data" / "freebase_qa").mkdir(parents=True)
    (cwd / "data" / "freebase_qa" / "cwq.json").write_text(json.dumps(CWQ))
    (cwd / "data" / "freebase_qa" / "cwq_aliases.json").write_text("{}")
    assert "2 finished, 0 failed" in sweep(cwd).stdout
    failed = sweep(cwd, *FAILING)
    assert failed.returncode != 0 and "0 finished, 2 failed" in failed.stdout
    return cwd


def report(capsys, cwd: Path, *args: str) -> tuple[str, str]:
    report_main(["paper", *args, "--tracking-uri", f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}"])
    captured = capsys.readouterr()
    return unwrapped(captured.out), captured.err


def failed_sweep(cwd: Path) -> str:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    (parent,) = client.search_runs(["1"], "tags.sweep_overrides LIKE '%failure_rate%'")
    return parent.info.run_id


def test_failed_jobs_are_counted_with_their_reason_and_the_command_that_reruns_them(twice, capsys):
    """The jobs failed at the LLM's first request, before any question ran: their FAILED runs carry the
    jobs' params, so each shows in its cell as failed; the notes count them, say why, and name the
    command that runs them again."""
    out, _ = report(capsys, twice, "tog_table1", "--parent", failed_sweep(twice), "--format", "csv")
    frame = pl.read_csv(out.encode(), infer_schema_length=None)
    failed = frame.filter(pl.col("state") == "failed")
    assert sorted(zip(failed["row"], failed["column"])) == [("CoT", "CWQ"), ("IO prompt", "CWQ")]
    assert set(frame.filter(pl.col("state") != "failed")["state"]) == {"not run"}
    text, _ = report(capsys, twice, "tog_table1", "--parent", failed_sweep(twice))
    line = next(n for n in text.splitlines() if n.startswith("Failed jobs: "))
    assert re.fullmatch(
        r"Failed jobs: 2 of sweep tog_table1: paper/row [0-9a-f]{6} \(2× LLM scripted failed its first request "
        r"\(ServiceUnavailableError\); no question ran\)\. `python -m kgx -m \+paper=tog_table1 llm=scripted "
        r"run\.progress=false \+paper/row=io_gpt35,cot_gpt35 dataset=cwq llm\.failure_rate=0\.99 "
        r"llm\.max_retries=0` runs them again \(jobs that finished are skipped\)\.",
        line,
    ), line


def test_a_job_that_failed_after_logging_its_params_shows_its_cell_failed_with_the_reason(
    tmp_path, _mlflow_template, capsys
):
    """The scripted backbone failing half its calls (seed 1, one question at a time): the first
    request passes, a question's fails, and the run stops FAILED with its params logged."""
    (tmp_path / "data" / "freebase_qa").mkdir(parents=True)
    (tmp_path / "data" / "freebase_qa" / "cwq.json").write_text(json.dumps(CWQ))
    (tmp_path / "data" / "freebase_qa" / "cwq_aliases.json").write_text("{}")
    failing = ("llm.failure_rate=0.5", "llm.max_retries=0", "run.max_consecutive_errors=1", "run.seed=1")
    done = paper_sweep(tmp_path, "tog_table1", "+paper/row=io_gpt35", "dataset=cwq", *failing, "run.concurrency=1")
    assert "0 finished, 1 failed" in done.stdout
    out, _ = report(capsys, tmp_path, "tog_table1", "--format", "csv")
    frame = pl.read_csv(out.encode(), infer_schema_length=None)
    (failed,) = frame.filter(pl.col("state") == "failed").to_dicts()
    assert (failed["row"], failed["column"]) == ("IO prompt", "CWQ")
    assert "failed: LLM scripted failed (ServiceUnavailableError) (job " in failed["notes"]
    assert set(frame.filter(pl.col("state") != "failed")["state"]) == {"not run"}
    text, _ = report(capsys, tmp_path, "tog_table1")
    assert re.search(r"^\s+kgx\s+failed\s+not run", text, re.M)
    assert "failed: a sweep's job for the cell failed (the reason below)." in text


def test_parent_by_name_takes_the_latest_sweep_with_finished_runs_and_says_so(twice, capsys):
    out, _ = report(capsys, twice, "tog_table1", "--parent", "tog_table1", "--format", "csv")
    frame = pl.read_csv(out.encode(), infer_schema_length=None)
    assert sorted(frame.filter(pl.col("state") == "run")["row"].to_list()) == ["CoT", "IO prompt"]
    text, _ = report(capsys, twice, "tog_table1", "--parent", "tog_table1")
    said = next(n for n in text.splitlines() if n.startswith("kgx: "))
    assert "2 sweeps are named 'tog_table1': shown is the latest with finished runs, " in said
    assert re.search(
        r"overrides '\+paper=tog_table1 llm=scripted run\.progress=false \+paper/row=io_gpt35,cot_gpt35 "
        r"dataset=cwq', 2 finished, 0 failed, started 20\d\d-",
        said,
    )
    assert re.search(
        r"the others: [0-9a-f]{32} \(tog_table1: paper/row [0-9a-f]{6}: overrides '.*llm\.failure_rate=0\.99 "
        r"llm\.max_retries=0', 0 finished, 2 failed, started 20",
        said,
    )
    report_main(["table", "--parent", "tog_table1", "--tracking-uri", f"sqlite:///{twice / 'mlruns' / 'mlflow.db'}"])
    assert (
        "kgx.report: 2 sweeps are named 'tog_table1': shown is the latest with finished runs" in capsys.readouterr().err
    )


def test_a_parent_no_sweep_has_is_one_line_listing_the_sweeps(twice, capsys):
    with pytest.raises(SystemExit) as stop:
        report(capsys, twice, "tog_table1", "--parent", "knowpath_table1")
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert "no run id or sweep named 'knowpath_table1' in experiment 'kgx' of sqlite:///" in err
    assert err.count("finished, ") == 2 and "sweeps there (latest first): " in err


def test_an_unknown_table_is_one_line_listing_the_tables(capsys):
    with pytest.raises(SystemExit) as stop:
        report_main(["paper", "knowpath_table9"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith("kgx.report: error: no paper table 'knowpath_table9'; the tables:")
    assert "  lmp_table12 " in err and "  lmp_figure4 " in err


def test_a_released_file_in_an_unknown_format_says_so_in_its_cell(tmp_path, monkeypatch, capsys):
    path = tmp_path / "reference_outputs" / "lmp" / "lmp_webqsp_gpt-4_1hop.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"question": "who influenced samuel taylor coleridge?", "prediction_text": "Kant"}) + "\n"
    )
    (tmp_path / "freebase_qa").mkdir()
    webqsp = [
        {"QuestionId": "q1", "RawQuestion": "who influenced samuel taylor coleridge?", "answer": ["Kant"]}
        | {"topic_entity": {"m.078w2": "Samuel Taylor Coleridge"}}
    ]
    (tmp_path / "freebase_qa" / "WebQSP.json").write_text(json.dumps(webqsp))
    monkeypatch.setenv("KGX_DATA_DIR", str(tmp_path))
    report_main(["paper", "lmp_table1", "--released", "--format", "csv"])
    frame = pl.read_csv(capsys.readouterr().out.encode(), infer_schema_length=None)
    cell = frame.filter((pl.col("row") == "LMP + GPT-4") & (pl.col("column") == "WebQSP")).to_dicts()[0]
    assert cell["state"] == "no released output"
    assert (
        "released output lmp/lmp_webqsp_gpt-4_1hop.jsonl not scored: " in cell["notes"]
        and "lmp_webqsp_gpt-4_1hop.jsonl:1: not a known prediction format (keys: ['prediction_text', 'question']); "
        "expected kgx 'prediction', LMP 'result', PoG/ToG 'results' or AoG 'Answer'"
        in cell["notes"]
    )
    missing = frame.filter((pl.col("row") == "LMP + ChatGPT") & (pl.col("column") == "WebQSP")).to_dicts()[0]
    assert missing["state"] == "no released output" and "not found: " in missing["notes"]


@pytest.mark.parametrize(
    "error, said",
    [
        (
            "LLMError: llm 'gpt35' (gpt-3.5-turbo-0125) needs an API key: set the environment variable OPENAI_API_KEY",
            "no API key (OPENAI_API_KEY is not set)",
        ),
        (
            "KGUnavailable: SPARQL endpoint http://localhost:8890/sparql unreachable after 4 tries: refused",
            "KG endpoint http://localhost:8890/sparql unreachable",
        ),
        (
            "DataError: file not found: freebase_qa/cwq.json (looked in /data)",
            "data file missing (freebase_qa/cwq.json)",
        ),
        ("ValueError: something odd\nTraceback ...", "something odd"),
    ],
)
def test_a_failure_reason_is_one_line(error, said):
    assert reason(error) == said


def test_the_sweeps_own_page_counts_a_failed_job_and_names_the_rerun_command(tmp_path, _mlflow_template):
    """A job failing at run time (its WebQSP file is malformed) beside one that finished: the page
    the sweep logs to its parent run (what MLflow's artifact view shows) says why and how to rerun."""
    from mlflow.tracking import MlflowClient

    (tmp_path / "data" / "freebase_qa").mkdir(parents=True)
    (tmp_path / "data" / "freebase_qa" / "cwq.json").write_text(json.dumps(CWQ))
    (tmp_path / "data" / "freebase_qa" / "cwq_aliases.json").write_text("{}")
    (tmp_path / "data" / "freebase_qa" / "WebQSP.json").write_text('[{"QuestionId": 5}]')
    done = paper_sweep(tmp_path, "tog_table1", "+paper/row=io_gpt35", "dataset=cwq,webqsp")
    assert "1 finished, 1 failed" in done.stdout
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    (parent,) = client.search_runs(["1"], "tags.sweep = 'tog_table1'")
    page = Path(client.download_artifacts(parent.info.run_id, "report/index.html", str(tmp_path))).read_text()
    why = "field &#x27;QuestionId&#x27; must be str, found int)."
    assert '<p class="note">Failed jobs: 1 of sweep tog_table1: dataset ' in page and why in page
    assert (
        "`python -m kgx -m +paper=tog_table1 llm=scripted run.progress=false +paper/row=io_gpt35 dataset=cwq,webqsp`"
        in page
    )
