"""What KGs and datasets are read from, as both see it: the ids a name-level source gives its
entities, and the error of a source that cannot be read.

Both floors above need them alike: a dataset names its topic entities by the id the KG built from
the same files gives them (MetaQA, PathQuestion, RoG), without the KG at hand, and a KG source or
a dataset file that cannot be read fails with the same one-line error.
"""

from __future__ import annotations

import base64
import hashlib
import re

MID = re.compile(r"^[mg]\.[0-9a-z_]+$")  # a Freebase mid (or a g. id): kept as it is


class SourceError(ValueError):
    """A KG source or a RoG file that cannot be loaded as asked; the message names the file (and line)."""


def name_id(name: str) -> str:
    """The Freebase-style id of an entity known by ``name`` in a name-level KG.

    ``m.kgx`` + 16 base32 characters (80 bits) of the SHA-1 of the UTF-8 name: the same name
    gives the same id on every machine and run, so a dataset maps a topic entity's name to the
    KG without the KG at hand. Real mids start ``m.0``, so generated ids never meet them; a
    name that is itself a mid is returned unchanged. Two names sharing an id would merge two
    entities, so a build that meets one fails (:class:`kgx.kg.name_level.NameLevel`) instead of
    renaming either: renaming would break the name -> id promise. At 80 bits a shared id becomes
    likely only around 10^12 distinct names.
    """
    if MID.match(name):
        return name
    digest = base64.b32encode(hashlib.sha1(name.encode("utf-8")).digest()).decode("ascii")
    return "m.kgx" + digest[:16].lower()
