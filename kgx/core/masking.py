"""What messages, logs and records show of a value that may carry a secret.

A URL may hold a credential: user-info (``http://user:password@host/v1``,
``redis://:password@host:port/db``) or a query parameter named like one (``?api-key=...``,
``&token=...``: :data:`SECRET_PARAM`). Whatever kgx prints or logs of a URL, wherever it sits in the
config (``llm.api_base``, ``kg.endpoint``, ``run.tracking_uri``, ``run.cache_url``), passes through
:func:`masked_url` first; the request itself still gets the real URL. A config value under a
credential's name (``llm.extra.api_key=...``, ``+method.token=...``: :func:`is_secret_key`) is one
too: the record of the run's config shows ``[secret <key>]`` in its place (:func:`masked_config`).
Text kgx does not write itself (Hydra's ``--cfg job``) goes through :func:`masked_text`.
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

# A URL query parameter that carries a credential: ``api-key``, ``api_key``, ``apikey``, ``key``,
# ``token``, ``access_token``, ``sig`` (a signed URL), ``password``, ``secret``, ``auth``.
SECRET_PARAM = re.compile(
    r"(?:^|[_.-])(pass(word|wd)?|pwd|secret|token|api[_-]?key|apikey|key|sig|signature|auth(orization)?|"
    r"credentials?|access[_-]?key)$",
    re.IGNORECASE,
)
MASK = "***"
# A URL inside free text: a scheme, then everything up to white space, a quote or a bracket, and
# not the punctuation that ends a sentence or a clause after it.
URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>()\[\]]+(?<![.,;:])")
# A YAML line ``key: value`` (Hydra's ``--cfg job``) whose key names a credential.
SECRET_LINE = re.compile(r"^(?P<lead>\s*(?:- )?)(?P<key>[\w.-]+): (?P<value>\S.*)$", re.MULTILINE)


def _query_secret(name: str, value: str) -> bool:
    """Whether the query parameter ``name=value`` (as written) carries a credential."""
    return bool(value) and bool(SECRET_PARAM.search(unquote(name)))


def masked_url(url: str) -> str:
    """``url`` with the user-info of ``scheme://user:password@host`` shown as ``user:***`` (a bare
    ``token@host`` as ``***``) and every credential-like query value (``api-key=``, ``token=``,
    ``password=`` ...) as ``***``: what messages, logs, config.json and MLflow params show of a
    URL that may carry a secret."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL after all (an unclosed IPv6 bracket): nothing is shown of it
        return MASK if "@" in url or "=" in url else url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{host}" if colon else f"{MASK}@{host}"
    query = "&".join(
        f"{name}={MASK}" if _query_secret(name, value) else piece
        for piece in parts.query.split("&")
        for name, _, value in [piece.partition("=")]
    )
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    if "://" not in url:
        return urlunsplit(parts._replace(netloc=netloc, query=query))
    # Written out, not by urlunsplit, which drops an empty host (``sqlite:///x`` as ``sqlite:/x``).
    tail = (f"?{query}" if query else "") + (f"#{parts.fragment}" if parts.fragment else "")
    return f"{parts.scheme}://{netloc}{parts.path}{tail}"


def url_secrets(url: str) -> list[str]:
    """What :func:`masked_url` hides of ``url`` (the password, or a bare ``token@``, and the values
    of credential-like query parameters), as written and decoded, longest first."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    user, colon, password = parts.netloc.rpartition("@")[0].partition(":")
    params = [v for piece in parts.query.split("&") for k, _, v in [piece.partition("=")] if _query_secret(k, v)]
    found = {password if colon else user, *params}
    return sorted((found | {unquote(s) for s in found}) - {""}, key=len, reverse=True)


def masked_text(text: str) -> str:
    """Free text (a config printed as YAML) with every URL masked and every ``key: value`` line
    whose key names a credential shown as ``key: '[secret key]'``."""
    text = URL_IN_TEXT.sub(lambda m: masked_url(m.group(0)), text)

    def line(match: re.Match[str]) -> str:
        key = match.group("key")
        if not is_secret_key(key.rsplit(".", 1)[-1]) or match.group("value") in ("null", "''", '""'):
            return match.group(0)
        return f"{match.group('lead')}{key}: '[secret {key}]'"

    return SECRET_LINE.sub(line, text)


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
    """``value`` (plain config data) with every credential-named value shown as ``[secret <key>]``
    and every URL as :func:`masked_url` shows it."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            secret = is_secret_key(key) and isinstance(item, (str, int)) and str(item)
            out[key] = f"[secret {where}]" if secret else masked_config(item, where)
        return out
    if isinstance(value, list):
        return [masked_config(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, str) and "://" in value:
        return masked_url(value)
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
