"""``python -m kgx.estimate``: see ``kgx.estimate.pilot``."""

import sys

from kgx.estimate.pilot import main

sys.exit(main(sys.argv[1:]))
