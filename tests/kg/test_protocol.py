"""The KG protocol on the demo KG, against both backends: the embedded store and a real
``oxigraph serve`` endpoint on loopback. Both must give identical answers."""

from __future__ import annotations

import pytest

from kgx.kg import BUNDLED_KG, EmbeddedKG, EndpointKG, KGError, build_store
from kgx.kg.serve import OxigraphServer
from kgx.kg.sparql import Noise

JFK, RFK, AUSTRALIA, CANBERRA = "m.0src6", "m.08qesu", "m.0_kk", "m.04k0"
AG_POSITION = "m.0irs7"  # RFK as Attorney General: an unnamed CVT node


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store([BUNDLED_KG], "nt", tmp_path_factory.mktemp("kg") / "demo")


@pytest.fixture(scope="module")
def server(store):
    with OxigraphServer(store) as running:
        yield running


@pytest.fixture(scope="module", params=["embedded", "endpoint"])
def kg(request, store):
    if request.param == "embedded":
        return EmbeddedKG(store)
    return EndpointKG(request.getfixturevalue("server").url)


@pytest.fixture(scope="module")
def both(store, server):
    return EmbeddedKG(store), EndpointKG(server.url)


CALLS = [
    ("relations", (JFK, "out")),
    ("relations", (JFK, "in")),
    ("relations", (AG_POSITION, "out")),
    ("neighbors", (AUSTRALIA, "location.country.capital", "out")),
    ("neighbors", (CANBERRA, "location.country.capital", "in")),
    ("neighbors", (AG_POSITION, "government.government_position_held.from", "out")),
    ("names", ([JFK, RFK, AUSTRALIA, AG_POSITION, '"1961-01-21"'],)),
    ("search", ("John F. Kennedy",)),
    ("search", ("john f. kennedy",)),
    ("search", ("Kennedy brothers",)),
]


@pytest.mark.parametrize("operation, args", CALLS, ids=[f"{op}{i}" for i, (op, _) in enumerate(CALLS)])
def test_backends_answer_identically(both, operation, args):
    embedded, endpoint = both
    assert getattr(embedded, operation)(*args) == getattr(endpoint, operation)(*args)


def test_both_directions(kg):
    assert kg.neighbors(AUSTRALIA, "location.country.capital", "out") == [CANBERRA]
    assert kg.neighbors(CANBERRA, "location.country.capital", "in") == [AUSTRALIA]
    assert "location.country.capital" in kg.relations(CANBERRA, "in")
    assert "location.country.capital" not in kg.relations(CANBERRA, "out")


def test_schema_relations_are_filtered(kg):
    relations = kg.relations(AUSTRALIA, "out")
    assert relations and not [r for r in relations if r.startswith(("type.object.", "common."))]


def test_literals_come_back_quoted_and_named_by_their_value(kg):
    assert kg.neighbors(AG_POSITION, "government.government_position_held.from", "out") == ['"1961-01-21"']
    assert kg.names(['"1961-01-21"']) == {'"1961-01-21"': "1961-01-21"}


def test_unnamed_cvt_nodes_are_rendered_from_their_attributes(kg):
    label = kg.names([AG_POSITION])[AG_POSITION]
    assert "UnName" not in label and label.startswith("(")
    for part in ("office_holder: Robert F. Kennedy", "from: 1961-01-21", "to: 1964-09-03"):
        assert part in label


def test_search_exact_then_folded_then_overlap(kg):
    assert kg.search("John F. Kennedy") == [JFK]
    assert kg.search("JOHN F. KENNEDY") == [JFK]
    assert JFK in kg.search("president John Kennedy")
    assert kg.search("   ") == []


@pytest.mark.parametrize("text", ['Kennedy" } ; DROP ALL #', 'a\\" ) }', "x\n}\nSELECT", "<http://x>"])
def test_search_text_cannot_inject(kg, text):
    assert isinstance(kg.search(text), list)


@pytest.mark.parametrize("bad", ["m.0src6> ?p ?o } #", 'm.0"x', "m.0 kk", "m.0src6}", "http://x/y", ""])
def test_ids_that_could_inject_are_refused(kg, bad):
    with pytest.raises(ValueError, match="not a Freebase id"):
        kg.relations(bad, "out")
    with pytest.raises(ValueError, match="not a Freebase id"):
        kg.neighbors(JFK, bad, "out")


def test_the_kg_candidate_cap_is_recorded_like_a_method_cap(store):
    from kgx.core.trace import Trace
    from kgx.kg.metered import MeteredKG

    trace = Trace()
    capped = MeteredKG(EmbeddedKG(store), trace, max_candidates=2)
    full = EmbeddedKG(store).relations(JFK, "out")
    assert capped.relations(JFK, "out") == full[:2] and capped.relations(JFK, "out", limit=1) == full[:1]
    assert [e.capped_from for e in trace.events] == [len(full), len(full)] and capped.usage.capped == 2


def test_noise_is_reproducible_by_seed_and_removes_its_share(store):
    clean = EmbeddedKG(store)
    entities = [e for e in clean.search("a", limit=10)] + [JFK, RFK, AUSTRALIA, CANBERRA]
    noisy = [EmbeddedKG(store, noise=Noise(drop_relations=0.3, drop_names=0.3, seed=s)) for s in (1, 1, 2)]

    def edges(kg):
        return {(e, r, x) for e in entities for r in kg.relations(e, "out") for x in kg.neighbors(e, r, "out")}

    full, first, again, other = edges(clean), edges(noisy[0]), edges(noisy[1]), edges(noisy[2])
    assert first == again and first != other
    assert first < full and 0.5 < len(first) / len(full) < 0.85
    named = [e for e in (JFK, RFK, AUSTRALIA, CANBERRA) if e in noisy[0].names([e])]
    assert named == [e for e in (JFK, RFK, AUSTRALIA, CANBERRA) if e in noisy[1].names([e])]


def test_unreachable_endpoint_names_the_url_after_retries():
    sleeps = []
    kg = EndpointKG("http://127.0.0.1:9/sparql", timeout_s=1, retries=2, sleep=sleeps.append)
    with pytest.raises(KGError, match=r"http://127\.0\.0\.1:9/sparql unreachable after 3 tries"):
        kg.ping()
    assert len(sleeps) == 2
