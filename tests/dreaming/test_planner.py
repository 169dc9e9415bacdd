"""The default planner is pure and deterministic, and its plans pass the server's checks."""

import pytest

from maintenance.dreaming.checks import PlanRefused, check_plan, high_risk
from maintenance.dreaming.planner import Action, Member, RulePlanner, Window, near_duplicate_clusters
from maintenance.dreaming.windows import FrozenWindow

ALICE = {"kind": "user", "id": "pm-alice"}


def _member(n: int, statement: str, *, entities=(), about=(), sensitivity="internal", **content) -> Member:
    return Member(
        memory_id=f"00000000-0000-0000-0000-00000000000{n}",
        revision=1,
        type="preference",
        scope="user",
        subject=ALICE,
        sensitivity=sensitivity,
        content={"statement": statement, **content},
        created_at=f"2026-11-0{n}T00:00:00+00:00",
        entities=tuple(entities),
        about=tuple(about),
    )


def _frozen(members, relations=("supersedes",)) -> FrozenWindow:
    window = Window("schedule", tuple(members), 8, relations)
    return FrozenWindow(None, window, ALICE, "user", "preference", "proposal_only", 1, {})


def test_duplicates_merge_into_the_oldest_and_a_contradiction_updates_a_non_survivor():
    members = [
        _member(1, "Alice wants weekly summaries", preference_key="cadence", preference_value="weekly"),
        _member(2, "alice wants weekly summaries!", preference_key="cadence", preference_value="weekly"),
        _member(3, "Alice wants daily summaries now", preference_key="cadence", preference_value="daily"),
    ]
    frozen = _frozen(members)
    plan = RulePlanner().plan(frozen.window)
    assert [(a.kind, a.target[-1], a.other[-1:]) for a in plan] == [("merge", "1", "2")]
    # The older survivor is kept as it is: no update may race its lineage link.
    assert check_plan(frozen, plan) == plan
    assert RulePlanner().plan(frozen.window) == plan  # deterministic


def test_a_contradiction_closes_the_older_statement_and_is_high_risk():
    members = [
        _member(1, "Alice wants weekly summaries", preference_key="cadence", preference_value="weekly"),
        _member(2, "Alice now wants daily summaries", preference_key="cadence", preference_value="daily"),
    ]
    frozen = _frozen(members)
    (update,) = RulePlanner().plan(frozen.window)
    assert (update.kind, update.target, update.fields) == (
        "update",
        members[0].memory_id,
        {"valid_to": members[1].created_at},
    )
    assert check_plan(frozen, [update]) and high_risk(frozen, update)


def test_numbers_and_keys_guard_near_duplicates():
    a = _member(1, "Alice wants the Sharpe report at 9 every Monday morning please")
    b = _member(2, "Alice wants the Sharpe report at 10 every Monday morning please")
    c = _member(3, "Alice wants the Sharpe report at 9 every Monday morning")
    assert near_duplicate_clusters([a, b]) == []  # a differing number is never a merge
    assert near_duplicate_clusters([a, b, c]) == [[a, c]]
    keyed = _member(
        4, "Alice wants the Sharpe report at 9 every Monday morning", preference_key="k", preference_value=1
    )
    assert near_duplicate_clusters([c, keyed]) == []


def test_members_naming_one_entity_are_linked_only_if_the_type_allows_about():
    members = [
        _member(1, "Alice likes ACME reports", entities=["e1"]),
        _member(2, "ACME memos go to Alice", entities=["e1"]),
    ]
    assert RulePlanner().plan(_frozen(members).window) == []
    links = RulePlanner().plan(_frozen(members, ("supersedes", "about")).window)
    assert [(a.kind, a.target, a.other, a.relation) for a in links] == [
        ("link", members[0].memory_id, "entity:e1", "about"),
        ("link", members[1].memory_id, "entity:e1", "about"),
    ]


def test_a_member_already_about_the_entity_is_not_linked_again():
    members = [
        _member(1, "Alice likes ACME reports", entities=["e1"], about=("e1",)),
        _member(2, "ACME memos go to Alice", entities=["e1"]),
        _member(3, "Bob reads ACME memos", entities=["e1", "e2"]),
    ]
    links = RulePlanner().plan(_frozen(members, ("about",)).window)
    assert [a.target for a in links] == [members[1].memory_id, members[2].memory_id]
    assert {a.other for a in links} == {"entity:e1"}  # e2 is named once: no co-occurrence


def test_the_plan_is_cut_at_the_budget():
    members = [_member(n, "Alice prefers weekly summaries") for n in range(1, 10)]
    window = Window("near_duplicate", tuple(members), 3, ())
    assert len(RulePlanner().plan(window)) == 3


def test_an_entity_end_must_be_named_by_a_cited_member_and_linked_about():
    a = _member(1, "Alice likes ACME reports", entities=["e1"])
    b = _member(2, "Bob reads memos", entities=["e2"])
    frozen = _frozen([a, b], ("about", "supports"))
    good = Action("link", (a.memory_id,), a.memory_id, "entity:e1", "about")
    assert check_plan(frozen, [good]) == [good]
    for hostile in (
        Action("link", (a.memory_id,), a.memory_id, "entity:e2", "about"),  # a does not name e2
        Action("link", (a.memory_id,), a.memory_id, "entity:e1", "supports"),  # entity ends are about only
        Action("merge", (a.memory_id,), a.memory_id, "entity:e1"),  # only a link may end at an entity
        Action("link", (a.memory_id,), a.memory_id, "entity:", "about"),
    ):
        with pytest.raises(PlanRefused):
            check_plan(frozen, [hostile])
