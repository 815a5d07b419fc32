"""The ground floor: config schemas, value types and the plumbing every layer above shares.

Nothing here imports another kgx package. A plugin reads its types from here: ``types``
(``Question``, ``Prediction``), ``config`` and ``kg_config`` (the schemas it extends), ``registry``
(the registry every extension kind uses), ``trace`` and ``usage`` (what a question records).
"""

# The modules a user or a plugin imports (``from kgx.core import *`` imports them).
__all__ = [
    "config",
    "config_checks",
    "graph",
    "kg_config",
    "metrics",
    "reachability",
    "registry",
    "sources",
    "trace",
    "types",
    "usage",
    "values",
]
