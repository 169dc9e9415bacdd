"""The long-chat set is deterministic, sized like LoCoMo, and every question's gold is consistent."""

import itertools
import re
import statistics

import pytest

from bench.conversations import CURRENT, MULTI_HOP
from bench.long_chats import ADVERSARIAL, KINDS, generate
from bench.quality import adjacency, evaluate

_WORD = re.compile(r"[a-z0-9']+")


@pytest.fixture(scope="module")
def full():
    return generate(conversations=10)


def _turns(dataset):
    return {turn.key: turn for turn in dataset.turns}


def test_same_seed_gives_the_same_set_and_another_seed_another():
    assert generate(conversations=2, seed=5) == generate(conversations=2, seed=5)
    assert generate(conversations=2, seed=5).turns != generate(conversations=2, seed=6).turns


def test_full_size_is_ten_long_chats_of_twenty_to_thirty_sessions(full):
    assert len(full.conversations) == 10
    assert 5_000 <= len(full.turns) <= 6_500
    assert len(full.questions) >= 1_000
    assert {question.category for question in full.questions} == set(KINDS)
    for conversation in full.conversations:
        assert 20 <= len(conversation.sessions) <= 30
        assert 15 <= statistics.median(len(session) for session in conversation.sessions) <= 30


def test_sessions_are_days_apart_and_turns_in_order(full):
    for conversation in full.conversations:
        starts = [session[0].occurred_at for session in conversation.sessions]
        assert all((later.date() - earlier.date()).days >= 3 for earlier, later in itertools.pairwise(starts))
        for session in conversation.sessions:
            times = [turn.occurred_at for turn in session]
            assert times == sorted(times) and len(set(times)) == len(times)
            assert all(turn.statement.startswith(f"{turn.speaker}: ") for turn in session)
            assert len({turn.statement for turn in session}) == len(session)  # the loader keys by it


def test_the_unnamed_set_is_the_same_turns_and_questions_without_the_speakers_name():
    named, unnamed = generate(conversations=2), generate(conversations=2, names_in_text=False)
    assert unnamed.questions == named.questions
    assert [(t.key, t.speaker, t.occurred_at) for t in unnamed.turns] == [
        (t.key, t.speaker, t.occurred_at) for t in named.turns
    ]
    for was, now in zip(named.turns, unnamed.turns, strict=True):
        assert was.statement == f"{now.speaker}: {now.statement}"


def test_every_gold_and_superseded_key_is_a_turn(full):
    keys = _turns(full)
    for question in full.questions:
        assert question.gold and set(question.gold) <= set(keys), question
        assert set(question.superseded) <= set(keys), question


def test_multi_hop_gold_is_two_to_four_turns_from_two_sessions_or_more(full):
    turns = _turns(full)
    multi = [q for q in full.questions if q.category == MULTI_HOP]
    assert multi
    for question in multi:
        assert 2 <= len(question.gold) <= 4, question
        assert len({turns[key].session for key in question.gold}) >= 2, question


def test_current_gold_is_one_turn_newer_than_each_superseded_one_by_the_same_speaker(full):
    turns = _turns(full)
    current = [q for q in full.questions if q.category == CURRENT]
    assert current
    for question in current:
        (gold,) = question.gold
        assert question.superseded, question
        for stale in question.superseded:
            assert turns[stale].occurred_at < turns[gold].occurred_at
            assert turns[stale].speaker == turns[gold].speaker


def test_adversarial_asks_about_the_speaker_who_did_not_do_it(full):
    turns = _turns(full)
    speakers = {c.number: set(c.speakers) for c in full.conversations}
    adversarial = [q for q in full.questions if q.category == ADVERSARIAL]
    assert adversarial
    for question in adversarial:
        teller = turns[question.gold[-1]]
        pair = speakers[int(teller.session.split("-")[0][1:])]
        (named,) = {name for name in pair if re.search(rf"\b{name}\b", question.text)}
        assert named != teller.speaker, question


def test_question_never_copies_a_gold_turn(full):
    turns = _turns(full)
    for question in full.questions:
        asked = _WORD.findall(question.text.lower())
        runs = {tuple(asked[i : i + 5]) for i in range(len(asked) - 4)}
        for key in question.gold:
            said = turns[key].statement.split(": ", 1)[1]
            assert said.lower() not in question.text.lower()
            words = _WORD.findall(said.lower())
            assert not runs & {tuple(words[i : i + 5]) for i in range(len(words) - 4)}, (question, said)


def test_facts_are_often_told_over_two_turns_among_mostly_chit_chat(full):
    turns = _turns(full)
    cited = {key for question in full.questions for key in question.gold}
    assert 0.15 < len(cited) / len(turns) < 0.5  # most turns are greetings, reactions and small talk
    pairs = [q for q in full.questions if len(q.gold) == 2 and len({turns[k].speaker for k in q.gold}) == 2]
    assert len(pairs) > 100  # the listener asks, the teller answers referring back


def test_small_sets_still_have_every_structure():
    small = generate(conversations=1, sessions=4)
    assert {q.category for q in small.questions} >= {MULTI_HOP, CURRENT}
    with pytest.raises(ValueError):
        generate(conversations=1, sessions=3)


def test_scores_group_the_long_chat_kinds(full):
    questions = full.questions[:60]
    table = evaluate(questions, [list(q.gold) for q in questions])
    assert table["all"]["recall@10"] == 1.0 and set(table) == {q.category for q in questions} | {"all"}


def test_adjacency_counts_only_the_turns_just_before_and_after(full):
    session = full.conversations[0].sessions[0]
    middle, before, after, far = session[3].key, session[2].key, session[4].key, session[7].key
    assert adjacency(full, [(middle, {"before": [before], "after": [after]})])["adjacent"] == 1.0
    wrong = adjacency(full, [(middle, {"before": [far], "after": []})])
    assert wrong["adjacent"] == 0.0 and wrong["missing"] == 1.0
