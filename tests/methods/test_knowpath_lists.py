"""KnowPath's relation and entity selection as App. F.3/F.4 word them: "up to 7 ... (length up to
5)", the count asked for and the reply's list length apart (``method.list_length``)."""

from __future__ import annotations

import pytest

from kgx.core.config import ConfigError
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.kg import open_kg
from kgx.methods import get
from kgx.methods.knowpath import KnowPathConfig
from tests.methods.test_knowpath import NOT_YET, fake_ctx
from tests.methods.test_tog import AUSTRALIA

ROUND = [({"Australia": ["location.location.contains"]}, {"Australia": ["Queensland"]}, NOT_YET)]


@pytest.fixture(scope="module")
def demo_kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize(
    "params, asked, listed, length_line",
    [
        ({}, (3, 5), (3, 5), False),  # kgx's defaults: the count asked for is the list's length
        ({"width": 7, "entity_width": 7, "list_length": 5}, (7, 7), (5, 5), True),  # the paper's prompts
        ({"width": 7, "entity_width": 7}, (7, 7), (7, 7), False),
    ],
)
def test_the_prompts_ask_for_up_to_n_and_cap_the_lists_length(demo_kg, params, asked, listed, length_line):
    ctx, llm = fake_ctx(demo_kg, rounds=ROUND, **params, depth=1)
    get("knowpath")(AUSTRALIA, ctx)
    relation, entity = llm.calls[1], llm.calls[2]
    assert f"choose up to {asked[0]} of its candidate relations" in relation.prompt
    assert f"choose up to {asked[1]} of its candidate entities" in entity.prompt
    assert [c.schema["properties"]["Australia"]["maxItems"] for c in (relation, entity)] == list(listed)
    assert ("(each list of length up to 5)." in relation.prompt) is length_line
    assert ("(each list of length up to 5)." in entity.prompt) is length_line


def test_a_list_length_below_one_is_refused():
    with pytest.raises(ConfigError, match="method.list_length=0"):
        KnowPathConfig(list_length=0)
