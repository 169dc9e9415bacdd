"""The read policy in SQL (``ReadPolicy.rows_read_as``) picks exactly the rows ``decide`` gives that view."""

import itertools

import pytest
from django.db.models import BooleanField, Value

from memory_core.models import Memory
from memory_core.people import MEMORY_FACT_COLUMNS, PERSON_CONTEXT
from memory_core.read_policy import MODES, active_read_policy

# Rules on every fact, in an order where earlier rules shadow later ones.
VARIED_RULES = """
version: "test-varied"
rules:
  - {id: own-raw, when: {own_subject: [true], sensitivity: [confidential]}, mode: raw}
  - {id: dormant, when: {state: [dormant], type: [preference, profile]}, mode: summary}
  - {id: fenced-org, when: {fenced: [true], scope: [org, shared_team]}, mode: masked}
  - {id: task-external, when: {scope: [task], data_zone: [external]}, mode: deny}
  - {id: not-own, when: {own_subject: [false], type: [relationship]}, mode: metadata_only}
  - {id: revoked, when: {state: [revoked, deleted]}, mode: metadata_only}
  - {id: public, when: {sensitivity: [public]}, mode: raw}
  - {id: restricted, when: {sensitivity: [restricted, confidential]}, mode: masked}
  - {id: rest, when: {}, mode: summary}
"""

CONTEXTS = [
    PERSON_CONTEXT,
    {"data_zone": "external"},
    {},
    {"acting_for_subject": {"kind": "user", "id": "pm-alice"}, "data_zone": "internal"},
    {"acting_for_subject": {"kind": "user", "id": "pm-alice"}, "data_zone": "external"},
]


@pytest.fixture
def every_fact(remember):
    """One memory row for each sensitivity, scope, type, state and subject (bulk rows, no history)."""
    template = Memory.objects.filter(pk=remember("template").pk).values().get()
    rows = []
    for sensitivity, scope, kind, state, subject in itertools.product(
        Memory.Sensitivity.values,
        Memory.Scope.values,
        Memory.Type.values,
        Memory.State.values,
        ("pm-alice", "pm-bob"),
    ):
        row = {**template, "id": None, "dedupe_key": "", "subject_id": subject}
        row.update(sensitivity=sensitivity, scope=scope, type=kind, state=state)
        rows.append(Memory(**{key: value for key, value in row.items() if key != "id"}))
    Memory.objects.bulk_create(rows)
    return Memory.objects.exclude(pk=template["id"])


def _agrees(memories, policy) -> None:
    for fenced, context in itertools.product((False, True), CONTEXTS):
        rows = list(memories.annotate(fenced=Value(fenced, output_field=BooleanField())))
        for mode in MODES:
            expected = {row.pk for row in rows if policy.decide(row, context).mode == mode}
            found = memories.annotate(fenced=Value(fenced, output_field=BooleanField())).filter(
                policy.rows_read_as({mode}, context, MEMORY_FACT_COLUMNS)
            )
            assert set(found.values_list("pk", flat=True)) == expected, (mode, fenced, context)


def test_the_default_rules_in_sql_agree_with_decide_for_every_fact(every_fact):
    assert every_fact.count() == 4 * 6 * 8 * 5 * 2
    _agrees(every_fact, active_read_policy())


def test_rules_on_every_fact_in_sql_agree_with_decide(every_fact, settings, tmp_path):
    rules = tmp_path / "read_rules.yaml"
    rules.write_text(VARIED_RULES)
    settings.CUSTODIAN_READ_POLICY_FILE = rules
    _agrees(every_fact, active_read_policy())
