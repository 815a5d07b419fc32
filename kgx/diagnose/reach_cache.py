"""Reachability results kept per KG, so that a sweep over methods and depths searches each
question once: a sqlite file per KG under ``<cache_dir>/reach/``, in WAL mode so that the
worker threads of a run and the jobs of a sweep in other processes share it safely."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Optional

VERSION = "kgx-reach/2"  # part of every key: a change to the search must not reuse older results


class ReachCache:
    """JSON results by key; one connection behind a lock (sqlite waits up to 30 s for another process)."""

    def __init__(self, cache_dir: Path, kg_key: str):
        self.path = Path(cache_dir) / "reach" / f"{hashlib.sha256(kg_key.encode()).hexdigest()}.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS reach (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    @staticmethod
    def digest(key: Any) -> str:
        return hashlib.sha256(json.dumps([VERSION, key], sort_keys=True).encode()).hexdigest()

    def get(self, key: Any) -> Optional[dict[str, Any]]:
        with self._lock:
            row = self._db.execute("SELECT value FROM reach WHERE key = ?", (self.digest(key),)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: Any, value: dict[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO reach (key, value) VALUES (?, ?)", (self.digest(key), json.dumps(value))
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
