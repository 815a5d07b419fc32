"""Per-question KG metering: every call counted, timed and traced, failures included."""

from __future__ import annotations

import pytest

from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import Trace
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG


def test_calls_are_counted_timed_and_traced(tmp_path):
    trace = Trace()
    kg = MeteredKG(open_kg(EmbeddedKGConfig(), tmp_path), trace)
    assert kg.neighbors("m.0_kk", "location.country.capital", "out") == ["m.04k0"]
    assert kg.names(["m.04k0"]) == {"m.04k0": "Canberra"}
    with pytest.raises(ValueError):
        kg.relations("m.0_kk> }", "out")
    assert (kg.usage.queries, kg.usage.errors) == (3, 1) and kg.usage.latency_s > 0
    ops = [(e.operation, e.rows, bool(e.error)) for e in trace.events]
    assert ops == [("neighbors", 1, False), ("names", 1, False), ("relations", 0, True)]
    assert trace.events[0].arguments == {"entity": "m.0_kk", "relation": "location.country.capital", "direction": "out"}
