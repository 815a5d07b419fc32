"""Packaging beyond pyproject.toml's metadata: the repository keeps ``conf/`` and ``sweeps/`` at
its top level, and the wheel ships them inside the package (``kgx/conf`` and ``kgx/conf/sweeps``),
so an installed kgx composes runs and sweeps from any directory (``kgx.core.paths`` finds them).
Data files ship beside the modules that read them: the demo's questions and KG, and the papers'
published figures (``kgx/report/published/*.csv``, kgx.report.paper_published)."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(
            include=["kgx", "kgx.*", "hydra_plugins", "hydra_plugins.*"],
            exclude=["kgx.datasets.demo", "kgx.report.published"],
        ),
        "kgx.conf",
        "kgx.conf.sweeps",
    ],
    package_dir={"kgx.conf": "conf", "kgx.conf.sweeps": "sweeps"},
    package_data={
        "kgx.conf": ["*.yaml", "*/*.yaml", "*/*/*.yaml"],
        "kgx.conf.sweeps": ["*.yaml"],
        "kgx.datasets": ["demo/*.nt", "demo/*.jsonl"],
        "kgx.report": ["published/*.csv"],
    },
)
