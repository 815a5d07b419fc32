"""A question's record and a run's figures: accuracy under every rule, cost, the failure shares,
and released outputs of other systems scored the same way.
"""

# The modules a user or a plugin imports (``from kgx.results import *`` imports them).
__all__ = ["billing", "figures", "record", "released", "rog_eval"]
