"""The grants are enough: the app's own code runs end to end with Django connected as each role.

The web steps go over HTTP (agents, a reviewer's token, a session login);
the executor steps call the services its Celery tasks call. Only arranging
(people, tokens, "time passes") runs as the owner.
"""

import contextlib
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from executor.models import Receipt
from executor.services import apply_entries
from maintenance.compaction import propose_compactions
from maintenance.dormancy import propose_dormancy
from maintenance.retention import propose_retention_expiries
from memory_core.models import AccessEvent, Memory
from proposals.models import OutboxEntry
from proposals.services import expire_overdue_reviews
from tenancy.services import grant_delegation, issue_user_token
from tests.factories import create_payload, factor_fact, make_person, owner_context, user_preference

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
WORKER = {"host": "test", "pid": 0, "task_id": "roles"}


@contextlib.contextmanager
def connected_as(role: str):
    """Run the block on a fresh connection as ``role``; back to the owner afterwards."""
    settings = connection.settings_dict
    owner = settings["USER"]
    connection.close()
    settings["USER"] = role
    try:
        yield
    finally:
        connection.close()
        settings["USER"] = owner


def _ok(response, status=(200, 201)) -> dict:
    assert response.status_code in (status if isinstance(status, tuple) else (status,)), response.content
    return response.json()


def _evidence(api, ref: str) -> dict:
    body = {"kind": "backtest_run", "external_ref": ref, "content": {"ic": 0.02, "ref": ref}}
    return _ok(api.post("/api/v1/evidence/", body, format="json"))


def _binding(revision: dict) -> list[dict]:
    return [{k: revision[k] for k in ("evidence_id", "revision", "content_hash")}]


def _submit(api, key: str, payload: dict) -> dict:
    return _ok(api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=key))


def _drain() -> int:
    pending = OutboxEntry.objects.exclude(status__in=["done", "dead"]).values_list("id", flat=True)
    return apply_entries(entry_ids=list(pending), worker=WORKER)


def _decide(reviewer, proposal: dict, decision: str = "approve") -> None:
    body = {"decision": decision, "reason": "checked", "action_digest": proposal["action_digest"]}
    _ok(reviewer.post(f"/api/v1/proposals/{proposal['id']}/decisions/", body, format="json"))


def test_the_web_and_executor_processes_run_on_their_grants_alone(agent, other_agent):
    call_command("setup_db_roles", verbosity=0)
    agent.agent.can_invalidate_evidence = True
    agent.agent.save(update_fields=["can_invalidate_evidence"])
    pm, pm2 = make_person("pm-role", agent.tenant), make_person("pm2-role", agent.tenant)
    reviewer, reviewer2 = APIClient(), APIClient()
    reviewer.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_user_token(user=pm)[1]}")
    reviewer2.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_user_token(user=pm2)[1]}")
    api, other = agent.client, other_agent.client
    subject = {"kind": "user", "id": "pm-alice"}
    grant_delegation(agent=other_agent.agent, subject={"kind": "user", "id": "bob"})

    with connected_as("custodian_web"):
        backtest = _evidence(api, "run-a")
        preference = _submit(
            api, "pref", create_payload(user_preference(), []) | {"evidence": _binding(backtest)}
        )
        fact = _submit(api, "fact", create_payload(factor_fact(), []) | {"evidence": _binding(backtest)})
        _decide(reviewer, fact)
        second = _submit(api, "fact2", create_payload(factor_fact(dedupe_key="f2"), []) | {"evidence": []})
        _decide(reviewer, second, "request_changes")
        amended = create_payload(factor_fact(dedupe_key="f2", confidence=0.5), [])
        amended["evidence"] = _binding(_evidence(api, "run-b"))
        _ok(api.post(f"/api/v1/proposals/{second['id']}/amend/", amended, format="json"))
        _ok(api.post(f"/api/v1/proposals/{second['id']}/withdraw/"))
        temporary = user_preference(ttl_seconds=60, subject={"kind": "user", "id": "bob"})
        ttl = create_payload(temporary, [], owner_context(temporary["subject"]))
        _submit(other, "ttl", ttl | {"evidence": _binding(_evidence(other, "run-c"))})
        assert api.get("/api/v1/memories/00000000-0000-4000-8000-000000000000/").status_code == 404
        session = Client()
        assert session.login(username="pm-role", password="pw")
        assert session.get("/review/").status_code == 200

    with connected_as("custodian_executor"):
        assert _drain() == 3  # the preference, the approved fact, the other tenant's ttl note
    assert Memory.objects.count() == 3
    Memory.objects.filter(tenant=other_agent.tenant).update(expires_at=timezone.now() - timedelta(minutes=1))

    with connected_as("custodian_web"):
        search = {
            "query": "weekly",
            "filters": {"subject": subject},
            "policy_context": {"acting_for_subject": subject},
        }
        recalled = _ok(api.post("/api/v1/recall/search", search, format="json"))
        served = recalled["results"][0]["memory"]
        vote = {"memory_id": served["memory_id"], "revision": served["revision"], "verdict": "useful"}
        _ok(api.post(f"/api/v1/recall/{recalled['recall_id']}/feedback", vote, format="json"))
        _ok(api.get(f"/api/v1/memories/{preference['memory_id']}/?acting_for=user:pm-alice"))
        source = backtest["evidence_id"]
        _ok(api.post(f"/api/v1/evidence/{source}/revisions/1/invalidate/", {"reason": "bug"}, format="json"))
        _ok(api.post(f"/api/v1/evidence/{source}/revisions/", {"content": {"ic": 0.01}}, format="json"))
        memory = Memory.objects.get(pk=preference["memory_id"])
        delete = {"action": "delete", "memory_id": str(memory.id), "base_revision": memory.revision}
        delete |= {"reason": "wrong", "policy_context": owner_context()}

    with connected_as("custodian_executor"):
        assert propose_retention_expiries() == 1  # the other tenant's first system agent, too
        assert propose_dormancy() == 0  # the dormancy sweep reads memories, reads and registrations
        assert propose_compactions() == 0  # so does the compaction sweep (no capacity registered)
        expire_overdue_reviews()
        _drain()
    assert Receipt.objects.filter(outcome="unauthorised_release").count() == 0

    with connected_as("custodian_web"):
        memory.refresh_from_db()
        delete["base_revision"] = memory.revision
        _submit(api, "delete", delete)
    with connected_as("custodian_executor"):
        _drain()
    with connected_as("custodian_web"):
        memory.refresh_from_db()
        purge = _submit(api, "purge", delete | {"action": "purge", "base_revision": memory.revision})
        _decide(reviewer, purge)
        _decide(reviewer2, purge)
    with connected_as("custodian_executor"):
        assert _drain() == 1
    assert Receipt.objects.get(proposal_id=purge["id"]).outcome == "applied"
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not AccessEvent.objects.filter(query="weekly").exists()  # the purge scrubbed its search
    assert Memory.objects.get(tenant=other_agent.tenant).state == "expired"

    with connected_as("custodian_web"):
        note = user_preference(content={"statement": "Alice reads the IC table first"})
        failing = _submit(api, "dead", create_payload(note, []) | {"evidence": _binding(_evidence(api, "d"))})
    dead = OutboxEntry.objects.filter(proposal_id=failing["id"])
    dead.update(status=OutboxEntry.Status.DEAD)  # arranged: as if it had failed five times
    User.objects.create_superuser("root", password="pw")
    with connected_as("custodian_web"):
        admin = Client()
        assert admin.login(username="root", password="pw")
        requeue = {"action": "requeue", "_selected_action": [str(dead.get().pk)]}
        assert admin.post("/admin/proposals/outboxentry/", requeue).status_code == 302
    with connected_as("custodian_executor"):
        assert _drain() == 1
    assert Receipt.objects.filter(outbox_entry__in=dead, outcome="requeued").count() == 1
    assert Receipt.objects.get(outbox_entry__requeued_from__in=dead).outcome == "applied"

    call_command("verify_receipts")
