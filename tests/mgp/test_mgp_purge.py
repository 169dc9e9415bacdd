"""A purge over REST takes what MGP kept about the memory too: its id, extensions, tasks and subject.

The memory is written, updated and imported over MGP (an external id, vendor
extensions, write and import tasks acting for its subject, a refusal naming
its id in the MGP audit), then deleted and
purged over REST; every table is scanned afterwards, as the lifecycle tests
scan after a REST-only purge.
"""

import contextlib
import uuid

import psycopg
import pytest
from django.core.management import call_command

from executor.models import Receipt
from memory_core.models import Memory
from mgp.models import MgpEvent, MgpRecord, MgpTask
from proposals.models import Proposal
from tenancy.services import grant_delegation
from tests.database_scan import tables_holding
from tests.executor.test_roles_run_the_app import connected_as
from tests.factories import AgentHandle, apply_released, approve, make_person, owner_context
from tests.mgp.conftest import call, memory, settle
from tests.workers import connect_as

GRANT_TABLES = ["tenancy_delegation", "tenancy_historicaldelegation"]


def _over_rest(handle: AgentHandle, verb: str, row: Memory, subject: dict, reviewers, executor) -> Receipt:
    row.refresh_from_db()
    body = {
        "action": verb,
        "memory_id": str(row.pk),
        "base_revision": row.revision,
        "reason": "the person asked",
        "policy_context": owner_context(subject),
    }
    response = handle.client.post(
        "/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY=f"{verb}-{uuid.uuid4().hex}"
    )
    assert response.status_code in (200, 201, 202), response.content
    proposal = Proposal.objects.get(pk=response.json()["id"])
    for reviewer in reviewers[: proposal.required_approvals]:
        approve(reviewer, proposal)
    with executor():
        return apply_released(proposal)


def _written_over_mgp(handle: AgentHandle, secrets: dict, subject: dict) -> Memory:
    """A memory with extensions, a write task, a refused rename, an extensions-only update and an import."""
    mem = memory(
        secrets["external_id"],
        subject=subject,
        content={"statement": f"Alice's secret preference {secrets['marker']}", "theme": "dark"},
        extensions={"acme:tag": secrets["extension"]},
    )
    task = settle(call(handle, "write", {"memory": mem}, "write", subject=subject))
    done = handle.client.post(
        "/mgp/tasks/get", {"request_id": "p", "task_id": task["task_id"]}, format="json"
    )
    assert done.json()["data"]["task"]["status"] == "completed", done.json()
    stored = Memory.objects.get()
    renamed = {"memory_id": secrets["external_id"], "patch": {"type": "semantic_fact"}}
    refused = call(handle, "update", renamed, "update", subject=subject)
    assert refused.status_code == 400, refused.json()
    assert MgpEvent.objects.filter(target=secrets["external_id"]).exists()  # the refusal names the id
    patch = {"extensions": {"acme:note": secrets["extension"]}}
    update = call(
        handle, "update", {"memory_id": secrets["external_id"], "patch": patch}, "update", subject=subject
    )
    assert update.status_code == 200, update.json()
    imported = call(
        handle,
        "import",
        {"memories": [mem], "execution_mode": "async", "merge_hint": {"strategy": "dedupe"}},
        "write",
        subject=subject,
    )
    task_id = imported.json()["data"]["task"]["task_id"]
    poll = handle.client.post("/mgp/tasks/get", {"request_id": "p", "task_id": task_id}, format="json")
    assert poll.json()["data"]["task"]["result"]["memory_ids"] == [secrets["external_id"]], poll.json()
    return stored


def _purge_leaves_nothing(runtime: AgentHandle, executor=contextlib.nullcontext) -> None:
    subject = {"kind": "user", "id": f"subj{uuid.uuid4().hex}"}
    grant_delegation(agent=runtime.agent, subject=subject)
    secrets = {
        "marker": f"zq{uuid.uuid4().hex}",
        "external_id": f"mem_ext{uuid.uuid4().hex}",
        "extension": f"ext{uuid.uuid4().hex}",
        "subject_id": subject["id"],
    }
    stored = _written_over_mgp(runtime, secrets, subject)
    assert MgpTask.objects.filter(subject_id=subject["id"]).exists()
    assert all(tables_holding(secret) for secret in secrets.values())
    reviewers = [make_person("r1", runtime.tenant), make_person("r2", runtime.tenant)]
    assert _over_rest(runtime, "delete", stored, subject, reviewers, executor).outcome == "applied"

    receipt = _over_rest(runtime, "purge", stored, subject, reviewers, executor)

    assert receipt.outcome == "applied", receipt.effects
    left = {name: sorted(tables_holding(secret)) for name, secret in secrets.items()}
    assert left == {"marker": [], "external_id": [], "extension": [], "subject_id": GRANT_TABLES}
    assert not MgpRecord.objects.exists()
    removed = receipt.effects["purged"]
    assert removed["mgp.MgpRecord"] == 1
    assert removed["mgp.MgpTask"] == 2  # the write task and the import that named the memory


@pytest.mark.django_db
def test_a_rest_purge_leaves_nothing_mgp_kept_about_the_memory(runtime):
    _purge_leaves_nothing(runtime)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_executor_role_purges_what_mgp_kept(runtime):
    """The purge applied by the executor connected as ``custodian_executor``: its grants suffice."""
    call_command("setup_db_roles", verbosity=0)
    _purge_leaves_nothing(runtime, executor=lambda: connected_as("custodian_executor"))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_only_change_to_an_mgp_event_is_the_executors_purge_scrub_of_its_target(runtime):
    call_command("setup_db_roles", verbosity=0)
    refused = call(runtime, "update", {"memory_id": "mem_nowhere", "patch": {"type": "x"}}, "update")
    assert refused.status_code >= 400 and MgpEvent.objects.filter(target="mem_nowhere").exists()
    for role in (None, "custodian_web", "custodian_executor"):
        with connect_as(role) as conn:
            for statement in ("UPDATE mgp_mgpevent SET code = 'rewritten'", "DELETE FROM mgp_mgpevent"):
                with pytest.raises((psycopg.errors.InsufficientPrivilege, psycopg.errors.RaiseException)):
                    conn.execute(statement)
    with connect_as("custodian_web") as web, pytest.raises(psycopg.errors.InsufficientPrivilege):
        web.execute("UPDATE mgp_mgpevent SET target = ''")
    with connect_as("custodian_executor") as executor:
        assert executor.execute("UPDATE mgp_mgpevent SET target = '' WHERE target <> ''").rowcount == 1
