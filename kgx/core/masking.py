"""What messages, logs and records show of a value that may carry a secret.

A URL may hold a password (``run.cache_url=redis://:password@host:port/db``); whatever kgx
prints or logs of such a URL passes through :func:`masked_url` first.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit


def masked_url(url: str) -> str:
    """``url`` with the user-info of ``scheme://user:password@host`` shown as ``user:***`` (a bare
    ``token@host`` as ``***``) and any ``password=`` query value as ``***``: what messages, logs,
    config.json and MLflow params show of a URL that may carry a secret."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}:***@{host}" if colon else f"***@{host}"
    query = re.sub(r"(^|&)(password=)[^&]*", r"\1\2***", parts.query)
    return urlunsplit(parts._replace(netloc=netloc, query=query))
