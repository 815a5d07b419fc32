"""KGQA methods; importing this package registers them all."""
from kgx.methods import cot, io, sc  # noqa: F401  (registration by import)
from kgx.methods.base import METHODS, Context, get

__all__ = ["METHODS", "Context", "get"]
