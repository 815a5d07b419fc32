"""Name-level triple files (MetaQA's ``kb.txt``, PathQuestion's KBs, the replay TSVs, a custom KB)
turned into Freebase-shaped N-Triples: the ids relations get (names get theirs from
:func:`kgx.core.sources.name_id`), and the converter that writes them (``kgx.kg.pipelines`` loads its
output). See ``kgx.kg.pipelines`` for the shape and why."""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO

from kgx.core.sources import MID, SourceError, name_id
from kgx.kg.freebase import NAME, NS

NAME_LEVEL_FORMATS = ("tsv", "metaqa", "pathquestion", "custom")
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

# At least one dot: a bare word is a relation from some other scheme (PQ's "parents"), loaded
# with the wrong --format.
_RELATION = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+$")
_SEPARATORS = {"tsv": "\t", "metaqa": "|", "pathquestion": "\t", "custom": "\t"}


class BadLine(ValueError):
    """One malformed line: fatal, or skipped and counted under ``skip_bad``."""


def names_a_mid(path: Path, fmt: str) -> bool:
    """Whether a name-level source names an entity by a Freebase mid: the only entity a KG built
    from it leaves without a name (as Freebase leaves a CVT), see ``NameLevel``."""
    separator = _SEPARATORS[fmt]
    with path.open(encoding="utf-8", errors="replace") as source:
        for line in source:
            parts = line.rstrip("\r\n").split(separator)
            if len(parts) == 3 and (MID.match(parts[0]) or MID.match(parts[2])):
                return True
    return False


def relation_id(fmt: str, relation: str) -> str:
    """The dotted relation id that a relation of a name-level source becomes.

    Datasets whose gold paths name relations (PathQuestion) map them with this too. A relation
    the format does not know raises ValueError.
    """
    if fmt == "custom":
        return custom_relation_id(relation)
    if fmt == "metaqa":
        if relation not in METAQA_RELATIONS:
            raise BadLine(f"unknown MetaQA relation {relation!r} (known: {', '.join(METAQA_RELATIONS)})")
        return METAQA_RELATIONS[relation]
    if fmt == "pathquestion":
        if relation.startswith("__"):
            relation = relation[2:].replace("__", ".")
        elif relation in PATHQUESTION_RELATIONS:
            relation = PATHQUESTION_RELATIONS[relation]
        else:
            raise BadLine(
                f"unknown PathQuestion relation {relation!r}: neither __domain__type__property "
                f"nor one of {', '.join(PATHQUESTION_RELATIONS)}; a KB of your own with other "
                f"relation names loads as kg=custom (format custom)"
            )
    if not _RELATION.match(relation):
        raise BadLine(
            f"relation {relation!r} is not a dotted Freebase id (domain.type.property); a KB with "
            f"other relation names loads as kg=custom (format custom)"
        )
    return relation


def custom_relation_id(relation: str) -> str:
    """A custom KB's relation as an id queries accept: kept as written when it is one
    (``plays_in_club``), else each run of other characters becomes ``_`` (``plays in`` ->
    ``plays_in``); a build that meets two relations with one id fails (``NameLevel``)."""
    cleaned = ".".join(part for part in _CUSTOM_KEEP.sub("_", relation.strip()).split(".") if part)
    if not cleaned.strip("_."):
        raise BadLine(f"relation {relation!r} has no letter or digit to name it by")
    return cleaned


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"@en'


class NameLevel:
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
            raise SourceError(
                f"names {owner!r} and {name!r} share the generated id {fb_id}; rename one of them in the source"
            )
        node = f"<{NS}{fb_id}>"
        self.ids[name] = node
        if fb_id != name:
            self.out.write(f"{node} <{NAME}> {_literal(name)} .\n".encode("utf-8"))
        return node

    def add(self, line: bytes) -> None:
        try:
            text = line.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise BadLine(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
        if not text.strip():
            return
        parts = text.split(self.separator)
        if len(parts) != 3 or not all(p.strip() for p in parts):
            shown = "<TAB>" if self.separator == "\t" else self.separator
            raise BadLine(f"expected head{shown}relation{shown}tail, got {text[:120]!r}")
        head, relation, tail = parts
        if self.drop_inverse and relation.endswith(self.drop_inverse) and relation != self.drop_inverse:
            # ``t r_inverse h`` states ``h r t``: written as that, it merges with the forward line.
            head, relation, tail = tail, relation[: -len(self.drop_inverse)], head
            self.folded += 1
        fb_relation = relation_id(self.fmt, relation)
        # PathQuestion's two spellings of one property meet on purpose; a custom KB's must not.
        owner = self.relations.setdefault(fb_relation, relation) if self.fmt == "custom" else relation
        if owner != relation:
            raise SourceError(
                f"relations {owner!r} and {relation!r} both become the id {fb_relation}; "
                f"rename one of them in the source"
            )
        relation_iri = f"<{NS}{fb_relation}>"
        triple = f"{self._node(head)} {relation_iri} {self._node(tail)} .\n"
        self.out.write(triple.encode("utf-8"))
