"""``python -m kgx.estimate``: see ``kgx.estimate.pilot``."""

import sys

from kgx.core.collector import tune

tune()  # see kgx.core.collector

from kgx.estimate.pilot import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
