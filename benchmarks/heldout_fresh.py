"""Build (or check) kgx's second held-out oracle set: MetaQA questions whose topic entities are drawn
from the KB with a seed nobody tuned to, in wording written for this set (neither MetaQA's
templates nor the first held-out set's, benchmarks/heldout_set.py).

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/heldout_fresh.py           # write tests/data/heldout_fresh/
    KGX_DATA_DIR=... python benchmarks/heldout_fresh.py --check   # the committed files are what the KB gives

Per set (1-, 2- and 3-hop), ``PER_SET`` questions cycle through the set's question types; each
draws topic entities of the type's first kind from the KB with ``random.Random(SEED)`` until one's
chain reaches between 1 and ``MAX_ANSWERS`` answers through middle layers of at most ``MAX_LAYER``
nodes (benchmarks/heldout_set.py's rules, which also derive the answers, chains and small KB).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import heldout_set as base

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "heldout_fresh"
SEED = 20917  # drawn once for this set; never tuned
PER_SET = 20
# question type -> wording, "{}" the topic entity.
WORDING: dict[str, dict[str, str]] = {
    "metaqa_1hop": {
        "movie_to_director": "{}: name the person who directed it",
        "movie_to_writer": "whose screenplay is {}",
        "movie_to_actor": "cast members of {}",
        "movie_to_genre": "what sort of film is {}",
        "movie_to_year": "{} first reached cinemas in which year",
        "movie_to_language": "the spoken language of {}",
        "director_to_movie": "a picture that {} directed",
        "actor_to_movie": "a film featuring {}",
        "writer_to_movie": "a screenplay penned by {}",
        "movie_to_tags": "keywords that describe {}",
    },
    "metaqa_2hop": {
        "movie_to_director_to_movie": "other pictures by the director of {}",
        "actor_to_movie_to_director": "{} has acted for which directors",
        "movie_to_writer_to_movie": "what else did the writers of {} write",
        "director_to_movie_to_actor": "performers in films that {} directed",
        "actor_to_movie_to_genre": "kinds of film {} has appeared in",
        "writer_to_movie_to_year": "years in which scripts by {} became films",
        "movie_to_actor_to_movie": "films with someone from the cast of {}",
        "director_to_movie_to_language": "languages of the films {} directed",
    },
    "metaqa_3hop": {
        "movie_to_director_to_movie_to_actor": "actors in films by whoever directed {}",
        "movie_to_writer_to_movie_to_director": "directors of films written by the writers of {}",
        "movie_to_director_to_movie_to_year": "release years of the films made by the director of {}",
        "movie_to_director_to_movie_to_genre": "genres of the work of the director of {}",
        "movie_to_writer_to_movie_to_language": "languages of the films scripted by the writers of {}",
        "actor_to_movie_to_director_to_movie": "films by the directors {} has worked with",
    },
}


def draw(kb: base.KB, name: str) -> list[tuple[str, str, str]]:
    """The set's questions: types in turn, each with the first seeded topic whose walk fits."""
    rng = random.Random(f"{SEED}:{name}")
    kinds = {
        kind: sorted({head if kind == "movie" else tail for head, relation, tail in kb.lines if relation == rel})
        for kind, rel in [("movie", "directed_by"), *base.KINDS.items()]
    }
    types, out, used = list(WORDING[name]), [], set()
    for i in range(PER_SET):
        qtype = types[i % len(types)]
        pool = kinds[qtype.split("_to_")[0]]
        for _ in range(2000):
            topic = rng.choice(pool)
            if topic in used or not topic[0].isalpha():
                continue
            try:
                base.walk(kb, topic, base.metaqa_steps(qtype), name)
            except ValueError:
                continue
            used.add(topic)
            out.append((WORDING[name][qtype].format(topic), topic, qtype))
            break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = parser.parse_args()
    root = base.data_dir()
    kb = base.KB(base.read_kb(root / "metaqa" / "kb.txt", "|"))
    base.QUESTIONS = {name: draw(kb, name) for name in WORDING}
    files = {k: v for k, v in base.outputs(root).items() if k != "pq_kb.txt"}
    files = {
        k: v.replace("kgx held-out set (benchmarks/heldout_set.py)", "kgx fresh held-out set") for k, v in files.items()
    }
    base.write_or_check(files, OUT, args.check, "benchmarks/heldout_fresh.py")


if __name__ == "__main__":
    main()
