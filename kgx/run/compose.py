"""What Hydra composes from: kgx's config schemas and every registered method's schema.

Lives in the run layer because it needs the method registry (``kgx.methods``), which sits above
the config schemas of ``kgx.core.config``."""

from __future__ import annotations

import copy
import io
import secrets
from typing import IO, Any, Union

import yaml
from hydra._internal.core_plugins import file_config_source, importlib_resources_config_source
from hydra.core.config_store import ConfigStore
from hydra.core.plugins import Plugins
from hydra.errors import ConfigCompositionException
from omegaconf import DictConfig, ListConfig, OmegaConf

from kgx.core.config import Config
from kgx.core.paths import CONF_DIR
from kgx.kg.backends import KG_BACKENDS
from kgx.methods import METHODS

_registered: dict[int, tuple] = {}
"""The methods and schemas last stored in each config store: storing them again converts every
schema to a config anew (a fifth of a test's compose), and registering is called before every
compose, while the registry changes only when a method is added."""


def register_schemas() -> None:
    """Make the schemas known to Hydra: ``method=<name>`` is the registered method's schema, and
    a ``conf/method/<name>.yaml`` (paper comments, overrides) extends it as ``base_<name>``; so is
    ``kg=<backend>`` a registered KG backend's (``conf/kg/freebase.yaml`` extends ``base_endpoint``).

    ``${kgx.token:}`` is a random token, drawn once per composed config (Hydra copies the
    resolver cache into every job of a sweep): it keeps two sweeps started in the same second
    out of each other's folder.

    The two lines below patch Hydra 1.3's internals (its config store's copying and the OmegaConf its
    file and package config sources parse with): it has no public hook for either, and a config
    source of kgx's own would copy Hydra's two sources whole. Each patch only saves CPU (the reasons
    are in :func:`_the_store` and :class:`ParsedOnce`); a compose gives the same config without them."""
    ConfigStore.__deepcopy__ = _the_store  # type: ignore[method-assign]
    Plugins.instance()  # its first scan runs Hydra's config-source modules again, undoing the next line
    file_config_source.OmegaConf = importlib_resources_config_source.OmegaConf = ParsedOnce  # type: ignore[misc]
    if not OmegaConf.has_resolver("kgx.token"):
        OmegaConf.register_new_resolver("kgx.token", lambda: secrets.token_hex(3), use_cache=True)
    cs = ConfigStore.instance()
    groups = {"method": METHODS, "kg": KG_BACKENDS}  # a registered component's schema per group
    registered = tuple(
        (group, name, found.config) for group, found_ in groups.items() for name, found in found_.items()
    )
    if registered == _registered.get(id(cs)):
        return
    cs.store(name="kgx_schema", node=Config)
    for group, name, config in registered:
        cs.store(group=group, name=f"base_{name}", node=config)
        if not (CONF_DIR / group / f"{name}.yaml").exists():  # a component needs no YAML file
            cs.store(group=group, name=name, node=config)
    _registered[id(cs)] = registered


def _the_store(store: ConfigStore, memo: dict) -> ConfigStore:
    """A deep copy of the config store is the store itself. Hydra 1.3 deep-copies its config
    repository at every compose, and with it the store of every registered schema (Hydra's own
    and kgx's): about a fifth of a compose's CPU, paid by every run, sweep job and test. Later Hydra reads
    the live store instead (facebookresearch/hydra#2928, with a regression test in
    hydra-ecosystem/hydra#3301); nothing changes a stored schema during a compose, and
    ``ConfigStore.load`` copies what it hands out."""
    return store


_PARSED: dict[str, Union[DictConfig, ListConfig]] = {}


class ParsedOnce(OmegaConf):
    """OmegaConf as Hydra's file and package config sources see it: ``load`` parses each distinct
    YAML text once per process and hands out copies. A compose reads about 12 files (kgx's and
    Hydra's own), and parsing them anew was about a fifth of its CPU, at every run, sweep job,
    estimate pilot and test. The file is still read each time, so an edited file is parsed anew.
    A file that is not YAML is one error line naming its path, line and column, not a traceback."""

    @staticmethod
    def load(file_: Union[str, Any, IO[Any]]) -> Union[DictConfig, ListConfig]:
        if not hasattr(file_, "read"):
            return OmegaConf.load(file_)
        text = file_.read()
        if isinstance(text, bytes):  # a zipped package's configs
            text = text.decode("utf-8")
        parsed = _PARSED.get(text)
        if parsed is None:
            name = getattr(file_, "name", "<file>")
            stream = io.StringIO(text)
            stream.name = name  # type: ignore[misc]
            try:
                parsed = _PARSED[text] = OmegaConf.load(stream)
            except yaml.MarkedYAMLError as exc:  # Hydra would print a traceback
                mark = exc.problem_mark or exc.context_mark
                where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
                raise ConfigCompositionException(f"{where}: not valid YAML: {exc.problem or exc.context}") from None
        return copy.deepcopy(parsed)
