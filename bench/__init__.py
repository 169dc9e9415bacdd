"""Custodian's benchmark suite: ``python -m bench`` (``make bench``); see bench/README.md."""
