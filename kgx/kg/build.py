"""Building an embedded store: RDF as is, or name-level triple files turned into Freebase-shaped RDF.

Name-level KGs (MetaQA's ``kb.txt``, PathQuestion's KBs, the replay TSVs) name entities by
their surface strings. They become the same RDF shape as Freebase, so that every method and
query runs unchanged on them: each distinct name is one node ``ns:<name_id(name)>`` carrying
``type.object.name "name"@en``; a name that is already a Freebase mid (``m.05kh7j4``) is that
node itself and stays unnamed, like a CVT node in Freebase; relations become dotted ids.
Names are kept exactly as written (PathQuestion's ``united_kingdom`` too), because the
datasets' questions and answers spell them that way. The ``custom`` format takes a KB of one's
own (head<TAB>relation<TAB>tail) with whatever relation names it uses; a KB that writes every
edge twice (``r`` and ``r_inverse``) can fold the inverse lines back with ``drop_inverse``,
because every method already walks each edge both ways.

A build is all or nothing: a malformed line fails it with ``file:line`` before anything is
loaded (or, with ``skip_bad``, is dropped and counted), and the store is loaded in a temp
directory that only replaces ``store_dir`` once complete.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

import pyoxigraph as ox

from kgx.kg.freebase import NAME, NS

RDF_FORMATS = {"nt": ox.RdfFormat.N_TRIPLES, "ttl": ox.RdfFormat.TURTLE}
NAME_LEVEL_FORMATS = ("tsv", "metaqa", "pathquestion", "custom")
FORMATS = (*RDF_FORMATS, *NAME_LEVEL_FORMATS)
MANIFEST = "kgx-build.json"
# Part of every fingerprint: changing how sources become triples (ids, relation tables) must
# bump it, so that stores built by an older kgx are rebuilt rather than silently reused.
CONVERSION = "kgx-build/1"
# What a custom relation name may keep as written: letters, digits, "_" and inner dots (an id).
_CUSTOM_KEEP = re.compile(r"[^A-Za-z0-9_.]+")

# MetaQA (WikiMovies) relations as Freebase-style ids. directed_by, written_by, starring,
# genre and language are the real Freebase film.film properties (starring is a CVT there,
# a direct edge here); release_year, tags and the IMDb figures have no Freebase counterpart
# and keep their MetaQA names in the film.film domain.
METAQA_RELATIONS = {
    "directed_by": "film.film.directed_by",
    "written_by": "film.film.written_by",
    "starred_actors": "film.film.starring",
    "has_genre": "film.film.genre",
    "in_language": "film.film.language",
    "release_year": "film.film.release_year",
    "has_tags": "film.film.tags",
    "has_imdb_rating": "film.film.imdb_rating",
    "has_imdb_votes": "film.film.imdb_votes",
}

# PathQuestion: PQL relations are Freebase ids written ``__people__person__gender`` and map
# back mechanically. PQ (2H/3H) KBs use the bare last part of a people-domain property; these
# are the Freebase properties they come from. spouse, institution and location cross a CVT in
# Freebase (marriage, education, place lived), which the PQ KB has collapsed to one edge.
PATHQUESTION_RELATIONS = {
    "cause_of_death": "people.deceased_person.cause_of_death",
    "children": "people.person.children",
    "ethnicity": "people.person.ethnicity",
    "gender": "people.person.gender",
    "institution": "people.person.education",
    "location": "people.person.places_lived",
    "nationality": "people.person.nationality",
    "parents": "people.person.parents",
    "place_of_birth": "people.person.place_of_birth",
    "place_of_death": "people.deceased_person.place_of_death",
    "profession": "people.person.profession",
    "religion": "people.person.religion",
    "spouse": "people.person.spouse_s",
}

_MID = re.compile(r"^[mg]\.[0-9a-z_]+$")
# At least one dot: a bare word is a relation from some other scheme (PQ's "parents"), loaded
# with the wrong --format.
_RELATION = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+$")
_SEPARATORS = {"tsv": "\t", "metaqa": "|", "pathquestion": "\t", "custom": "\t"}


class SourceError(ValueError):
    """A KG source that cannot be loaded as asked; the message names the file (and line)."""


class _BadLine(ValueError):
    """One malformed line: fatal, or skipped and counted under ``skip_bad``."""


def name_id(name: str) -> str:
    """The Freebase-style id of an entity known by ``name`` in a name-level KG.

    ``m.kgx`` + 16 base32 characters (80 bits) of the SHA-1 of the UTF-8 name: the same name
    gives the same id on every machine and run, so a dataset maps a topic entity's name to the
    KG without the KG at hand. Real mids start ``m.0``, so generated ids never meet them; a
    name that is itself a mid is returned unchanged. Two names sharing an id would merge two
    entities, so a build that meets one fails (see ``_NameLevel``) instead of renaming either:
    renaming would break the name -> id promise. At 80 bits a shared id becomes likely only
    around 10^12 distinct names.
    """
    if _MID.match(name):
        return name
    digest = base64.b32encode(hashlib.sha1(name.encode("utf-8")).digest()).decode("ascii")
    return "m.kgx" + digest[:16].lower()


def relation_id(fmt: str, relation: str) -> str:
    """The dotted relation id that a relation of a name-level source becomes.

    Datasets whose gold paths name relations (PathQuestion) map them with this too. A relation
    the format does not know raises ValueError.
    """
    if fmt == "custom":
        return custom_relation_id(relation)
    if fmt == "metaqa":
        if relation not in METAQA_RELATIONS:
            raise _BadLine(f"unknown MetaQA relation {relation!r} (known: {', '.join(METAQA_RELATIONS)})")
        return METAQA_RELATIONS[relation]
    if fmt == "pathquestion":
        if relation.startswith("__"):
            relation = relation[2:].replace("__", ".")
        elif relation in PATHQUESTION_RELATIONS:
            relation = PATHQUESTION_RELATIONS[relation]
        else:
            raise _BadLine(f"unknown PathQuestion relation {relation!r}: neither __domain__type__property "
                           f"nor one of {', '.join(PATHQUESTION_RELATIONS)}; a KB of your own with other "
                           f"relation names loads as kg=custom (format custom)")
    if not _RELATION.match(relation):
        raise _BadLine(f"relation {relation!r} is not a dotted Freebase id (domain.type.property); a KB with "
                       f"other relation names loads as kg=custom (format custom)")
    return relation


def custom_relation_id(relation: str) -> str:
    """A custom KB's relation as an id queries accept: kept as written when it is one
    (``plays_in_club``), else each run of other characters becomes ``_`` (``plays in`` ->
    ``plays_in``); a build that meets two relations with one id fails (``_NameLevel``)."""
    cleaned = ".".join(part for part in _CUSTOM_KEEP.sub("_", relation.strip()).split(".") if part)
    if not cleaned.strip("_."):
        raise _BadLine(f"relation {relation!r} has no letter or digit to name it by")
    return cleaned


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"@en'


class _NameLevel:
    """Writes N-Triples for name-level lines, naming each entity the first time it appears.

    Holds one entry per distinct name (not per triple): that is what lets it name each entity
    once and notice two names that hash to one id.
    """

    def __init__(self, fmt: str, out: BinaryIO, drop_inverse: str | None = None):
        self.fmt = fmt
        self.separator = _SEPARATORS[fmt]
        self.out = out
        self.drop_inverse = drop_inverse
        self.folded = 0  # inverse lines written as their forward edge (the store keeps one copy)
        self.ids: dict[str, str] = {}
        self.owners: dict[str, str] = {}
        self.relations: dict[str, str] = {}  # custom: relation id -> the source's name for it

    def _node(self, name: str) -> str:
        node = self.ids.get(name)
        if node is not None:
            return node
        fb_id = name_id(name)
        owner = self.owners.setdefault(fb_id, name)
        if owner != name:
            raise SourceError(f"names {owner!r} and {name!r} share the generated id {fb_id}; "
                              f"rename one of them in the source")
        node = f"<{NS}{fb_id}>"
        self.ids[name] = node
        if fb_id != name:
            self.out.write(f"{node} <{NAME}> {_literal(name)} .\n".encode("utf-8"))
        return node

    def add(self, line: bytes) -> None:
        try:
            text = line.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise _BadLine(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
        if not text.strip():
            return
        parts = text.split(self.separator)
        if len(parts) != 3 or not all(p.strip() for p in parts):
            shown = "<TAB>" if self.separator == "\t" else self.separator
            raise _BadLine(f"expected head{shown}relation{shown}tail, got {text[:120]!r}")
        head, relation, tail = parts
        if self.drop_inverse and relation.endswith(self.drop_inverse) and relation != self.drop_inverse:
            # ``t r_inverse h`` states ``h r t``: written as that, it merges with the forward line.
            head, relation, tail = tail, relation[: -len(self.drop_inverse)], head
            self.folded += 1
        fb_relation = relation_id(self.fmt, relation)
        # PathQuestion's two spellings of one property meet on purpose; a custom KB's must not.
        owner = self.relations.setdefault(fb_relation, relation) if self.fmt == "custom" else relation
        if owner != relation:
            raise SourceError(f"relations {owner!r} and {relation!r} both become the id {fb_relation}; "
                              f"rename one of them in the source")
        relation_iri = f"<{NS}{fb_relation}>"
        triple = f"{self._node(head)} {relation_iri} {self._node(tail)} .\n"
        self.out.write(triple.encode("utf-8"))


def _check_nt_line(line: bytes) -> None:
    """N-Triples is one triple per line, so a line can be judged alone; the parser's own
    recovery after an error may swallow the next good line, which skip_bad must not do."""
    try:
        for _ in ox.parse(input=line, format=ox.RdfFormat.N_TRIPLES):
            pass
    except SyntaxError as exc:
        raise _BadLine(exc.msg) from None


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as f:
        yield from enumerate(f, start=1)


@dataclass(frozen=True)
class Build:
    store: Path
    triples: int  # distinct triples in the store, names included
    skipped: int  # malformed lines dropped under skip_bad
    seconds: float  # of the build that made the store (an earlier one when reused)
    reused: bool  # an up-to-date store was already there
    first_skipped: str = ""  # "file:line: reason" of the first dropped line
    folded: int = 0  # inverse lines written as their forward edge (drop_inverse)


def fingerprint(sources: list[Path], fmt: str, skip_bad: bool, drop_inverse: str | None = None) -> str:
    """What a store depends on: the sources' bytes in order, the format, the conversion
    version, skip_bad (a store missing bad lines must not stand in for a strict build) and the
    inverse suffix folded (only when set, so stores built before it existed stay valid)."""
    folding = f"{drop_inverse}\0" if drop_inverse else ""
    h = hashlib.sha256(f"{CONVERSION}\0{fmt}\0{int(skip_bad)}\0{folding}".encode())
    for source in sources:
        h.update(f"{source.stat().st_size}\0".encode())
        with source.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _manifest(store_dir: Path) -> dict:
    try:
        return json.loads((store_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def _from_manifest(store_dir: Path, manifest: dict) -> Build:
    return Build(store_dir, manifest["triples"], manifest["skipped"], manifest["seconds"], True,
                 manifest.get("first_skipped", ""), manifest.get("folded", 0))


def check_sources(sources: list[Path], fmt: str, skip_bad: bool = False, drop_inverse: str | None = None) -> None:
    """Fail on inputs no build can use, naming them, before any file is read."""
    if fmt not in FORMATS:
        raise SourceError(f"unknown KG format {fmt!r}; use one of {', '.join(FORMATS)}")
    if not sources:
        raise SourceError("no KG source files given")
    if skip_bad and fmt == "ttl":
        raise SourceError("skip_bad needs a line-based format (nt, tsv, metaqa, pathquestion, custom); "
                          "Turtle statements may span lines")
    if drop_inverse and fmt not in NAME_LEVEL_FORMATS:
        raise SourceError(f"kg.drop_inverse needs a name-level format ({', '.join(NAME_LEVEL_FORMATS)}), "
                          f"not {fmt}")
    for source in sources:
        if not Path(source).is_file():
            raise FileNotFoundError(f"KG source file not found: {source}")


def build(sources: list[Path], fmt: str, store_dir: Path, skip_bad: bool = False,
          drop_inverse: str | None = None) -> Build:
    """Load ``sources`` into ``store_dir`` unless a store of the same inputs is already there."""
    sources = [Path(s) for s in sources]
    check_sources(sources, fmt, skip_bad, drop_inverse)
    digest = fingerprint(sources, fmt, skip_bad, drop_inverse)
    manifest = _manifest(store_dir)
    if manifest.get("fingerprint") == digest:
        return _from_manifest(store_dir, manifest)

    start = time.perf_counter()
    store_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{store_dir.name}.", dir=store_dir.parent))
    try:
        triples, skipped, first_skipped, folded = _load(sources, fmt, work / "store", skip_bad, drop_inverse)
        seconds = round(time.perf_counter() - start, 3)
        manifest = dict(fingerprint=digest, format=fmt, sources=[str(s) for s in sources], triples=triples,
                        skipped=skipped, first_skipped=first_skipped, seconds=seconds, folded=folded)
        (work / "store" / MANIFEST).write_text(json.dumps(manifest, indent=1))
        if not _install(work / "store", store_dir, digest):
            return _from_manifest(store_dir, _manifest(store_dir))
        return Build(store_dir, triples, skipped, seconds, False, first_skipped, folded)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _load(sources: list[Path], fmt: str, store_dir: Path, skip_bad: bool,
          drop_inverse: str | None) -> tuple[int, int, str, int]:
    """Bulk-load a new store; returns (triples, skipped lines, first skipped, folded inverse
    lines). Name-level and filtered N-Triples go through a converted file next to the store
    first, so that every line is judged before anything is loaded."""
    store = ox.Store(str(store_dir))
    if fmt in RDF_FORMATS and not (fmt == "nt" and skip_bad):
        for source in sources:
            try:
                store.bulk_load(path=str(source), format=RDF_FORMATS[fmt])
            except SyntaxError as exc:
                raise SourceError(f"{source}:{exc.lineno}: {exc.msg}") from None
        store.flush()
        return len(store), 0, "", 0
    converted = store_dir.parent / "triples.nt"
    skipped, first_skipped = 0, ""
    with converted.open("wb") as out:
        writer = _NameLevel(fmt, out, drop_inverse) if fmt in NAME_LEVEL_FORMATS else None
        for source in sources:
            for lineno, line in _lines(source):
                try:
                    if writer is None:
                        _check_nt_line(line)
                        out.write(line if line.endswith(b"\n") else line + b"\n")
                    else:
                        writer.add(line)
                except _BadLine as exc:
                    if not skip_bad:
                        raise SourceError(f"{source}:{lineno}: {exc}") from None
                    skipped += 1
                    first_skipped = first_skipped or f"{source}:{lineno}: {exc}"
    store.bulk_load(path=str(converted), format=ox.RdfFormat.N_TRIPLES)
    store.flush()
    return len(store), skipped, first_skipped, writer.folded if writer else 0


def _install(built: Path, store_dir: Path, digest: str) -> bool:
    """Move the finished store into place; False when a store of the same inputs got there
    first. Parallel runs may build one store at once: the later one keeps the earlier one's
    store rather than deleting a store that may already be in use."""
    if _manifest(store_dir).get("fingerprint") == digest:
        return False
    if store_dir.exists():
        shutil.rmtree(store_dir)
    try:
        built.rename(store_dir)
    except OSError:
        if _manifest(store_dir).get("fingerprint") != digest:
            raise
        return False
    return True


def build_store(sources: list[Path], fmt: str, store_dir: Path, skip_bad: bool = False,
                drop_inverse: str | None = None) -> Path:
    """``build`` for callers that only need the store's directory (``open_kg``)."""
    return build(sources, fmt, store_dir, skip_bad, drop_inverse).store
