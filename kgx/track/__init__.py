"""MLflow tracking: one run per configuration (claims keep two starts of one apart), its params,
metrics, spans and transcripts.
"""

# The modules a user or a plugin imports (``from kgx.track import *`` imports them).
__all__ = ["claims", "same_config", "tracker", "transcripts"]
