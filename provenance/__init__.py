"""Provenance: where a memory's evidence comes from, and what follows when that evidence changes.

The evidence app keeps the rows; the REST endpoints, the admin and the
consequences of revising or invalidating (blocked proposals, fences,
revalidations) live here.
"""
