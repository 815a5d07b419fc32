"""``predictions.jsonl``: the run's memory, one line per finished question, flushed as it is logged.

Append-only: a rerun appends the questions it computes again, and the last line of an id is the
one that counts, so nothing a run paid for is ever overwritten. Reading it back survives what a
crash or a full disk leaves behind: a torn last line is cut off, and a damaged line (NUL bytes,
not JSON, no id) is moved to a side file, named in one warning, and its question computed again.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Optional

from kgx.results.record import Record, RecordError


@dataclass
class LogContents:
    """What a log holds: the last record of each id, and every earlier line (superseded)."""

    latest: dict[str, Record] = field(default_factory=dict)
    superseded: list[Record] = field(default_factory=list)


def encode_line(record: dict[str, Any]) -> str:
    """One JSON line. Text that UTF-8 cannot hold (a lone surrogate from a JSON escape) is
    written escaped, so that a finished question is never lost to an encoding error."""
    line = json.dumps(record, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True)
    return line + "\n"


class PredictionLog:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._out: Optional[IO[str]] = None  # open while a loop appends: one open per run, not per line

    def read(self) -> LogContents:
        self.close()
        contents = LogContents()
        if not self.path.exists():
            return contents
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):  # the process was killed mid-write
            data = data[: data.rfind(b"\n") + 1]
            self.path.write_bytes(data)
        damaged: list[tuple[int, bytes, str]] = []
        for lineno, raw in enumerate(data.splitlines(), 1):
            record, problem = _parse(raw)
            if record is None:
                if raw.strip():
                    damaged.append((lineno, raw, problem))
                continue
            earlier = contents.latest.pop(record.id, None)
            if earlier is not None:
                contents.superseded.append(earlier)
            contents.latest[record.id] = record
        if damaged:
            self._set_aside_lines(data, damaged)
        return contents

    def _set_aside_lines(self, data: bytes, damaged: list[tuple[int, bytes, str]]) -> None:
        """Keep the damaged lines beside the log, rewrite the log without them, say so once."""
        side = self.path.with_name(f"predictions.damaged-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
        with side.open("ab") as fh:
            for _, raw, _ in damaged:
                fh.write(raw + b"\n")
        bad = {lineno for lineno, _, _ in damaged}
        kept = b"".join(raw + b"\n" for lineno, raw in enumerate(data.splitlines(), 1) if lineno not in bad)
        tmp = self.path.with_suffix(".jsonl.tmp")
        tmp.write_bytes(kept)
        tmp.replace(self.path)
        where = ", ".join(f"{self.path}:{lineno} ({problem})" for lineno, _, problem in damaged[:5])
        more = f" and {len(damaged) - 5} more" if len(damaged) > 5 else ""
        print(
            f"kgx: warning: damaged lines in the prediction log: {where}{more}; moved to {side}; "
            f"their questions are answered again",
            file=sys.stderr,
        )

    def set_aside(self) -> Optional[Path]:
        """Move an earlier log out of the way (``run.force``) without deleting it."""
        self.close()
        if not self.path.exists():
            return None
        kept = self.path.with_name(f"predictions.{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
        self.path.rename(kept)
        return kept

    def extend(self, records: list[Record]) -> None:
        """Write the records' lines and flush them to the OS, so a killed process keeps them."""
        lines = "".join(encode_line(record.to_dict()) for record in records)
        with self._lock:
            if self._out is None:
                self._out = self.path.open("a", encoding="utf-8")
            self._out.write(lines)
            self._out.flush()

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None


def _parse(raw: bytes) -> tuple[Optional[Record], str]:
    if b"\x00" in raw:
        return None, "NUL bytes"
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc.msg}"
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        return None, "not a prediction record"
    try:
        return Record.from_dict(record), ""
    except RecordError as exc:
        return None, str(exc)
