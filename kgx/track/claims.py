"""One config computes once at a time, across folders, processes and machines sharing a tracking store.

A folder's lock (kgx.core.locks) keeps two invocations of one config in one folder apart; two
folders, or two machines, need the store itself. A run's MLflow run is its claim on its config:
RUNNING, tagged with the config hash, its owner (host, pid and the process's start, ``kgx.owner``)
and a ticket. Tickets follow Lamport's bakery, which needs no shared clock and no atomic
operation beyond a write that later reads see (sqlite and a tracking server both give that):

1. the run exists without a ticket (it is *choosing*);
2. its ticket is one more than the largest ticket it sees on the config's other RUNNING runs;
3. it computes once no other live claim is choosing and none holds a smaller (ticket, run id).

The others wait for that run to end, then decide again: a FINISHED run makes them a skip, an
unfinished one leaves its answers in its folder (kgx.track.same_config says where to resume them).
Nothing is billed while waiting.

A claim whose process is gone does not block: on its own machine the process is looked up; from
another machine, its heartbeat (``kgx.heartbeat``, written every HEARTBEAT_S by a thread of the
run) goes stale after STALE_S. Any RUNNING run whose owner is gone (a ``kill -9``, a machine lost)
is marked KILLED by the next command that finds it (:func:`reap`), so a killed run does not stay
RUNNING in MLflow.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

OWNER_TAG = "kgx.owner"  # "<host> <pid> <process start>": who holds the run
TICKET_TAG = "kgx.ticket"  # the claim's place in line (the bakery's number)
HEARTBEAT_TAG = "kgx.heartbeat"  # seconds since the epoch, renewed while the owner lives
HEARTBEAT_S = 30.0
STALE_S = 4 * HEARTBEAT_S  # a heartbeat this old (from another machine) means its owner is gone
POLL_S = 1.0  # how often a waiting run looks again
CHOOSING_POLL_S = 0.05  # how often it looks at a claim still choosing its ticket (a few writes away)


def _process_start(pid: int) -> str:
    """The process's start in clock ticks since boot (Linux), so a reused pid is not mistaken for
    the owner; "" where /proc does not say."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def owner_tag() -> str:
    """This process as an owner: ``<host> <pid> <start>``."""
    return f"{socket.gethostname()} {os.getpid()} {_process_start(os.getpid())}"


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    start: str

    @classmethod
    def parse(cls, tag: str) -> Optional["Owner"]:
        host, pid, start = (tag.split(" ") + ["", "", ""])[:3]
        return cls(host, int(pid), start) if pid.isdigit() else None

    def alive(self, heartbeat: Optional[float], now: float) -> bool:
        """Whether the owner still runs: looked up on this machine, judged by its heartbeat elsewhere."""
        if self.host != socket.gethostname():
            return heartbeat is not None and now - heartbeat < STALE_S
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process: it exists
            pass
        return not self.start or _process_start(self.pid) in ("", self.start)

    def __str__(self) -> str:
        return f"pid {self.pid} on {self.host}"


def owner_of(run: Any) -> Optional[Owner]:
    tag = run.data.tags.get(OWNER_TAG)
    return Owner.parse(tag) if tag else None


def gone(run: Any, now: Optional[float] = None) -> bool:
    """Whether a RUNNING run's owner is gone (a run without an owner tag is never judged)."""
    owner = owner_of(run)
    if owner is None:
        return False
    beat = run.data.tags.get(HEARTBEAT_TAG)
    return not owner.alive(float(beat) if beat else None, time.time() if now is None else now)


def mark_killed(client: Any, run: Any) -> None:
    """End a run whose owner is gone: KILLED, its figures partial, and who found it."""
    client.set_tag(run.info.run_id, "result", "partial")
    client.set_tag(run.info.run_id, "killed_found_by", owner_tag())
    client.set_terminated(run.info.run_id, status="KILLED")
    print(
        f"kgx: mlflow run {run.info.run_id} ({run.info.run_name}) was left RUNNING by {owner_of(run)}, "
        f"which is gone: marked KILLED",
        file=sys.stderr,
    )


def reap(tracker: Any) -> int:
    """Mark KILLED every RUNNING run of the experiment whose owner is gone; returns how many."""
    running = tracker.client.search_runs(
        [tracker.experiment_id], filter_string="attributes.status = 'RUNNING'", max_results=1000
    )
    now, found = time.time(), 0
    for run in running:
        if run.info.run_id != tracker.run_id and gone(run, now):
            mark_killed(tracker.client, run)
            found += 1
    return found


def _claims(tracker: Any, config_hash: str) -> list[Any]:
    """The live RUNNING runs of the config other than this one (dead ones are marked KILLED)."""
    runs = tracker.client.search_runs(
        [e.experiment_id for e in tracker.client.search_experiments()],
        filter_string=f"tags.config_hash = '{config_hash}' and attributes.status = 'RUNNING'",
        max_results=1000,
    )
    live = []
    for run in runs:
        if run.info.run_id == tracker.run_id or owner_of(run) is None:
            continue
        if gone(run):
            mark_killed(tracker.client, run)
        else:
            live.append(run)
    return live


def _ticket(run: Any) -> Optional[int]:
    value = run.data.tags.get(TICKET_TAG, "")
    return int(value) if value.isdigit() else None


def take_ticket(tracker: Any, config_hash: str) -> None:
    """Step 2 of the bakery: one more than the largest ticket of the config's live claims."""
    tickets = [t for run in _claims(tracker, config_hash) if (t := _ticket(run)) is not None]
    tracker.client.set_tag(tracker.run_id, TICKET_TAG, str(1 + max(tickets, default=0)))


def ahead(tracker: Any, config_hash: str) -> Optional[Any]:
    """Step 3: the live claim this run must wait for, or None when this run computes. A claim
    still choosing its ticket is waited for here: it is a few writes from having one."""
    mine = (_ticket(tracker.client.get_run(tracker.run_id)) or 0, tracker.run_id)
    while True:
        others = _claims(tracker, config_hash)
        if any(_ticket(run) is None for run in others):
            time.sleep(CHOOSING_POLL_S)
            continue
        first = min(others, key=lambda run: (_ticket(run), run.info.run_id), default=None)
        return first if first is not None and (_ticket(first), first.info.run_id) < mine else None


def wait_for(tracker: Any, run: Any) -> None:
    """Wait, saying so once, until ``run`` is no longer RUNNING (or its owner is gone)."""
    tags = run.data.tags
    since = time.strftime("%H:%M:%S", time.localtime(run.info.start_time / 1000))
    print(
        f"kgx: this config (hash {tags.get('config_hash')}) is being computed by mlflow run {run.info.run_id} "
        f"in {tags.get('output_dir', '?')} ({owner_of(run)}, since {since}); waiting for it to end, nothing "
        f"billed meanwhile (Ctrl-C stops waiting)",
        file=sys.stderr,
    )
    while True:
        time.sleep(POLL_S)
        now = tracker.client.get_run(run.info.run_id)
        if now.info.status != "RUNNING":
            return
        if gone(now):
            mark_killed(tracker.client, now)
            return


@contextlib.contextmanager
def heartbeat(client: Any, run_id: str) -> Iterator[None]:
    """Renew ``kgx.heartbeat`` on ``run_id`` every HEARTBEAT_S while the block runs, so another
    machine can tell this run lives. A write that fails is tried again at the next beat."""
    stop = threading.Event()

    def beat() -> None:
        while True:
            with contextlib.suppress(Exception):
                client.set_tag(run_id, HEARTBEAT_TAG, f"{time.time():.0f}")
            if stop.wait(HEARTBEAT_S):
                return

    thread = threading.Thread(target=beat, name="kgx-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
