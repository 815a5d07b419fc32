"""What a SPARQL endpoint sends back passes the text boundary: credentials it echoes in an
error body (plain, and the base64 of basic auth) are redacted, and a JSON escape of a lone surrogate
in its results is replaced."""

from __future__ import annotations

import json

import pytest

from kgx.core.boundary import SECRETS
from kgx.core.kg_config import EndpointKGConfig
from kgx.kg.endpoint import EndpointKG, KGUnavailable, request_headers
from tests.kg.test_endpoint_settings import QUERY, FakeSparql

USER, PASSWORD = "kg-reader", "pa55word-kg"


@pytest.fixture
def credentials():
    cfg = EndpointKGConfig(endpoint="http://127.0.0.1:1/sparql", user_env="KGU", password_env="KGP")
    yield request_headers(cfg, {"KGU": USER, "KGP": PASSWORD})
    SECRETS.clear()


def test_credentials_echoed_in_an_error_body_are_redacted(credentials):
    def echo(seen):
        return 500, {}, f"denied: {seen.headers['Authorization']} user={USER} password={PASSWORD}".encode()

    with FakeSparql(echo) as fake:
        kg = EndpointKG(fake.url, retries=0, headers=credentials, sleep=lambda s: None)
        with pytest.raises(KGUnavailable) as caught:
            kg._select(QUERY)
    message = str(caught.value)
    assert credentials["Authorization"].split()[-1] not in message and PASSWORD not in message and USER not in message
    assert "Basic [secret KGU:KGP] user=[secret KGU] password=[secret KGP]" in message


def test_a_lone_surrogate_in_results_is_replaced():
    body = json.dumps(
        {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "Par\ud800is"}}]}}
    )
    with FakeSparql((200, {}, body.encode())) as fake:
        rows = EndpointKG(fake.url, retries=0)._select(QUERY)
    assert rows[0]["x"].value == "Par\ufffdis"
