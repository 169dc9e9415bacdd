"""Evidence revisions are numbered, immutable, and supersede each other."""

import pytest

from evidence.models import EvidenceRevision
from provenance.services import add_evidence_revision
from tests.factories import make_evidence


def test_new_revision_supersedes_the_previous_one(agent):
    first = make_evidence(agent.agent, content={"ic": 0.03})
    second = add_evidence_revision(source=first.source, agent=agent.agent, content={"ic": 0.01})
    first.refresh_from_db()
    assert (first.revision, first.status) == (1, "superseded")
    assert (second.revision, second.status) == (2, "valid")
    assert first.source.latest_revision == 2


def test_content_hash_is_sha256_of_canonical_json(agent):
    a = make_evidence(agent.agent, content={"b": 1, "a": [1.0, "x"]})
    b = make_evidence(agent.agent, content={"a": [1.0, "x"], "b": 1})
    assert a.content_hash == b.content_hash
    assert len(a.content_hash) == 64


def test_revision_content_cannot_be_changed(agent):
    revision = make_evidence(agent.agent)
    revision.content = {"rewritten": True}
    with pytest.raises(TypeError):
        revision.save()
    assert EvidenceRevision.objects.get(pk=revision.pk).content != {"rewritten": True}


def test_evidence_api_registers_revises_and_reads(api):
    created = api.post(
        "/api/v1/evidence/",
        {"kind": "commit", "external_ref": "git:abc123", "content": {"sha": "abc123"}},
        format="json",
    )
    assert created.status_code == 201
    evidence_id = created.json()["evidence_id"]
    revised = api.post(
        f"/api/v1/evidence/{evidence_id}/revisions/", {"content": {"sha": "def456"}}, format="json"
    )
    detail = api.get(f"/api/v1/evidence/{evidence_id}/").json()
    assert revised.json()["revision"] == 2
    assert [(r["revision"], r["status"]) for r in detail["revisions"]] == [(1, "superseded"), (2, "valid")]


def test_registering_the_same_ref_twice_conflicts(api):
    body = {"kind": "commit", "external_ref": "git:same", "content": {}}
    first = api.post("/api/v1/evidence/", body, format="json")
    second = api.post("/api/v1/evidence/", body, format="json")
    assert second.status_code == 409
    assert second.json()["code"] == "evidence_exists"
    assert second.json()["evidence_id"] == first.json()["evidence_id"]
