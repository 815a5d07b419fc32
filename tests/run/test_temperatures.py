"""One rule for temperatures: a method's own settings win, llm.temperature is for methods with
none, and a setting that would be ignored or refused by the provider stops the run first."""

from __future__ import annotations

import pytest

from kgx.core.config import ConfigError
from kgx.run.spec import to_run_spec
from tests.inprocess import kgx_main


def spec(compose_cfg, *overrides: str):
    return to_run_spec(compose_cfg(*overrides), overrides)


def test_llm_temperature_counts_for_a_method_without_its_own(compose_cfg):
    assert spec(compose_cfg, "method=cot", "llm=scripted", "llm.temperature=0.7").llm.temperature == 0.7


@pytest.mark.parametrize(
    "method, named",
    [
        ("tog", "method.temperature_explore=0.4, method.temperature_reason=0.0"),
        ("lmp", "method.temperature=0.0"),
        ("sc", "method.temperature=0.7"),
        ("knowpath", "method.temperature_explore=0.4, method.temperature_answer=0.0"),
    ],
)
def test_llm_temperature_for_a_method_with_its_own_is_refused(method, named, compose_cfg):
    with pytest.raises(ConfigError, match="llm.temperature=0.7 would be ignored") as caught:
        spec(compose_cfg, f"method={method}", "llm=scripted", "llm.temperature=0.7")
    assert f"{method} sends its calls at its own {named}" in str(caught.value)
    # Composed without the user's overrides (an internal compose), nothing is refused.
    assert to_run_spec(compose_cfg(f"method={method}", "llm=scripted", "llm.temperature=0.7"))


def test_a_backbone_with_one_temperature_refuses_the_others_before_any_call(compose_cfg):
    with pytest.raises(ConfigError) as caught:
        spec(compose_cfg, "method=tog", "llm=o1_mini")
    assert str(caught.value) == (
        "llm=o1_mini accepts temperature 1.0 only, and method.temperature_explore=0.4, "
        "method.temperature_reason=0.0 would be refused by the provider: set method.temperature_explore=1.0 "
        "method.temperature_reason=1.0"
    )
    with pytest.raises(ConfigError, match="set llm.temperature=1.0"):
        spec(compose_cfg, "method=cot", "llm=o1_mini", "llm.temperature=0")
    with pytest.raises(ConfigError, match="set llm.retry_temperature_step=0"):
        spec(compose_cfg, "method=cot", "llm=o1_mini", "llm.retry_temperature_step=0.2")
    assert spec(compose_cfg, "method=cot", "llm=o1_mini").llm.temperature == 1.0
    assert spec(compose_cfg, "method=tog", "llm=o1_mini", "method.temperature_explore=1", "method.temperature_reason=1")


def test_a_stage_backbone_is_checked_too(compose_cfg):
    with pytest.raises(ConfigError, match=r"llm.stages.answer=o1_mini accepts temperature 1.0 only"):
        spec(compose_cfg, "method=lmp", "llm=gpt4", "+llm.stages.answer=o1_mini")


def test_lmp_table_2s_o1_mini_cells_compose(compose_cfg):
    """LMP's Table 2 ran o1-mini: its cells carry temperature 1, said in the settings source."""
    for dataset in ("webqsp", "cwq"):
        s = spec(compose_cfg, "method=lmp", f"dataset={dataset}", "llm=o1_mini")
        assert s.method.temperature == 1.0 and "the only one o1-mini accepts" in s.settings.source


def test_the_command_line_refuses_it_too(tmp_path):
    done = kgx_main(tmp_path, "method=tog", "llm=scripted", "llm.temperature=0.7")
    assert done.returncode == 1 and "kgx: error: llm.temperature=0.7 would be ignored" in done.stderr


def test_accepted_temperatures_and_the_settings_source_are_not_part_of_a_runs_identity(compose_cfg):
    identity = spec(compose_cfg, "method=lmp", "dataset=cwq").identity()
    assert "temperatures" not in identity["llm"] and "settings" not in identity
