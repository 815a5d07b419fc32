"""``python -m kgx.report drop``: hits@1 against kg.drop per method, from a real sweep (ToG and GoG under
the oracle on a six-film KG, the whole KG and every crucial triple dropped), as text, CSV and a PNG."""

from __future__ import annotations

import contextlib
import csv
import io

import polars as pl
import pytest

from kgx.report.__main__ import main
from kgx.report.drop import with_drop
from tests.films import oracle_overrides, write_kb, write_questions
from tests.inprocess import kgx_main


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    here = tmp_path_factory.mktemp("sweep")
    kb = write_kb(here)
    questions = write_questions(here, [["John Frankenheimer"]])
    overrides = oracle_overrides(kb, questions, here / "cache")
    done = kgx_main(here, "-m", "method=tog,gog", "kg.drop=0,1.0", *overrides)
    assert done.returncode == 0, done.stderr
    return here


def report(here, *args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["drop", "--tracking-uri", f"sqlite:///{here / 'mlruns' / 'mlflow.db'}", *args])
    return out.getvalue()


def test_the_table_csv_and_plot_show_each_method_against_the_drop_share(sweep):
    text = report(sweep, "--out-dir", str(sweep / "report"))
    lines = text.splitlines()
    assert lines[0] == "hits1 by method / kg.drop: mean +- std over seeds (n = runs)"
    assert lines[1].split() == ["method", "0.0", "1.0"]
    assert lines[3].split() == ["gog", "100.0", "(n=1)", "100.0", "(n=1)"]  # GoG generates what was dropped
    assert lines[4].split() == ["tog", "100.0", "(n=1)", "0.0", "(n=1)"]  # ToG finds nothing left to read
    cells = list(csv.DictReader((sweep / "report" / "hits1_vs_kg.drop.csv").open()))
    assert {(c["method"], c["kg.drop"], c["mean"]) for c in cells} == {
        ("gog", "0.0", "100.0"),
        ("gog", "1.0", "100.0"),
        ("tog", "0.0", "100.0"),
        ("tog", "1.0", "0.0"),
    }
    figure = sweep / "report" / "hits1_vs_kg.drop.png"
    assert figure.stat().st_size > 1000 and lines[-1] == str(figure)


def test_a_run_from_before_kg_drop_counts_as_the_whole_kg():
    old = pl.DataFrame({"params.method.name": ["tog"], "params.dataset.name": ["x"]})
    assert with_drop(old)["params.kg.drop"].to_list() == ["0.0"]
    mixed = pl.DataFrame({"params.kg.drop": [None, "0.4"]}, schema={"params.kg.drop": pl.String})
    assert with_drop(mixed)["params.kg.drop"].to_list() == ["0.0", "0.4"]


def test_an_unknown_metric_is_one_line(sweep, capsys):
    with pytest.raises(SystemExit):
        report(sweep, "--metric", "nope", "--out-dir", str(sweep / "report"))
    assert "no run has a value for metric 'nope'" in capsys.readouterr().err
