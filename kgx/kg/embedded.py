"""The KG in-process: a pyoxigraph store in a directory, bulk-loaded once, then opened read-only
so that any number of threads and worker processes can query it at once."""
from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

import pyoxigraph as ox

from kgx.kg.freebase import NAME, NS, Direction, iri

FORMATS = {".nt": ox.RdfFormat.N_TRIPLES, ".ttl": ox.RdfFormat.TURTLE}


def _fingerprint(source: Path) -> str:
    return hashlib.sha256(source.read_bytes()).hexdigest()


def build_store(source: Path, store_dir: Path) -> Path:
    """Load ``source`` into ``store_dir`` unless a store of the same file is already there.

    The load goes to a sibling temp directory that is renamed into place, so a crashed or
    concurrent build never leaves a half-loaded store behind.
    """
    if not source.is_file():
        raise FileNotFoundError(f"KG source file not found: {source} (kg.source)")
    if source.suffix not in FORMATS:
        raise ValueError(f"kg.source={source}: unsupported format; use one of {sorted(FORMATS)}")
    stamp = store_dir / "kgx-source.sha256"
    digest = _fingerprint(source)
    if stamp.is_file() and stamp.read_text() == digest:
        return store_dir
    store_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=store_dir.name + ".", dir=store_dir.parent))
    store = ox.Store(str(tmp))
    store.bulk_load(path=str(source), format=FORMATS[source.suffix])
    store.flush()
    del store
    (tmp / stamp.name).write_text(digest)
    if store_dir.exists():
        shutil.rmtree(store_dir)
    tmp.rename(store_dir)
    return store_dir


def _local(term: ox.NamedNode | ox.Literal | ox.BlankNode) -> str:
    if isinstance(term, ox.NamedNode) and term.value.startswith(NS):
        return term.value[len(NS):]
    return term.value


class EmbeddedKG:
    def __init__(self, store_dir: Path):
        self.store = ox.Store.read_only(str(store_dir))

    def _column(self, query: str) -> list[str]:
        return [_local(row[0]) for row in self.store.query(query)]

    def relations(self, entity: str, direction: Direction) -> list[str]:
        pattern = f"{iri(entity)} ?r ?x" if direction == "out" else f"?x ?r {iri(entity)}"
        return self._column(f"SELECT DISTINCT ?r WHERE {{ {pattern} }} ORDER BY ?r")

    def neighbors(self, entity: str, relation: str, direction: Direction) -> list[str]:
        e, r = iri(entity), iri(relation)
        pattern = f"{e} {r} ?x" if direction == "out" else f"?x {r} {e}"
        return self._column(f"SELECT DISTINCT ?x WHERE {{ {pattern} }} ORDER BY ?x")

    def names(self, ids: list[str]) -> dict[str, str]:
        """English names, else any name; ids without one are left out."""
        found: dict[str, str] = {}
        for fb_id in ids:
            rows = self.store.query(
                f"SELECT ?n WHERE {{ {iri(fb_id)} <{NAME}> ?n }} "
                f"ORDER BY DESC(LANGMATCHES(LANG(?n), 'en')) LIMIT 1"
            )
            for row in rows:
                found[fb_id] = row[0].value
        return found

    def __len__(self) -> int:
        return len(self.store)
