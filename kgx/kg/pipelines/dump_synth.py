"""A synthetic Freebase dump in the real format, made from the bundled demo KG: for trying
``python -m kgx.kg freebase build`` end to end in minutes, and for its tests and benchmark.

The real ``freebase-rdf-latest.gz`` is one gzip stream of tab-separated N-Triples lines
(``<s>\\t<p>\\t<o>\\t.``) with full IRIs. Copy 0 is the demo KG as it is, so the demo questions
run on the result; each further copy renames every mid (``m.0d3k14`` -> ``m.0d3k14_2``) and leaves
out schema nodes, so ``copies`` scales the triple count without repeating a triple. ``noise``
mixes in lines every Freebase filter must handle: once per copy, names in other languages,
a predicate and a subject outside ``http://rdf.freebase.com/ns/`` and an object IRI outside it;
in copy 0 only (they are rare in the real dump, and a block holding one is filtered line by
line), malformed lines (no final dot, three fields, an empty field).
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

NS = "http://rdf.freebase.com/ns/"
_MID = re.compile(r"^(http://rdf\.freebase\.com/ns/[mg]\.[A-Za-z0-9_]+)$")


@dataclass(frozen=True)
class SynthCounts:
    lines: int  # every line written
    demo: int  # lines of demo triples, all copies
    noise: int  # well-formed triples outside any filter's keep (languages, namespaces)
    malformed: int  # lines that are not a triple


def _term(term: object) -> str:
    return str(term)  # pyoxigraph prints N-Triples terms: <iri>, "v"@en, "v"^^<dt>


def demo_lines(source: Path) -> list[tuple[str, str, str]]:
    """The demo KG's triples as N-Triples terms, in file order."""
    return [
        (_term(t.subject), _term(t.predicate), _term(t.object))
        for t in ox.parse(path=str(source), format=ox.RdfFormat.N_TRIPLES)
    ]


def _rename(term: str, copy: int) -> str:
    if copy and term.startswith("<") and _MID.match(term[1:-1]):
        return f"{term[:-1]}_{copy}>"
    return term


def _is_mid(term: str) -> bool:
    return term.startswith("<") and bool(_MID.match(term[1:-1]))


def noise_lines(copy: int) -> tuple[list[str], list[str]]:
    """(well-formed lines no filter keeps, malformed lines) for one copy."""
    mid = f"<{NS}m.0noise_{copy}>"
    name = f"<{NS}type.object.name>"
    dropped = [
        f'{mid}\t{name}\t"Nom du bruit {copy}"@fr\t.',
        f'{mid}\t{name}\t"噪音 {copy}"@zh\t.',
        f"{mid}\t<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>\t<{NS}common.topic>\t.",
        f'<http://example.org/thing{copy}>\t{name}\t"Thing {copy}"@en\t.',
        f"{mid}\t<{NS}common.topic.topic_equivalent_webpage>\t<http://en.wikipedia.org/wiki/N{copy}>\t.",
    ]
    malformed = (
        [
            f'{mid}\t{name}\t"no final dot {copy}"@en',
            f"{mid}\t<{NS}people.person.gender>\t.",
            f'{mid}\t\t"empty predicate"\t.',
        ]
        if copy == 0
        else []
    )
    return dropped, malformed


def write_dump(path: Path, source: Path, copies: int = 1, noise: bool = True) -> SynthCounts:
    """Write the dump to ``path`` (gzip) and return what it holds."""
    triples = demo_lines(source)
    lines = demo = noisy = bad = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        for copy in range(copies):
            dropped, malformed = noise_lines(copy) if noise else ([], [])
            extra = dropped + malformed
            for number, (s, p, o) in enumerate(triples):
                if copy and not _is_mid(s):
                    continue
                out.write(f"{_rename(s, copy)}\t{p}\t{_rename(o, copy)}\t.\n")
                demo += 1
                if extra and number % 97 == 0:  # noise spread through the copy, not in one block
                    out.write(extra.pop() + "\n")
            for line in extra:
                out.write(line + "\n")
            noisy += len(dropped)
            bad += len(malformed)
    lines = demo + noisy + bad
    return SynthCounts(lines=lines, demo=demo, noise=noisy, malformed=bad)
