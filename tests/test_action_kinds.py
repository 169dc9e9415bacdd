"""Every action kind has both halves: freezing (``proposals.kinds``) and effect (``executor.effects``)."""

from executor.effects import EFFECTS, Effect
from proposals.kinds import KINDS, KindSpec
from proposals.models import Proposal


def test_every_action_has_a_freezing_half_and_nothing_else_does():
    assert set(KINDS) == set(Proposal.Action)
    assert all(isinstance(spec, KindSpec) for spec in KINDS.values())


def test_every_action_has_an_executor_half_and_nothing_else_does():
    assert set(EFFECTS) == set(Proposal.Action)
    assert all(isinstance(effect, Effect) for effect in EFFECTS.values())


def test_every_effect_verifies_and_applies_on_its_own():
    """No entry falls back to the base class, which has no check and no write."""
    for action, effect in EFFECTS.items():
        assert type(effect).verify is not Effect.verify, action
        assert type(effect).apply is not Effect.apply, action
