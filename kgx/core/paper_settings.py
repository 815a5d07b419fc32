"""Where a run's method settings came from: the provenance ``conf/paper_settings`` records.

Hydra composes each method's published settings for a dataset (and backbone) into ``method``
(``conf/config.yaml``: ``optional paper_settings: ${method}_${dataset}``); the same file fills
``settings`` so that ``--cfg job``, ``config.json`` and the run's ``settings`` tag say which paper
and table they are from, or that none applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass
class SettingsSource:
    """Where the method's settings came from. ``conf/paper_settings/<method>_<dataset>.yaml`` (and
    ``conf/paper_backbone/<method>_<dataset>_<llm>.yaml``) set the method's published settings for
    that cell and say so here; empty when no file applies (the method's defaults). Provenance only:
    the settings themselves are in ``method``, so this stays out of the config hash."""

    source: Optional[str] = None  # "LMP Table 7 (CWQ, ChatGPT/GPT-4): K=5, L=4"
    published: bool = False  # False: kgx's own choice where the paper gives none (said in the source)

    def describe(self, method: str, dataset: str) -> str:
        """The run's ``settings`` tag."""
        if self.source is None:
            return f"defaults: no published setting for {method} on {dataset}"
        return self.source if self.published else f"not published: {self.source}"
