"""One way to add a component to kgx: a registry per kind, filled where each component is defined and
discovered through Python entry points.

=================  ===================  ============================================================
kind               entry-point group    what a component is
=================  ===================  ============================================================
method             ``kgx.methods``      a function answering a question (``kgx.methods.register``)
dataset format     ``kgx.datasets``     a reader of question files (``kgx.datasets.dataset_format``)
KG backend         ``kgx.kg_backends``  a config schema and an opener (``kgx.kg.kg_backend``)
report             ``kgx.reports``      a ``python -m kgx.report`` command (``kgx.report.report_command``)
paper              ``kgx.papers``       published tables: a package with ``published/*.csv`` (and
                                        ``conf/paper/*.yaml`` for their sweeps)
=================  ===================  ============================================================

An entry point names a module (or an object in one); loading it imports the module, whose
decorators register what it defines. kgx's own components are entry points of kgx's own
distribution (``pyproject.toml``), so kgx finds its own exactly as it finds a plugin's: a package
that declares ``[project.entry-points."kgx.methods"] mine = "my_package.mine"`` and is installed
beside kgx makes ``method=mine`` work without editing kgx (docs/contributing/extending.md).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Iterator, MutableMapping
from importlib.metadata import EntryPoint, entry_points
from importlib.util import find_spec
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
GROUPS = ("kgx.methods", "kgx.datasets", "kgx.kg_backends", "kgx.reports", "kgx.papers")
PLUGIN_CONF = "kgx_conf"  # a plugin's config folder beside its entry point's module (Hydra's search path)


class RegistryError(LookupError):
    """A name no component of the kind has, or a plugin that did not load: the message says which
    and what exists."""


class Registry(MutableMapping[str, T], Generic[T]):
    """The components of one kind by name. Entry points are loaded on first use, once per process;
    a name registered twice by different objects is an error naming both places."""

    def __init__(self, kind: str, group: str) -> None:
        self.kind = kind
        self.group = group
        self._items: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._loaded = False
        self._loading = threading.RLock()

    def register(self, name: str, item: T, origin: str = "") -> T:
        """Add ``item`` as ``name`` (``origin``: where it is defined, for the error on a clash)."""
        known = self._items.get(name)
        if known is not None and known != item:
            raise RegistryError(
                f"{self.kind} '{name}' is registered twice: by {self._origins.get(name) or 'kgx'} "
                f"and by {origin or 'another module'}"
            )
        self._items[name] = item
        self._origins[name] = origin
        return item

    def load(self) -> None:
        """Import every entry point of the group (each registers what it defines), once."""
        if self._loaded:
            return
        with self._loading:
            if self._loaded:
                return
            self._loaded = True  # a module loaded here may look its own kind up while it registers
            for point in entry_points(group=self.group):
                _load(point, self)

    def named(self, name: str) -> T:
        """The component registered as ``name``; else a RegistryError listing the closest names."""
        self.load()
        if name in self._items:
            return self._items[name]
        options = sorted(self._items)
        near = difflib.get_close_matches(name, options, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        raise RegistryError(
            f"{self.kind} '{name}' is not registered{hint} (known: {', '.join(options) or 'none'}; "
            f"a plugin's {self.kind} comes from an installed package's '{self.group}' entry point)"
        )

    def __getitem__(self, name: str) -> T:
        self.load()
        return self._items[name]

    def __setitem__(self, name: str, item: T) -> None:
        self._items[name] = item

    def __delitem__(self, name: str) -> None:
        del self._items[name]
        self._origins.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        self.load()
        return iter(dict(self._items))

    def __len__(self) -> int:
        self.load()
        return len(self._items)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._items


def _load(point: EntryPoint, registry: Registry[T]) -> None:
    """Import one entry point; a plugin that fails to import is named with its distribution."""
    try:
        point.load()
    except Exception as exc:
        where = f"{point.dist.name} " if point.dist is not None else ""
        raise RegistryError(
            f"the {registry.kind} plugin {point.name} = {point.value} ({where}entry point in "
            f"'{registry.group}') did not load: {type(exc).__name__}: {exc}"
        ) from exc


def plugin_conf_dirs() -> list[Path]:
    """The ``kgx_conf/`` folders beside the modules of every kgx entry point (kgx's own has none:
    its configs are conf/), found without importing the modules."""
    found: dict[Path, None] = {}
    for group in GROUPS:
        for point in entry_points(group=group):
            if point.dist is not None and point.dist.name == "kgx":
                continue
            try:
                spec = find_spec(point.module)
            except (ImportError, ValueError):
                continue  # a plugin that does not import says so where it is loaded
            if spec is None or spec.origin is None:
                continue
            folder = Path(spec.origin).parent / PLUGIN_CONF
            if folder.is_dir():
                found[folder] = None
    return list(found)
