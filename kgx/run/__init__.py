"""A run's lifecycle: composing its config (Hydra), pre-flight checks, answering questions in
parallel, sweeps and their pre-flight. ``execute.execute(spec, cwd)`` runs one composed run.
"""

# The modules a user or a plugin imports (``from kgx.run import *`` imports them).
__all__ = ["compose", "execute", "preflight", "spec", "sweep", "sweep_preflight"]
