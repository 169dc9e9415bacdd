"""After an erasure, records of authority name the subject by pseudonym only, and still verify.

Grants to act for the subject are revoked; they, the decisions made for the subject, their
history and the admin's log of the grants keep ``core.pseudonyms.pseudonym`` in place of the
id; the decision seals (old and new) and the receipt chain verify; nothing else changes.
"""

import hashlib
import hmac
import io

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from core.pseudonyms import pseudonym
from executor.offline import verify_export
from executor.pseudonymising import pseudonymise_subject
from proposals.models import Proposal
from reviews.models import ReviewDecision
from tenancy.models import Delegation
from tenancy.services import grant_delegation
from tests.database_scan import columns_holding
from tests.erasure.conftest import ask
from tests.erasure.test_erasure import _approve_all
from tests.factories import approve, create_payload, make_agent, make_evidence, submit
from tests.lifecycle.test_purge_scan import _remember


def _owner(subject: dict) -> str:
    return f"{subject['kind']}:{subject['id']}"


def _pending_about(agent, subject, statement: str = "prefers the short report") -> Proposal:
    """A proposal about ``subject`` that waits for review; its reviewers decide for the subject."""
    memory = {
        "subject": subject,
        "scope": "user",
        "type": "preference",
        "content": {"statement": statement},
        "sensitivity": "internal",
    }
    context = {"acting_for_subject": subject, "risk_level": "high"}
    proposal = submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)], context))
    assert proposal.status == "pending_review"
    return proposal


def _sealed_as_before(person, proposal: Proposal, owner: str) -> ReviewDecision:
    """A decision as ``record_decision`` sealed it before seals covered the owner (version 1)."""
    decision = ReviewDecision(
        tenant_id=proposal.tenant_id,
        proposal=proposal,
        actor=person,
        represented_owner=owner,
        decision="approve",
        reason="checked",
        action_digest=proposal.action_digest,
        proposal_version=proposal.version,
        policy_fingerprint=proposal.policy_fingerprint,
        channel="api",
        seal_version=1,
    )
    decision.seal = decision.compute_seal()
    decision.save(force_insert=True)
    return decision


def _reloaded(decision: ReviewDecision) -> ReviewDecision:
    return ReviewDecision.objects.select_related("actor").get(pk=decision.pk)


def test_erased_pseudonym_prints_the_hmac_an_auditor_can_recompute(settings):
    out = io.StringIO()
    call_command("erased_pseudonym", "--subject", "user:alice", stdout=out)
    expected = hmac.new(settings.SECRET_KEY.encode(), b"user:alice", hashlib.sha256).hexdigest()
    assert out.getvalue().strip() == f"erased:{expected}" == pseudonym("user", "alice")
    assert pseudonym("org", "alice") != pseudonym("user", "alice")


@pytest.mark.django_db(transaction=True)
def test_after_an_erasure_no_table_holds_the_subjects_id_and_the_certificate_names_what_was_rewritten(
    agent, api, subject, reviewers, client
):
    _remember(agent, reviewers, subject, "prefers summaries on fridays", {})  # decided for the subject
    pending = _pending_about(agent, subject)
    approve(reviewers[0], pending)  # withdrawn by the erasure; its decision stays, for the subject
    operator = User.objects.create_superuser("erasure-admin", password="pw")
    client.force_login(operator)
    added = client.post(
        reverse("admin:tenancy_delegation_add"),
        {
            "agent": str(agent.agent.pk),
            "subject_kind": "user",
            "subject_id": subject["id"],
            "reason": "asked",
        },
    )
    assert added.status_code == 302
    logged = LogEntry.objects.get(object_repr__contains=subject["id"])
    decisions = list(ReviewDecision.objects.filter(represented_owner=_owner(subject)))
    grants = list(Delegation.objects.filter(subject_id=subject["id"]))
    assert len(decisions) >= 2 and len(grants) == 2

    erasure_id = ask(api, subject).json()["erasure_id"]
    assert _approve_all(erasure_id, reviewers).outcome == "applied"

    erased = pseudonym(subject["kind"], subject["id"])
    certificate = api.get(f"/api/v1/erasures/{erasure_id}/").json()["certificate"]
    assert columns_holding(subject["id"]) == {}
    assert certificate["scan"]["found"] == {} and certificate["scan"]["retained"] == {}
    assert certificate["clean"] is True and erased not in str(certificate)
    rewritten = {item["table"]: item["ids"] for item in certificate["pseudonymised"]}
    assert rewritten["reviews_reviewdecision"] == sorted(str(d.pk) for d in decisions)
    assert rewritten["tenancy_delegation"] == sorted(str(g.pk) for g in grants)
    assert rewritten["django_admin_log"] == [str(logged.pk)]
    assert {"reviews_historicalreviewdecision", "tenancy_historicaldelegation"} <= set(rewritten)
    assert certificate["revoked_grants"] == sorted(str(g.pk) for g in grants)
    out = io.StringIO()
    call_command("erased_pseudonym", "--subject", _owner(subject), stdout=out)
    assert out.getvalue().strip() == erased  # how an auditor confirms whose rows these were
    assert LogEntry.objects.get(pk=logged.pk).object_repr == f"{agent.agent} acts for {erased}"
    for decision in decisions:
        assert _reloaded(decision).represented_owner == erased and _reloaded(decision).has_valid_seal()
    assert set(
        ReviewDecision.history.filter(id__in=[d.pk for d in decisions]).values_list(
            "represented_owner", flat=True
        )
    ) == {erased}
    for grant in Delegation.objects.filter(pk__in=[g.pk for g in grants]):
        assert grant.subject_id == erased and grant.revoked_at is not None
        latest = grant.history.order_by("-history_date", "-history_id").first()
        assert (latest.history_type, latest.subject_id, latest.revoked_at) == ("~", erased, grant.revoked_at)
    call_command("verify_receipts")
    lines = b"".join(api.get(f"/api/v1/erasures/{erasure_id}/certificate").streaming_content)
    assert verify_export(lines.decode().splitlines()).receipts == 2


@pytest.mark.django_db(transaction=True)
def test_other_subjects_other_agents_and_other_tenants_keep_their_records(
    agent, api, subject, reviewers, other_agent
):
    helper = make_agent(agent.tenant.name, "helper-agent", acts_for=({"kind": "user", "id": "pm-alice"},))
    elsewhere = grant_delegation(agent=other_agent.agent, subject=subject)  # same id, another tenant
    pending = _pending_about(agent, subject)
    others = _pending_about(agent, {"kind": "user", "id": "pm-alice"})
    for_alice = approve(reviewers[0], others)
    for_subject = approve(reviewers[1], pending)
    before = {
        grant.pk: (grant.subject_id, grant.revoked_at)
        for grant in Delegation.objects.exclude(subject_id=subject["id"], tenant=agent.tenant)
    }

    erasure_id = ask(api, subject).json()["erasure_id"]
    assert _approve_all(erasure_id, reviewers).outcome == "applied"

    after = {
        grant.pk: (grant.subject_id, grant.revoked_at) for grant in Delegation.objects.filter(pk__in=before)
    }
    assert after == before and elsewhere.pk in after and helper.agent.delegations.live().count() == 1
    assert _reloaded(for_alice).represented_owner == "user:pm-alice" and _reloaded(for_alice).has_valid_seal()
    assert _reloaded(for_subject).represented_owner == pseudonym("user", subject["id"])
    assert Delegation.objects.live().filter(agent=agent.agent, subject_id="pm-alice").exists()
    assert columns_holding(subject["id"]) == {  # the other tenant's grant is another tenant's record
        "tenancy_delegation": ["subject_id"],
        "tenancy_historicaldelegation": ["subject_id"],
    }
    assert Delegation.objects.filter(subject_id=subject["id"]).get() == elsewhere


@pytest.mark.django_db
def test_decision_seals_old_and_new_verify_after_the_owner_is_pseudonymised(agent, subject, reviewers):
    proposal = _pending_about(agent, subject)
    old = _sealed_as_before(reviewers[0], proposal, _owner(subject))
    new = approve(reviewers[1], proposal)
    assert (old.seal_version, new.seal_version, new.represented_owner) == (1, 2, _owner(subject))
    assert old.has_valid_seal() and new.has_valid_seal()

    pseudonymise_subject(tenant_id=agent.tenant.pk, subject=subject)

    old, new = _reloaded(old), _reloaded(new)
    assert old.represented_owner == new.represented_owner == pseudonym("user", subject["id"])
    assert old.has_valid_seal() and new.has_valid_seal()


@pytest.mark.django_db
def test_a_version_2_seal_binds_whom_the_decision_was_for(agent, subject, reviewers, settings):
    decision = _reloaded(approve(reviewers[0], _pending_about(agent, subject)))
    decision.represented_owner = "user:pm-alice"
    assert not decision.has_valid_seal()
    decision.represented_owner = pseudonym("user", subject["id"])
    assert decision.has_valid_seal()
    decision.seal_version = 1  # passed off as an older seal that did not cover the owner
    assert not decision.has_valid_seal()
    decision.seal_version = 2
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "rotated-" + settings.SECRET_KEY
    decision.represented_owner = _owner(subject)
    assert decision.has_valid_seal()  # sealed under the old key, the owner's pseudonym under it too


@pytest.mark.django_db
def test_pseudonymising_costs_the_same_queries_for_any_number_of_records(agent, reviewers):
    def arranged(name: str, count: int) -> dict:
        subject = {"kind": "user", "id": f"{name}-subject"}
        for n in range(count):
            helper = make_agent(agent.tenant.name, f"{name}-helper-{n}", acts_for=(subject,))
            approve(reviewers[0], _pending_about(helper, subject))
        return subject

    few, many = arranged("few", 1), arranged("many", 4)
    ContentType.objects.get_for_model(Delegation)  # cached for the process, as in a running worker
    with CaptureQueriesContext(connection) as one:
        pseudonymise_subject(tenant_id=agent.tenant.pk, subject=few)
    with CaptureQueriesContext(connection) as four:
        pseudonymise_subject(tenant_id=agent.tenant.pk, subject=many)
    assert len(four) == len(one)
    assert Delegation.objects.filter(subject_id=pseudonym("user", "many-subject")).count() == 4


@pytest.mark.django_db
def test_a_decision_exported_before_seals_had_versions_reads_back_as_version_1(agent, subject, reviewers):
    from django.core import serializers

    old = _sealed_as_before(reviewers[0], _pending_about(agent, subject), _owner(subject))
    row = serializers.serialize("python", [old])[0]
    del row["fields"]["seal_version"]  # as an export written before the column existed
    (read_back,) = serializers.deserialize("python", [row])
    assert read_back.object.seal_version == 1 and read_back.object.has_valid_seal()


@pytest.mark.django_db
def test_a_decision_sealed_before_a_key_rotation_takes_its_keys_pseudonym_and_still_verifies(
    agent, subject, reviewers, settings
):
    before = approve(reviewers[0], _pending_about(agent, subject))
    old_key = settings.SECRET_KEY
    settings.SECRET_KEY_FALLBACKS = [old_key]
    settings.SECRET_KEY = "rotated-" + old_key
    after = approve(reviewers[1], _pending_about(agent, subject, "prefers the long report"))

    pseudonymise_subject(tenant_id=agent.tenant.pk, subject=subject)

    before, after = _reloaded(before), _reloaded(after)
    assert before.represented_owner == pseudonym("user", subject["id"], secret=old_key)
    assert after.represented_owner == pseudonym("user", subject["id"])
    assert before.has_valid_seal() and after.has_valid_seal()
    erased_grant = Delegation.objects.filter(agent=agent.agent, subject_id=pseudonym("user", subject["id"]))
    assert erased_grant.exists()  # a grant carries no seal: the current key's pseudonym
