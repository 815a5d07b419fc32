"""A tracking server that is down: found out in seconds, said once, nothing lost.

MLflow's HTTP client retries a refused connection 7 times with a backoff factor of 2 and waits 120 s
for each answer: ``python -m kgx`` against a dead server sat ~8 minutes in retries and ended with a
raw ``MlflowException`` traceback, the run left RUNNING. kgx bounds the retries (unless the user
set MLflow's own variables) and turns the failure into ``TrackingUnavailable``, which the command
line prints as one message. The questions are kept all the same: they are written to the run's
folder as they finish, and the folder knows its MLflow run (``mlflow_run_id``), so the same command
run again once the server is back asks nothing twice and completes the MLflow side.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Iterator

# MLflow's variables, set only where the user has not: ~3 s of retries on a refused connection,
# at most ~45 s on a server that accepts and never answers.
BOUNDED = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "15",
}
# How MLflow words a request that got no usable answer (mlflow.utils.rest_utils).
_UNANSWERED = re.compile(r"API request to \S+ failed with (timeout )?exception|failed with error code 5\d\d")


class TrackingUnavailable(Exception):
    """The tracking server did not answer; the message says what was kept and how to go on."""


def bound_retries() -> None:
    for name, value in BOUNDED.items():
        os.environ.setdefault(name, value)


def unanswered(exc: BaseException) -> bool:
    """Whether ``exc`` is MLflow's way of saying the server did not answer."""
    return type(exc).__name__ == "MlflowException" and bool(_UNANSWERED.search(str(exc)))


@contextlib.contextmanager
def reaching(uri: str, doing: str, hint: str) -> Iterator[None]:
    """Turn an unanswered request into TrackingUnavailable naming the server, what kgx was doing
    and what the user can do (``hint``)."""
    try:
        yield
    except Exception as exc:
        if not unanswered(exc):
            raise
        text = str(exc)
        reason = re.search(r"\[Errno -?\d+\] [^'\")]+|timed? ?out|error code \d+", text)
        first = reason.group(0) if reason else text.splitlines()[0][:200]
        raise TrackingUnavailable(f"the tracking server {uri} did not answer while {doing} ({first}); {hint}") from None
