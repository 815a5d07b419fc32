"""What a run will cost before it starts: a pilot on a few questions, per-stratum models of calls,
tokens and seconds, and the printed estimate with its intervals.
"""

# The modules a user or a plugin imports (``from kgx.estimate import *`` imports them).
__all__ = ["interval", "model", "pilot", "strata", "table", "wall"]
