"""The response cache on damaged files: real damage written into real sqlite files, found at open
or by a read or write mid-run, never raised to the caller, the file kept beside a fresh one."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kgx.llm.cache import CacheDamaged, ResponseCache

N = 300
PAGE = 4096  # sqlite's default page size


def response(i: int) -> dict:
    return {"text": f"answer {i} " + "x" * 400, "input_tokens": i, "output_tokens": 1}


def earlier_run(path: Path, n: int = N) -> None:
    """A cache as a finished run leaves it: ``n`` responses, written by another process."""
    script = (
        "import sys; from pathlib import Path; from kgx.llm.cache import ResponseCache\n"
        "c = ResponseCache(Path(sys.argv[1]))\n"
        "for i in range(int(sys.argv[2])):\n"
        "    c.put(f'k{i}', {'text': f'answer {i} ' + 'x' * 400, 'input_tokens': i, 'output_tokens': 1})\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path), str(n)], check=True)


def zero_middle_pages(path: Path, pages: int = 3) -> bytes:
    """Overwrite whole pages in the middle of the file with zeros, as a bad sector would; the
    damaged bytes."""
    data = bytearray(path.read_bytes())
    start = len(data) // 2 // PAGE * PAGE
    data[start : start + pages * PAGE] = bytes(pages * PAGE)
    path.write_bytes(bytes(data))
    return bytes(data)


def damaged_copies(path: Path) -> list[Path]:
    """The damaged databases set aside beside ``path`` (their -wal and -shm left out)."""
    return sorted(p for p in path.parent.glob(f"{path.name}.damaged-*") if not p.name.endswith(("-wal", "-shm")))


def only_warning(record: pytest.WarningsRecorder) -> str:
    messages = [str(w.message) for w in record if issubclass(w.category, CacheDamaged)]
    assert len(messages) == 1, messages
    return messages[0]


# ----------------------------------------------------------------------------- damage found at open


@pytest.mark.parametrize(
    "content", [random.Random(0).randbytes(3 * PAGE), bytes(3 * PAGE)], ids=["random bytes", "zeros"]
)
def test_a_file_that_is_not_a_database_is_set_aside_and_a_fresh_cache_starts(tmp_path, content):
    path = tmp_path / "llm.sqlite"
    path.write_bytes(content)
    Path(f"{path}-wal").write_bytes(b"left by the damaged file")
    with pytest.warns(CacheDamaged) as record:
        cache = ResponseCache(path)
    [kept] = damaged_copies(path)
    assert kept.read_bytes() == content and Path(f"{kept}-wal").read_bytes() == b"left by the damaged file"
    assert only_warning(record) == (
        f"LLM response cache {path} is damaged (file is not a database): set aside as {kept}; started a fresh cache"
    )
    assert cache.get("k0") is None
    cache.put("k0", response(0))
    assert cache.get("k0") == response(0)
    assert ResponseCache(path).get("k0") == response(0)  # the fresh file, as another process sees it


def test_a_healthy_cache_opens_without_a_warning(tmp_path, recwarn):
    path = tmp_path / "llm.sqlite"
    earlier_run(path, 5)
    assert ResponseCache(path).get("k4") == response(4)
    assert not damaged_copies(path) and not [w for w in recwarn if issubclass(w.category, CacheDamaged)]


# ----------------------------------------------------------------------------- damage found mid-run


def test_damage_found_by_a_read_is_a_miss_and_the_file_is_not_used_again(tmp_path, recwarn):
    path = tmp_path / "llm.sqlite"
    earlier_run(path)
    damaged = zero_middle_pages(path)
    cache = ResponseCache(path)  # the header and schema are intact: nothing shows at open
    assert not recwarn.list
    got = [cache.get(f"k{i}") for i in range(N)]
    hits = [i for i, value in enumerate(got) if value is not None]
    assert 0 < len(hits) < N and all(got[i] == response(i) for i in hits)  # never a wrong response
    [kept] = damaged_copies(path)
    assert only_warning(recwarn) == (
        f"LLM response cache {path} is damaged (database disk image is "
        f"malformed): set aside as {kept}; this process no longer uses the "
        "cache; the provider answers instead"
    )
    assert kept.read_bytes() == damaged and not path.exists()
    assert cache.get(f"k{hits[0]}") is None  # out of use, though this entry was readable
    cache.put("new", response(1))
    assert cache.get("new") is None and not path.exists()
    assert len(recwarn.list) == 1
    fresh = ResponseCache(path)  # the next run starts a fresh cache, without a warning
    assert fresh.get("k0") is None and len(recwarn.list) == 1


def test_damage_found_by_a_write_skips_the_write(tmp_path, recwarn):
    path = tmp_path / "llm.sqlite"
    earlier_run(path)
    zero_middle_pages(path)
    cache = ResponseCache(path)
    for i in range(N):  # replacing an entry visits its pages
        cache.put(f"k{i}", response(i + 1))
    assert "database disk image is malformed" in only_warning(recwarn)
    assert len(damaged_copies(path)) == 1 and not path.exists()
    assert cache.get("k0") is None


def test_a_stored_value_that_is_not_json_is_a_miss(tmp_path, recwarn):
    path = tmp_path / "llm.sqlite"
    earlier_run(path, 4)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE responses SET value='{\"text\": \"cut sh' WHERE key='k0'")
        db.execute("UPDATE responses SET value=CAST(x'ff00fe' AS TEXT) WHERE key='k1'")
        db.execute("UPDATE responses SET value='[1, 2]' WHERE key='k2'")
    db.close()
    cache = ResponseCache(path)
    assert [cache.get(f"k{i}") for i in range(4)] == [None, None, None, response(3)]
    cache.put("k0", response(0))
    assert cache.get("k0") == response(0)
    assert not recwarn.list and not damaged_copies(path)


def test_threads_share_the_cache_and_damage_closes_every_threads_connection(tmp_path, recwarn):
    path = tmp_path / "llm.sqlite"
    earlier_run(path)
    cache = ResponseCache(path)
    workers = 8
    opened = threading.Barrier(workers + 1)
    damaged = threading.Event()
    errors: list[BaseException] = []
    hits = [0] * workers

    def work(n: int) -> None:
        try:
            assert cache.get(f"k{n}") == response(n)  # each thread has its connection open
            opened.wait()
            damaged.wait()
            for i in range(n, N, workers):
                hits[n] += cache.get(f"k{i}") is not None
                cache.put(f"t{n}-{i}", response(i))
        except BaseException as exc:  # noqa: BLE001 - reported below, with the thread's failure
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(workers)]
    for thread in threads:
        thread.start()
    opened.wait()
    zero_middle_pages(path)
    damaged.set()
    for thread in threads:
        thread.join()
    assert not errors and sum(hits) < N
    assert "database disk image is malformed" in only_warning(recwarn)
    assert len(damaged_copies(path)) == 1 and not path.exists()  # no connection recreated the file
