"""Evidence status only moves forward: valid → superseded → invalidated; invalidated is final.

A correction is a new revision, never a rewritten one. The ORM refuses a
backward move here; a PostgreSQL trigger refuses it for every role
(``tests/executor/test_db_roles.py``).
"""

import pytest

from evidence.models import EvidenceRevision
from provenance.services import add_evidence_revision, invalidate_evidence_revision
from tests.factories import make_evidence


def _move(revision: EvidenceRevision, status: str) -> None:
    revision.status = status
    revision.save(update_fields=["status"])


def test_an_invalidated_revision_never_becomes_valid_or_superseded_again(agent):
    revision = invalidate_evidence_revision(revision=make_evidence(agent.agent), reason="look-ahead bug")
    for status in ("valid", "superseded"):
        stored = EvidenceRevision.objects.get(pk=revision.pk)
        with pytest.raises(TypeError, match="forward"):
            _move(stored, status)
    assert EvidenceRevision.objects.get(pk=revision.pk).status == "invalidated"


def test_a_superseded_revision_never_becomes_valid_again(agent):
    first = make_evidence(agent.agent)
    add_evidence_revision(source=first.source, agent=agent.agent, content={"corrected": True})
    stored = EvidenceRevision.objects.get(pk=first.pk)
    with pytest.raises(TypeError, match="forward"):
        _move(stored, "valid")


def test_a_superseded_revision_can_still_be_invalidated(agent):
    first = make_evidence(agent.agent)
    add_evidence_revision(source=first.source, agent=agent.agent, content={"corrected": True})
    revision = invalidate_evidence_revision(revision=first, reason="the old run was wrong too")
    assert EvidenceRevision.objects.get(pk=revision.pk).status == "invalidated"
