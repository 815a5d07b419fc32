"""Build (or check) kgx's held-out oracle set: questions in kgx's own words over the MetaQA KB and
PathQuestion, with gold answers and gold relation chains derived from the KB files, not guessed.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/heldout_set.py  # write tests/data/heldout/
    KGX_DATA_DIR=... python benchmarks/heldout_set.py --check  # the committed files are what the KB gives

Each question is written here by hand: a topic entity, a relation chain and wording that is not
MetaQA's templates nor PathQuestion's. The script walks the chain in the KB from the topic: the
gold answers are the nodes it ends at (the topic itself left out, as MetaQA leaves it out of its
co-star answers), and the gold chain is MetaQA's question type (``actor_to_movie_to_director``) or
PathQuestion's path (``subject#r1#e1#...#answer``, one per answer path). A chain that reaches no
answer, or more than ``MAX_ANSWERS``, is refused, naming the question.

Beside the questions it writes a small KB per source: every KB line that touches a node the chain
walks through (the topic and each middle layer, all of its nodes, not only those leading to an
answer), so that a method standing anywhere on the walk sees the neighbours it would see in the
whole KB. Off the walk, a neighbour has only the edge that reached it. A test runs every KG method
on these files under ``llm=oracle`` (tests/methods/test_heldout.py) without ``$KGX_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

from kgx.diagnose.gold_path import METAQA_KINDS as KINDS

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "heldout"
MAX_ANSWERS = 30  # answers a question may have: a short list a reader can check
MAX_LAYER = 400  # nodes one middle layer of a walk may hold: the small KB stays small
# set -> [(question, topic entity, chain)]: MetaQA chains are question types, PathQuestion chains
# relation names walked forwards.
QUESTIONS: dict[str, list[tuple[str, str, str]]] = {
    "metaqa_1hop": [
        ("Caro diario was made by which director", "Caro diario", "movie_to_director"),
        ("name a screenwriter credited on Good Will Hunting", "Good Will Hunting", "movie_to_writer"),
        ("After Dark, My Sweet: who plays in it", "After Dark, My Sweet", "movie_to_actor"),
        ("Cooking with Stella belongs to what kind of film", "Cooking with Stella", "movie_to_genre"),
        ("in what year did Groundhog Day come out", "Groundhog Day", "movie_to_year"),
        ("Run Lola Run is spoken in which language", "Run Lola Run", "movie_to_language"),
        ("give me a film Wim Wenders was behind the camera for", "Wim Wenders", "director_to_movie"),
        ("Jodie Foster shows up in which pictures", "Jodie Foster", "actor_to_movie"),
        ("Billy Wilder put his name to the script of which film", "Billy Wilder", "writer_to_movie"),
        ("Some Like It Hot had which filmmaker in charge", "Some Like It Hot", "movie_to_director"),
        ("list someone acting in Fargo", "Fargo", "movie_to_actor"),
        ("Taxi Driver: what is its genre", "Taxi Driver", "movie_to_genre"),
        ("Casablanca premiered in what year", "Casablanca", "movie_to_year"),
        ("who wrote the words for Wings of Desire", "Wings of Desire", "movie_to_writer"),
        ("The Silence of the Lambs has whom in its cast", "The Silence of the Lambs", "movie_to_actor"),
    ],
    "metaqa_2hop": [
        ("Caro diario's director also made which films", "Caro diario", "movie_to_director_to_movie"),
        ("which actors share a film with Franka Potente", "Franka Potente", "actor_to_movie_to_actor"),
        ("the people who directed Jodie Foster's films are who", "Jodie Foster", "actor_to_movie_to_director"),
        ("what languages are Wim Wenders' movies in", "Wim Wenders", "director_to_movie_to_language"),
        ("in which years did films written by Billy Wilder appear", "Billy Wilder", "writer_to_movie_to_year"),
        ("genres of the movies Bruce Dern acted in", "Bruce Dern", "actor_to_movie_to_genre"),
        ("Nanni Moretti directed films; who starred in them", "Nanni Moretti", "director_to_movie_to_actor"),
        ("who did Harold Ramis direct alongside, as fellow directors", "Harold Ramis", "director_to_movie_to_director"),
        ("Tom Tykwer wrote films with which other writers", "Tom Tykwer", "writer_to_movie_to_writer"),
        ("the writers of the films Lisa Ray played in", "Lisa Ray", "actor_to_movie_to_writer"),
        ("Caro diario shares an actor with which other movies", "Caro diario", "movie_to_actor_to_movie"),
        ("movies by the screenwriter of After Dark, My Sweet", "After Dark, My Sweet", "movie_to_writer_to_movie"),
        ("which film makers shot movies that Joel Coen wrote", "Joel Coen", "writer_to_movie_to_director"),
        ("when were the pictures starring Don McKellar released", "Don McKellar", "actor_to_movie_to_year"),
        ("which films share a director with Fargo", "Fargo", "movie_to_director_to_movie"),
    ],
    "metaqa_3hop": [
        (
            "the director of Caro diario made films; who wrote them",
            "Caro diario",
            "movie_to_director_to_movie_to_writer",
        ),
        (
            "actors of Cooking with Stella appear in other films: in which years",
            "Cooking with Stella",
            "movie_to_actor_to_movie_to_year",
        ),
        (
            "what genres do the films of the director of Wings of Desire have",
            "Wings of Desire",
            "movie_to_director_to_movie_to_genre",
        ),
        (
            "Run Lola Run's writer wrote other films: who directed those",
            "Run Lola Run",
            "movie_to_writer_to_movie_to_director",
        ),
        (
            "films by the director of After Dark, My Sweet star which actors",
            "After Dark, My Sweet",
            "movie_to_director_to_movie_to_actor",
        ),
        (
            "languages of the films in which Caro diario's actors played",
            "Caro diario",
            "movie_to_actor_to_movie_to_language",
        ),
        (
            "whoever wrote Some Like It Hot: the genres of the films he wrote",
            "Some Like It Hot",
            "movie_to_writer_to_movie_to_genre",
        ),
        (
            "who directed the other films of the cast of Run Lola Run",
            "Run Lola Run",
            "movie_to_actor_to_movie_to_director",
        ),
        (
            "the writer of Cooking with Stella: which actors are in films she wrote",
            "Cooking with Stella",
            "movie_to_writer_to_movie_to_actor",
        ),
        (
            "release years of films directed by the man behind Caro diario",
            "Caro diario",
            "movie_to_director_to_movie_to_year",
        ),
        (
            "Cooking with Stella's director made films written by whom",
            "Cooking with Stella",
            "movie_to_director_to_movie_to_writer",
        ),
        (
            "what other writers worked on films by the screenwriter of Run Lola Run",
            "Run Lola Run",
            "movie_to_writer_to_movie_to_writer",
        ),
    ],
    "pq_2h": [
        ("with whom did ada_lovelace have her children", "ada_lovelace", "children#parents"),
        ("sigrid_the_haughty married a man; name his child", "sigrid_the_haughty", "spouse#children"),
        ("from the parents of john_elector_of_saxony: which daughter", "john_elector_of_saxony", "parents#children"),
        ("magnus_i_of_norway's parents followed which faith", "magnus_i_of_norway", "parents#religion"),
        ("kids of henriette_adelaide_of_savoy's husband", "henriette_adelaide_of_savoy", "spouse#children"),
        ("how did caesonia's husband die", "caesonia", "spouse#cause_of_death"),
        ("what work did rose_fitzgerald_kennedy's parent do", "rose_fitzgerald_kennedy", "parents#profession"),
        ("athelstan_of_england's grandmother on his father's side", "athelstan_of_england", "parents#parents"),
        ("the wife of adelaide_of_aquitaine's son", "adelaide_of_aquitaine", "children#spouse"),
        ("the grandchild of augustus_iii_of_poland", "augustus_iii_of_poland", "children#children"),
        (
            "which city did sophia_charlotte_of_hanover's son die in",
            "sophia_charlotte_of_hanover",
            "children#place_of_death",
        ),
        (
            "the country august_anheuser_busch_sr's children belonged to",
            "august_anheuser_busch_sr",
            "children#nationality",
        ),
    ],
    "pq_3h": [
        (
            "where was the child of sigrid_the_haughty's husband born",
            "sigrid_the_haughty",
            "spouse#children#place_of_birth",
        ),
        (
            "john_elector_of_saxony's parent had a child; whom did she marry",
            "john_elector_of_saxony",
            "parents#children#spouse",
        ),
        ("cause of death of the father of caesonia's husband", "caesonia", "spouse#parents#cause_of_death"),
        (
            "what did athelstan_of_england's grandparent do for a living",
            "athelstan_of_england",
            "parents#parents#profession",
        ),
        (
            "where did the wife of adelaide_of_aquitaine's son die",
            "adelaide_of_aquitaine",
            "children#spouse#place_of_death",
        ),
        ("spouse of the grandson of yongzheng_emperor", "yongzheng_emperor", "children#children#spouse"),
        (
            "nationality of sophia_charlotte_of_hanover's grandchild",
            "sophia_charlotte_of_hanover",
            "children#children#nationality",
        ),
        ("a grandchild of the parent of valaya_alongkorn", "valaya_alongkorn", "parents#children#children"),
        (
            "the country of the husband of amedeo_3rd_duke_of_aosta's mother",
            "amedeo_3rd_duke_of_aosta",
            "parents#spouse#nationality",
        ),
        (
            "where did the other parent of grand_duke_konstantin_nikolayevich_of_russia's children die",
            "grand_duke_konstantin_nikolayevich_of_russia",
            "children#parents#place_of_death",
        ),
        (
            "charles_xiii_of_sweden's grandparents: where did they die",
            "charles_xiii_of_sweden",
            "parents#parents#place_of_death",
        ),
        ("whom did isabella_of_portugal's grandchild marry", "isabella_of_portugal", "children#children#spouse"),
    ],
}


def data_dir() -> Path:
    if not os.environ.get("KGX_DATA_DIR"):
        sys.exit("set KGX_DATA_DIR to the benchmark data folder (metaqa/kb.txt, pathquestion/*-kb.txt)")
    return Path(os.environ["KGX_DATA_DIR"])


def read_kb(path: Path, sep: str) -> list[tuple[str, str, str]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split(sep)
        if len(parts) == 3 and all(parts):
            out.append((parts[0], parts[1], parts[2]))
    return out


class KB:
    """A KB's lines by node, for walking relations in either direction."""

    def __init__(self, lines: list[tuple[str, str, str]]):
        self.lines = lines
        self.out: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.into: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.touching: dict[str, list[int]] = defaultdict(list)
        for i, (head, relation, tail) in enumerate(lines):
            self.out[head, relation].append(tail)
            self.into[tail, relation].append(head)
            self.touching[head].append(i)
            self.touching[tail].append(i)

    def step(self, node: str, relation: str, direction: str) -> list[str]:
        return list(dict.fromkeys((self.out if direction == "out" else self.into)[node, relation]))


def metaqa_steps(qtype: str) -> list[tuple[str, str]]:
    """``actor_to_movie_to_director`` -> [(starred_actors, in), (directed_by, out)]."""
    kinds = qtype.split("_to_")
    steps = []
    for here, there in zip(kinds, kinds[1:]):
        if here == "movie" and there in KINDS:
            steps.append((KINDS[there], "out"))
        elif there == "movie" and here in KINDS:
            steps.append((KINDS[here], "in"))
        else:
            raise ValueError(f"question type {qtype!r}: no MetaQA relation joins {here} and {there}")
    return steps


def walk(kb: KB, topic: str, steps: list[tuple[str, str]], where: str) -> tuple[list[list[str]], list[list[str]]]:
    """The layers of the walk (topic first) and every path from the topic to an answer, as
    ``[topic, r1, e1, ..., answer]``; a walk never comes back to its topic (MetaQA leaves the
    topic out of its answers: an actor is no co-star of their own)."""
    if topic not in kb.touching:
        raise ValueError(f"{where}: topic entity {topic!r} is not in the KB")
    layers, paths = [[topic]], [[topic]]
    for relation, direction in steps:
        paths = [p + [relation, n] for p in paths for n in kb.step(p[-1], relation, direction) if n != topic]
        layers.append(list(dict.fromkeys(p[-1] for p in paths)))
        if len(layers[-1]) > MAX_LAYER:
            raise ValueError(
                f"{where}: {len(layers[-1])} nodes at hop {len(layers) - 1}; choose a less connected topic"
            )
    if not layers[-1]:
        raise ValueError(f"{where}: the chain reaches no answer from {topic!r}")
    if len(layers[-1]) > MAX_ANSWERS:
        raise ValueError(f"{where}: {len(layers[-1])} answers (at most {MAX_ANSWERS}); choose a narrower question")
    return layers, paths


def build(name: str, kb: KB) -> tuple[list[dict], set[int]]:
    """A set's question rows and the KB lines its walks touch."""
    rows, used, refused = [], set(), []
    for i, (text, topic, chain) in enumerate(QUESTIONS[name], 1):
        where = f"{name} question {i} ({text!r})"
        pq = name.startswith("pq")
        steps = [(r, "out") for r in chain.split("#")] if pq else metaqa_steps(chain)
        try:
            layers, paths = walk(kb, topic, steps, where)
        except ValueError as exc:
            refused.append(str(exc))
            continue
        for layer in layers[:-1]:
            for node in layer:
                used.update(kb.touching[node])
        answers = sorted(layers[-1])
        meta: dict = {"hops": len(steps), "source": "kgx held-out set (benchmarks/heldout_set.py)"}
        if pq:
            meta["paths"] = sorted(paths)
        else:
            meta["qtype"] = chain
        rows.append(
            {
                "id": f"{name}-{i:02d}",
                "question": text,
                "topic_entities": [topic],
                "answers": [[a] for a in answers],
                "meta": meta,
            }
        )
    if refused:
        raise ValueError("\n".join(refused))
    return rows, used


def outputs(root: Path) -> dict[str, str]:
    """Every file of the held-out set, by name, as text."""
    metaqa = KB(read_kb(root / "metaqa" / "kb.txt", "|"))
    pq_lines = [line for f in ("2H-kb.txt", "3H-kb.txt") for line in read_kb(root / "pathquestion" / f, "\t")]
    pq = KB(list(dict.fromkeys(pq_lines)))
    files, touched, refused = {}, {"metaqa": set(), "pq": set()}, []
    for name in QUESTIONS:
        source = "pq" if name.startswith("pq") else "metaqa"
        try:
            rows, used = build(name, pq if source == "pq" else metaqa)
        except ValueError as exc:
            refused.append(str(exc))
            continue
        touched[source] |= used
        files[f"{name}.jsonl"] = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if refused:
        sys.exit("\n".join(refused))
    files["metaqa_kb.txt"] = "".join("|".join(metaqa.lines[i]) + "\n" for i in sorted(touched["metaqa"]))
    files["pq_kb.txt"] = "".join("\t".join(pq.lines[i]) + "\n" for i in sorted(touched["pq"]))
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = parser.parse_args()
    write_or_check(outputs(data_dir()), OUT, args.check, "benchmarks/heldout_set.py")


def write_or_check(files: dict[str, str], out: Path, check: bool, script: str) -> None:
    """Write the set's files under ``out``, or (``check``) compare them with the committed ones."""
    stale = []
    for name, text in files.items():
        path = out / name
        lines = text.count("\n")
        if check:
            same = path.exists() and path.read_text(encoding="utf-8") == text
            stale += [] if same else [name]
            print(f"{name:<20}{lines:>6} lines  {'ok' if same else 'DIFFERS from what the KB gives'}")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"{name:<20}{lines:>6} lines  written")
    if stale:
        sys.exit(f"{len(stale)} files differ: rebuild them with python {script}")


if __name__ == "__main__":
    main()
