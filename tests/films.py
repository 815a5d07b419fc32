"""A MetaQA-shaped KB of six films, small enough to read every triple: the gold chains of its
questions (actor -> film -> director) are walked by kg.drop's tests and GoG's."""

from __future__ import annotations

from pathlib import Path

from kgx.core.config import KGConfig
from kgx.core.types import Question
from kgx.kg.name_level import name_id

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


def films_config(kb: Path, **fields) -> KGConfig:
    return KGConfig(name="films", sources=[str(kb)], format="metaqa", **fields)
