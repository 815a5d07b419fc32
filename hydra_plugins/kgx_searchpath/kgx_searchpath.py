"""kgx's own sweeps on Hydra's search path, wherever kgx is installed.

``+sweeps=NAME`` is a config group: Hydra finds ``sweeps/NAME.yaml`` below a directory of its
search path. The user's ``./sweeps`` (the working directory) comes first, then kgx's: the
repository's ``sweeps/`` in a checkout, ``kgx/conf/sweeps`` in a wheel. (Hydra looks in the
primary config directory first, so in a wheel kgx's own sweeps win over a user's of the same
name.) Only kgx's own app is touched (its config directory must be on the path), since Hydra
loads search-path plugins for every app in the environment.

A plugin package's configs join too: where one of its kgx entry points (kgx.core.registry) names a
module beside a ``kgx_conf/`` folder, that folder is on the path after kgx's own, so its
``kgx_conf/paper/<table>.yaml`` is ``+paper=<table>`` and its ``kgx_conf/dataset/<name>.yaml`` is
``dataset=<name>``.
"""

from __future__ import annotations

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin


class KgxSweepsSearchPath(SearchPathPlugin):
    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from kgx.core.paths import CONF_DIR, SWEEPS_DIR

        ours = {f"file://{CONF_DIR}", str(CONF_DIR)}
        if not any(element.path in ours for element in search_path.get_path()):
            return
        search_path.append(provider="kgx-user", path="file://.")
        if SWEEPS_DIR.parent != CONF_DIR:  # a checkout; a wheel's config directory holds them already
            search_path.append(provider="kgx", path=f"file://{SWEEPS_DIR.parent}")
        from kgx.core.registry import plugin_conf_dirs

        for folder in plugin_conf_dirs():
            search_path.append(provider="kgx-plugin", path=f"file://{folder}")
