"""Maintenance: the loops Custodian runs over its memories under the same authority as an agent.

Dormancy, compaction, retention, Bounded Dreaming and schema evolution only
propose, as the tenant's system agent; policy, reviewers and the executor
govern what they propose like anything an agent submits.
"""
