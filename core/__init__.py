"""Shared kernel: domain errors, canonical hashing and API plumbing. No models."""
