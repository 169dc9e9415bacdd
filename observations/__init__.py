"""Observations: what an agent saw, turned into proposed memories by an extractor."""
