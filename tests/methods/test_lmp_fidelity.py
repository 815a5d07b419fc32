"""Held-out check of LMP's way back on MetaQA 2-hop: questions whose two hops walk one relation forth and
back ("films with the same director as X", "who acted with X") are answerable only if LMP may walk
back along the relation a layer came by. The first 40 such test questions, in file order, on the
scripted backbone; their answers must lie in the evidence (75% when LMP may not walk back)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not os.environ.get("KGX_DATA_DIR"), reason="needs $KGX_DATA_DIR (MetaQA 2-hop questions, their types and the KB)"
)
COUNT = 40


def same_relation(qtype: str) -> bool:
    """``movie_to_director_to_movie``, ``actor_to_movie_to_actor``: one relation, forth then back."""
    ends = qtype.split("_to_")
    return len(ends) == 3 and ends[0] == ends[2]


@pytest.fixture(scope="module")
def ids() -> list[str]:
    """Ids of the first COUNT same-relation questions: the loader's ``metaqa_2hop-<line>``, where the
    type file aligns line by line with ``qa_test.txt``."""
    qtypes = Path(os.environ["KGX_DATA_DIR"], "metaqa", "2-hop", "qa_test_qtype.txt").read_text().splitlines()
    return [f"metaqa_2hop-{line:05d}" for line, qtype in enumerate(qtypes, 1) if same_relation(qtype.strip())][:COUNT]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    """One KG store for the module."""
    return tmp_path_factory.mktemp("metaqa-kg-cache")


def test_the_selection_is_forth_and_back_questions(ids):
    from kgx.datasets import dataset_config, load

    cfg = dataset_config("metaqa_2hop")
    cfg.ids = ids
    qtypes = [q.meta["qtype"] for q in load(cfg)]
    assert len(qtypes) == COUNT and all(same_relation(qtype) for qtype in qtypes)
    assert set(qtypes) >= {"movie_to_director_to_movie", "movie_to_actor_to_movie", "movie_to_writer_to_movie"}


@pytest.mark.slow
def test_lmp_walks_back_to_same_relation_answers(run, ids, cache_dir):
    outcome = run(
        "method=lmp",
        "kg=metaqa",
        "llm=scripted",
        "method.depth=2",
        "method.width=10",
        "dataset=metaqa_2hop",
        f"dataset.ids=[{','.join(ids)}]",
        f"run.cache_dir={cache_dir}",
    )
    assert outcome.status == "FINISHED" and len(outcome.records) == COUNT
    assert outcome.summary["answer_recall"] >= 90
