"""What the fork server of kgx.run.processes imports before it forks any worker (its preload), and
nothing else imports.

Importing it first ties the server to the run's process: a server left behind by a ``kill -9``
would otherwise wait for the end of its pipe and then take seconds to shut its interpreter down.
Then it imports what every worker needs, litellm above all (seconds of CPU), once: a worker forked
from it starts in milliseconds.
"""

import os

from kgx.core.collector import tune
from kgx.core.lifeline import die_with_parent, watch_parent

die_with_parent()
watch_parent(os.getppid())
tune()  # before the imports below; the workers it forks inherit it (kgx.core.collector)

import contextlib  # noqa: E402
import importlib  # noqa: E402

import kgx.llm.client  # noqa: E402, F401
import kgx.llm.question  # noqa: E402, F401
import kgx.run.execute  # noqa: E402, F401
from kgx.llm.bounded import FIRST_CALL_IMPORTS  # noqa: E402

# What litellm imports on a process's first call and first token count (its tokenizer's tables):
# a second of CPU in every worker otherwise.
for module in (*FIRST_CALL_IMPORTS, "litellm.litellm_core_utils.default_encoding"):
    with contextlib.suppress(ImportError):  # as kgx.llm.bounded.warm: another litellm may lack one
        importlib.import_module(module)
