"""The demo seed produces every kind of verdict through the real services."""

from django.core.management import call_command

from proposals.models import OutboxEntry, Proposal


def test_seed_demo_loads_auto_gated_review_and_denied_proposals(db, capsys):
    call_command("seed_demo")
    assert "agent token (research-agent): cst_" in capsys.readouterr().out
    assert sorted(Proposal.objects.values_list("classification", flat=True)) == [
        "auto_apply",
        "auto_apply",
        "denied",
        "policy_gated",
        "review_required",
    ]
    assert OutboxEntry.objects.count() == 3
    call_command("seed_demo")  # a second run only issues a fresh token
    assert Proposal.objects.count() == 5
