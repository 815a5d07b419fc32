"""Persistent response cache shared by threads and by parallel processes (sqlite, WAL).

The key covers everything that changes a response (model, endpoint, messages, temperature,
schema, seed, sample index, token limit), so a rerun is free and self-consistency samples stay
distinct samples.

The cache only saves calls, so a damaged file (a disk fault, a copy cut short) must not fail
questions. Damage is sqlite's "file is not a database" or "database disk image is malformed";
the file, with its -wal and -shm, is then set aside as ``<name>.damaged-<timestamp>`` (kept for
inspection, never deleted) with one warning. Found at open, a fresh cache takes its place; found
by a read or write in the middle of a run, the process stops using the cache and the provider
answers instead. Other sqlite errors (a lock held too long, a full disk) are raised as before.

``run.cache_url=redis://...`` puts the same keys and JSON values on a Redis server instead, for
sweeps spread over machines (kgx.llm.cache_redis); :func:`open_cache` is the one place that
chooses.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Protocol

if TYPE_CHECKING:
    from kgx.core.config import RunConfig

DAMAGE = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}  # primary result codes of a damaged file


class CacheDamaged(RuntimeWarning):
    """The response cache file was damaged and has been set aside."""


class Cache(Protocol):
    """What the LLM client needs of a response cache, whichever backend holds it."""

    def get(self, key: str) -> Optional[dict[str, Any]]: ...

    def put(self, key: str, value: dict[str, Any]) -> None: ...


def open_cache(run: RunConfig) -> Cache:
    """The run's response cache: the sqlite file under ``run.cache_dir``, or the Redis server of
    ``run.cache_url``, pinged here so that an unreachable one stops the run before any question."""
    if not run.cache_url:
        return ResponseCache(Path(run.cache_dir) / "llm.sqlite")
    from kgx.llm.cache_redis import RedisCache

    return RedisCache(run.cache_url)


def cache_key(**parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """One sqlite file; a connection per thread, statements one at a time across threads.

    Serialising the (millisecond) statements costs nothing beside the calls they save, and lets
    the thread that finds damage close every thread's connection before a fresh file takes the
    name: a connection closing later would delete the fresh file's -wal and -shm (by name).
    """

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._usable = True  # false after damage mid-run (or a file that could not be moved): all miss
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            if not _is_damage(exc):
                raise
            self._set_aside(exc, at_open=True)
            if self._usable:
                self._open()

    def _open(self) -> None:
        """Connect, and run the first statements, which read the file's header and schema."""
        self._local = threading.local()
        db = self._connect()
        self._identity = _identity(self.path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # Any thread may close it (see the class docstring); values come back as bytes so
            # that a damaged value is a JSON error (a miss), not an error of the sqlite3 module.
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            conn.text_factory = bytes
            conn.execute("PRAGMA busy_timeout=60000")
            self._local.conn = conn
            self._connections.append(conn)
        return conn

    def get(self, key: str) -> Optional[dict[str, Any]]:
        """The stored response; None when there is none, it is not a JSON object, or the cache
        is out of use."""
        with self._lock:
            if not self._usable:
                return None
            try:
                row = self._connect().execute("SELECT value FROM responses WHERE key=?", (key,)).fetchone()
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc):
                    raise
                self._set_aside(exc, at_open=False)
                return None
        try:
            value = json.loads(row[0]) if row else None
        except (ValueError, TypeError):  # garbled bytes, or a value that is not text
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store a response; skipped once the cache is out of use."""
        text = json.dumps(value)
        with self._lock:
            if not self._usable:
                return
            try:
                self._connect().execute("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, text))
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc):
                    raise
                self._set_aside(exc, at_open=False)

    def _set_aside(self, exc: sqlite3.DatabaseError, at_open: bool) -> None:
        """Move the damaged file and its -wal/-shm aside, close every connection, warn once.

        Moved first, so that closing (which checkpoints and deletes the -wal by name) leaves the
        files as the damage found them. A file that is no longer the one opened was set aside by
        another process and is left alone. The cache stays in use only at open, when the path
        is free for a fresh file; the warning points at the caller's line (stacklevel 3).
        """
        self._usable = at_open
        if _identity(self.path) != self._identity:
            moved = "already set aside by another process"
        else:
            try:
                moved = f"set aside as {self._move_aside()}"
            except OSError as err:
                moved, self._usable = f"could not be set aside ({err})", False
        for conn in self._connections:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._connections.clear()
        then = (
            "started a fresh cache"
            if self._usable
            else "this process no longer uses the cache; the provider answers instead"
        )
        warnings.warn(f"LLM response cache {self.path} is damaged ({exc}): {moved}; {then}", CacheDamaged, stacklevel=3)

    def _move_aside(self) -> Path:
        """Rename the file, then its -wal and -shm, to a ``.damaged-<timestamp>`` name no file has."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        count = 1
        while target.exists():
            count += 1
            target = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{count}")
        for suffix in ("", "-wal", "-shm"):  # sqlite finds a file's journal by name: keep the pairs
            source = Path(f"{self.path}{suffix}")
            if suffix == "" or source.exists():
                source.rename(f"{target}{suffix}")
        return target


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in DAMAGE


def _identity(path: Path) -> Optional[tuple[int, int]]:
    """(device, inode) of the file at ``path``: which file it is, whatever its name."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino
