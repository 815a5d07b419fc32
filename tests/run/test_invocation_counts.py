"""The line a run prints of what this invocation did: questions that ended in an error are
counted as failed, never as answered (kgx.run.execute.conclude, kgx.__main__)."""

from __future__ import annotations

from kgx.core.types import Prediction
from kgx.llm.errors import LLMError
from tests.helpers import swap_method
from tests.inprocess import kgx_main

RUN = ("method=cot", "llm=scripted", "dataset=demo", "dataset.limit=5", "run.progress=false")


def down(question, ctx):
    raise LLMError("llm 'scripted' (kgx-scripted/overlap): ServiceUnavailableError: 503", "llm.server")


def test_a_run_whose_questions_all_failed_answered_none(tmp_path, monkeypatch):
    swap_method(monkeypatch, "cot", down)
    done = kgx_main(tmp_path, *RUN, "run.max_consecutive_errors=0")
    assert done.returncode == 1
    assert "over 5 questions (5 errors)" in done.stdout
    assert "this invocation: 0 answered, 5 failed, 0 resumed, 0 billed LLM calls" in done.stdout


def test_a_rerun_counts_the_questions_it_answered_and_those_that_failed_again(tmp_path, monkeypatch):
    def some_down(question, ctx):
        if question.id in ("demo-002", "demo-004"):
            return down(question, ctx)
        return Prediction(answer="{x}", answers=[question.answers[0][0]])

    swap_method(monkeypatch, "cot", down)
    assert kgx_main(tmp_path, *RUN, "run.max_consecutive_errors=0").returncode == 1
    swap_method(monkeypatch, "cot", some_down)
    again = kgx_main(tmp_path, *RUN, "run.max_consecutive_errors=0")
    assert "this invocation: 3 answered, 2 failed, 0 resumed" in again.stdout
    swap_method(monkeypatch, "cot", lambda q, ctx: Prediction(answer="{x}", answers=[q.answers[0][0]]))
    last = kgx_main(tmp_path, *RUN)
    assert last.returncode == 0 and "this invocation: 2 answered, 3 resumed" in last.stdout
