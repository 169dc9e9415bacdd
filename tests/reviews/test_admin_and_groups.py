"""Role groups exist with their permissions; decisions are read-only in the admin."""

import pytest
from django.contrib.auth.models import Group

from tests.reviews.test_record_decision import decide


@pytest.mark.parametrize(
    ("group", "has", "lacks"),
    [
        ("reviewers", "view_proposal", "change_proposal"),
        ("auditors", "view_receipt", "add_reviewdecision"),
        ("agents-admin", "change_agent", "view_receipt"),
    ],
)
def test_role_groups_carry_their_permissions(db, group, has, lacks):
    codenames = set(Group.objects.get(name=group).permissions.values_list("codename", flat=True))
    assert has in codenames and lacks not in codenames


def test_auditors_cannot_change_anything(db):
    codenames = Group.objects.get(name="auditors").permissions.values_list("codename", flat=True)
    assert all(codename.startswith("view_") for codename in codenames)


def test_decision_admin_is_read_only_and_linked_from_receipts(admin_client, pm, factor_proposal):
    decision = decide(pm, factor_proposal)
    from tests.factories import apply_released

    receipt = apply_released(factor_proposal)
    change_url = f"/admin/reviews/reviewdecision/{decision.pk}/change/"
    assert admin_client.get("/admin/reviews/reviewdecision/?decision=approve").status_code == 200
    assert admin_client.get("/admin/reviews/reviewdecision/add/").status_code == 403
    admin_client.post(change_url, {"reason": "rewritten"})
    decision.refresh_from_db()
    assert decision.reason == "checked the IC table"
    receipt_page = admin_client.get(f"/admin/executor/receipt/{receipt.pk}/change/").content.decode()
    assert f"/admin/reviews/reviewdecision/?q={factor_proposal.pk}" in receipt_page
    assert change_url in receipt_page
