"""What messages, logs and records show of a value that may carry a secret.

A URL may hold a password (``run.cache_url=redis://:password@host:port/db``); whatever kgx
prints or logs of such a URL passes through :func:`masked_url` first. A config value under a
credential's name (``llm.extra.api_key=...``, ``+method.token=...``: :func:`is_secret_key`) is one
too: the record of the run's config shows ``[secret <key>]`` in its place (:func:`masked_config`).
"""

from __future__ import annotations

import re
from typing import Any, Iterator
from urllib.parse import unquote, urlsplit, urlunsplit

# A config key (its last part) that names a credential: ``password``, ``hf_token``, ``openai_api_key``;
# not ``*_env`` (the name of a variable) nor ``*_per_token`` (a price).
SECRET_KEY = re.compile(
    r"(?<!per)(?:^|[_-])(pass(word|wd)?|secret|token|api_?key|credentials?|authorization)$", re.IGNORECASE
)


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


def url_secrets(url: str) -> list[str]:
    """What :func:`masked_url` hides of ``url`` (the password, or a bare ``token@``, and ``password=``
    query values), as written and decoded, longest first."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    user, colon, password = parts.netloc.rpartition("@")[0].partition(":")
    found = {password if colon else user, *re.findall(r"(?:^|&)password=([^&]*)", parts.query)}
    return sorted((found | {unquote(s) for s in found}) - {""}, key=len, reverse=True)


def is_secret_key(key: str) -> bool:
    """Whether a config key (its last part) names a credential, e.g. ``api_key``, ``password``."""
    return bool(SECRET_KEY.search(str(key)))


def config_secrets(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(key, value)`` of every credential a config holds: values under credential names, and
    what :func:`masked_url` hides of every URL in it."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if is_secret_key(key) and isinstance(item, (str, int)) and str(item):
                yield where, str(item)
            else:
                yield from config_secrets(item, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from config_secrets(item, f"{path}[{i}]")
    elif isinstance(value, str) and "://" in value:
        yield from ((path, secret) for secret in url_secrets(value))


def masked_config(value: Any, path: str = "") -> Any:
    """``value`` (plain config data) with every credential-named value shown as ``[secret <key>]``."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            secret = is_secret_key(key) and isinstance(item, (str, int)) and str(item)
            out[key] = f"[secret {where}]" if secret else masked_config(item, where)
        return out
    if isinstance(value, list):
        return [masked_config(item, f"{path}[{i}]") for i, item in enumerate(value)]
    return value


def masked_overrides(overrides: list[str]) -> list[str]:
    """Command-line overrides as records show them: ``llm.extra.api_key=[secret llm.extra.api_key]``,
    a URL's password as ``***``."""
    out = []
    for override in overrides:
        key, eq, value = override.partition("=")
        name = key.lstrip("+~")
        if eq and is_secret_key(name.rsplit(".", 1)[-1]):
            out.append(f"{key}=[secret {name}]")
        else:
            out.append(f"{key}={masked_url(value)}" if eq and "://" in value else override)
    return out
