"""A question's explanation graph drawn (the KG paths a method read and the answer it gave) and
the plan of a run.
"""

# The modules a user or a plugin imports (``from kgx.explain import *`` imports them).
__all__ = ["draw", "plan"]
