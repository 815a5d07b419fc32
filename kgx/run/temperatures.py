"""One rule for the temperature a call is sent at, and the settings that would break it.

The rule: a method with temperature settings of its own (``method.temperature*``: ToG's exploration
and reasoning, KnowPath's, PoG's, LMP's, CGPE's, StructGPT's, self-consistency's sampling) sends
every call at them; the paper settings (``conf/paper_settings``) fill them with the published
values. ``llm.temperature`` is the temperature of methods that have none (io, cot), per backbone.
So ``llm.temperature`` given for a method with its own would change nothing: it is refused, naming
the settings that count, rather than silently ignored.

A backbone that accepts only some temperatures (``llm.temperatures``; o1-mini: 1 only) is checked
here too, before the first call: a provider refuses such a request with a 400 at the first question,
and invalid-output retries, sent warmer by ``llm.retry_temperature_step``, would be refused alike.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Sequence

from kgx.core.config import ConfigError, LLMConfig, MethodConfig

_BACKBONE_TEMPERATURE = re.compile(r"llm(\.stages\.[\w-]+)?\.temperature")


def method_temperatures(method: MethodConfig) -> dict[str, float]:
    """The method's own temperature settings, by their config key."""
    return {
        f"method.{f.name}": getattr(method, f.name)
        for f in fields(method)
        if f.name.startswith("temperature") and getattr(method, f.name) is not None
    }


def check_temperatures(
    method: MethodConfig, llm: LLMConfig, stages: dict[str, LLMConfig], overrides: Sequence[str] = ()
) -> None:
    """Raise ConfigError for a temperature given that the method ignores (``overrides``: what the
    user set, as Hydra overrides) or one a backbone would refuse."""
    own = method_temperatures(method)
    for override in overrides:
        key, _, value = override.lstrip("+~").partition("=")
        if own and _BACKBONE_TEMPERATURE.fullmatch(key):
            listed = ", ".join(f"{k}={v}" for k, v in own.items())
            raise ConfigError(
                f"{key}={value} would be ignored: {method.name} sends its calls at its own {listed}; "
                f"set {' and '.join(own)} instead"
            )
    backbones = {"llm": llm, **{f"llm.stages.{stage}": b for stage, b in stages.items()}}
    for where, backbone in backbones.items():
        accepted = [float(t) for t in backbone.temperatures]
        if not accepted:
            continue
        sent = own or {f"{where}.temperature": backbone.temperature}
        refused = {key: value for key, value in sent.items() if float(value) not in accepted}
        if refused:
            raise ConfigError(
                f"{where}={backbone.name} accepts temperature {' or '.join(map(str, accepted))} only, and "
                f"{', '.join(f'{k}={v}' for k, v in refused.items())} would be refused by the provider: set "
                f"{' '.join(f'{k}={accepted[0]}' for k in refused)}"
            )
        if backbone.parse_retries and backbone.retry_temperature_step:
            raise ConfigError(
                f"{where}={backbone.name} accepts temperature {' or '.join(map(str, accepted))} only, and retries "
                f"of invalid output are sent warmer: set {where}.retry_temperature_step=0"
            )
