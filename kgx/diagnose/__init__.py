"""Why a question was missed: its gold answers' reachability in the KG it saw, the gold paths,
the failure breakdown, and the crucial triples ``kg.drop`` removes.
"""

# The modules a user or a plugin imports (``from kgx.diagnose import *`` imports them).
__all__ = ["breakdown", "crucial", "gold_path", "hops", "reach"]
