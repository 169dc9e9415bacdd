"""Evidence sources and their revisions; the REST endpoints and consequences live in ``provenance``."""
