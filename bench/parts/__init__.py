"""One module per measured part; each exposes ``run(ctx) -> dict``."""
