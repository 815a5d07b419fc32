"""KGQA methods; importing this package registers them all.

Every module of the package is imported, so a new method file registers itself by existing.
"""

import importlib
import pkgutil

from kgx.methods.base import METHODS, Context, Method, get, method, prepare

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["METHODS", "Context", "Method", "get", "method", "prepare"]
