"""KGQA methods, registered where they are defined (``kgx.methods.register``) and found through the
entry-point group ``kgx.methods``: kgx's own are declared in its pyproject.toml, a plugin's in its
own (docs/contributing/extending.md). ``METHODS`` imports them on first use.
"""

from kgx.methods.base import METHODS, Context, Method, call_bound, get, method, prepare, register

__all__ = ["METHODS", "Context", "Method", "call_bound", "get", "method", "prepare", "register"]
