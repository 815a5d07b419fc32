"""What Hydra composes from: kgx's config schemas and every registered method's schema.

Lives in the run layer because it needs the method registry (``kgx.methods``), which sits above
the config schemas of ``kgx.core.config``."""

from __future__ import annotations

import secrets

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from kgx.core.config import Config
from kgx.core.paths import CONF_DIR
from kgx.methods import METHODS

_registered: dict[int, tuple] = {}
"""The methods and schemas last stored in each config store: storing them again converts every
schema to a config anew (a fifth of a test's compose), and registering is called before every
compose, while the registry changes only when a method is added."""


def register_schemas() -> None:
    """Make the schemas known to Hydra: ``method=<name>`` is the registered method's schema, and
    a ``conf/method/<name>.yaml`` (paper comments, overrides) extends it as ``base_<name>``.

    ``${kgx.token:}`` is a random token, drawn once per composed config (Hydra copies the
    resolver cache into every job of a sweep): it keeps two sweeps started in the same second
    out of each other's folder."""
    ConfigStore.__deepcopy__ = _the_store  # type: ignore[method-assign]
    if not OmegaConf.has_resolver("kgx.token"):
        OmegaConf.register_new_resolver("kgx.token", lambda: secrets.token_hex(3), use_cache=True)
    cs = ConfigStore.instance()
    registered = tuple((name, found.config) for name, found in METHODS.items())
    if registered == _registered.get(id(cs)):
        return
    cs.store(name="kgx_schema", node=Config)
    for name, found in METHODS.items():
        cs.store(group="method", name=f"base_{name}", node=found.config)
        if not (CONF_DIR / "method" / f"{name}.yaml").exists():  # a method needs no YAML file
            cs.store(group="method", name=name, node=found.config)
    _registered[id(cs)] = registered


def _the_store(store: ConfigStore, memo: dict) -> ConfigStore:
    """A deep copy of the config store is the store itself. Hydra 1.3 deep-copies its config
    repository at every compose, and with it the store of every registered schema (Hydra's own
    and kgx's): about a fifth of a compose's CPU, paid by every run, sweep job and test. Later Hydra reads
    the live store instead (facebookresearch/hydra#2928, with a regression test in
    hydra-ecosystem/hydra#3301); nothing changes a stored schema during a compose, and
    ``ConfigStore.load`` copies what it hands out."""
    return store
