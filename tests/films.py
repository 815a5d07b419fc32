"""A MetaQA-shaped KB of six films, small enough to read every triple: the gold chains of its
questions (actor -> film -> director) are walked by kg.drop's tests and GoG's."""

from __future__ import annotations

import json
from pathlib import Path

from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.sources import name_id
from kgx.core.types import Question

KB = """Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|starred_actors|Robert De Niro
Heat|release_year|1995
Serpico|directed_by|Sidney Lumet
Serpico|starred_actors|Al Pacino
Serpico|release_year|1973
Ronin|directed_by|John Frankenheimer
Ronin|starred_actors|Robert De Niro
Ronin|release_year|1998
"""
PACINO, DE_NIRO, HEAT, SERPICO = (name_id(n) for n in ("Al Pacino", "Robert De Niro", "Heat", "Serpico"))
MANN, LUMET = name_id("Michael Mann"), name_id("Sidney Lumet")
DIRECTORS = Question(
    "q1",
    "who directed the films Al Pacino starred in",
    {PACINO: "Al Pacino"},
    [["Michael Mann"], ["Sidney Lumet"]],
    {"qtype": "actor_to_movie_to_director"},
)


def write_kb(folder: Path) -> Path:
    kb = folder / "kb.txt"
    kb.write_text(KB)
    return kb


def films_config(kb: Path, **fields) -> EmbeddedKGConfig:
    return EmbeddedKGConfig(name="films", sources=[str(kb)], format="metaqa", **fields)


def write_questions(folder: Path, de_niro: list[list[str]]) -> Path:
    """Two questions as a dataset file (``dataset=custom``): Al Pacino's directors, and Robert De
    Niro's with the gold ``de_niro`` (one the KG lacks makes a question no search can answer)."""
    rows = [
        ("q1", DIRECTORS.text, "Al Pacino", DIRECTORS.answers),
        ("q2", "who directed the films Robert De Niro starred in", "Robert De Niro", de_niro),
    ]
    path = folder / "questions.jsonl"
    meta = {"qtype": "actor_to_movie_to_director"}
    path.write_text(
        "".join(
            json.dumps({"id": i, "question": q, "topic_entities": [t], "answers": a, "meta": meta}) + "\n"
            for i, q, t, a in rows
        )
    )
    return path


def oracle_overrides(kb: Path, questions: Path, cache: Path) -> list[str]:
    """``python -m kgx`` overrides of an oracle run on the films KB and questions."""
    return [
        "llm=oracle",
        "dataset=custom",
        f"dataset.path={questions}",
        "dataset.name=films",
        "kg=metaqa",
        "kg.name=films",
        f"kg.sources=[{kb}]",
        f"run.cache_dir={cache}",
        "run.progress=false",
    ]


def records(launch: Path) -> dict[str, dict]:
    """The records of the one run started in ``launch``, by question id."""
    (path,) = launch.glob("outputs/runs/*/predictions.jsonl")
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}
