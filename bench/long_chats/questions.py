"""The questions asked about a conversation, each with the labels of its gold turns.

Kinds, as in LoCoMo: ``single_hop`` (one fact, other words), ``multi_hop``
(the teller's turns from two to four sessions), ``temporal`` ("when did …":
the turn telling it, whose session date answers it), ``open_domain`` (an
inference from the turns that hint at a trait), ``current`` (a changed fact:
the newest telling is gold, the older ones superseded) and ``adversarial``
(asks about the other speaker what only the first one did; gold is the
turns of the one who did it).
"""

import random
from dataclasses import dataclass

from bench.conversations import CURRENT, MULTI_HOP, SINGLE_HOP, TEMPORAL, Question
from bench.long_chats import phrasing as P
from bench.long_chats.episodes import Told, person_slots
from bench.long_chats.people import Persona

OPEN_DOMAIN, ADVERSARIAL = "open_domain", "adversarial"
KINDS = (SINGLE_HOP, MULTI_HOP, TEMPORAL, OPEN_DOMAIN, CURRENT, ADVERSARIAL)
BRITISH_QUESTIONS = 0.3  # share of questions spelled the British way, whoever the speaker is

GROUPS = {
    "kids": (
        "What activities has {X} done with {poss} kids?",
        "What kinds of outings has {X} taken the children on?",
    ),
    "trip": ("Which cities has {X} visited this year?", "Where has {X} traveled to on vacation?"),
    "class": ("What hobbies has {X} picked up recently?", "Which new pastimes has {X} gotten into?"),
    "show": ("What events has {X} gone to lately?", "Which gatherings or shows has {X} attended?"),
}  # fmt: skip
TRAITS = {
    "outdoors": "Would {X} likely enjoy a weekend backpacking in the mountains?",
    "creative": "Would {X} be interested in an arts and crafts workshop?",
    "animals": "Would {X} be a good person to ask to look after a friend's pet?",
    "music": "Would {X} probably enjoy going to a music festival?",
    "fitness": "Is {X} the sort of person who would join a sports league?",
    "caring": "Would {X} consider a career helping others?",
    "food": "Would {X} enjoy a cooking class?",
    "travel": "Would {X} enjoy planning another trip abroad?",
    "curious": "Would {X}'s family like a visit to a planetarium?",
}


@dataclass
class State:
    """A fact with a value at a time: a job or a home (changes), a favourite, a sibling's news."""

    owner: Persona
    kind: str  # job | home | favorite:<what> | sibling
    labels: list[str]  # oldest first


def _ask(rng: random.Random, template: str, person: Persona, slots: dict) -> str:
    text = template.format(**{**slots, **person_slots(person)})
    return P.british(text) if rng.random() < BRITISH_QUESTIONS else text


def about_happening(rng: random.Random, told: Told) -> list[Question]:
    """The single-hop and temporal questions a happening answers."""
    questions = []
    for category, target, template in told.happening.questions:
        gold = told.telling if target == "core" else (told.label("detail"),)
        questions.append(Question(_ask(rng, template, told.owner, told.slots), category, gold))
    return questions


def adversarial(rng: random.Random, told: Told, other: Persona) -> Question:
    """One of the happening's questions asked about ``other``, who did not do it."""
    _, target, template = rng.choice(told.happening.questions)
    gold = told.telling if target == "core" else (told.label("detail"),)
    slots = {**told.slots, "kid": other.kids[0] if other.kids else told.slots["kid"]}
    return Question(_ask(rng, template, other, slots), ADVERSARIAL, gold)


def gathered(rng: random.Random, person: Persona, told: list[Told]) -> list[Question]:
    """A multi-hop question per group whose happenings span at least two sessions (two to four turns)."""
    questions = []
    for group, templates in GROUPS.items():
        mine = [t for t in told if t.owner is person and t.happening.group == group][:4]
        if len(mine) >= 2 and len({t.session for t in mine}) >= 2:
            text = _ask(rng, rng.choice(templates), person, {})
            questions.append(Question(text, MULTI_HOP, tuple(t.own for t in mine)))
    return questions


def inferred(rng: random.Random, person: Persona, told: list[Told]) -> list[Question]:
    """An open-domain question per trait at least two of the person's happenings hint at."""
    questions = []
    for trait, template in TRAITS.items():
        hints = [t for t in told if t.owner is person and trait in t.happening.traits][:4]
        if len(hints) >= 2:
            text = _ask(rng, template, person, {})
            questions.append(Question(text, OPEN_DOMAIN, tuple(t.own for t in hints)))
    return questions


# (kind, which tellings are gold: the newest, the one before it, or all, template)
_STATE_QUESTIONS = {
    "job": (
        (CURRENT, "newest", "What does {X} do for a living these days?"),
        (CURRENT, "newest", "Who is {X} employed by now?"),
        (CURRENT, "newest", "What is {X}'s job now?"),
        (SINGLE_HOP, "previous", "Where did {X} work before the latest job change?"),
        (TEMPORAL, "newest", "When did {X} announce the career switch?"),
    ),
    "home": (
        (CURRENT, "newest", "Where does {X} live at the moment?"),
        (TEMPORAL, "newest", "When did {X} relocate to the new house?"),
    ),
    "favorite:color": ((SINGLE_HOP, "all", "What is {X}'s favorite color?"),),
    "favorite:book": ((SINGLE_HOP, "all", "Which novel does {X} love rereading?"),),
    "favorite:food": ((SINGLE_HOP, "all", "What dish could {X} eat every single day?"),),
    "sibling": (
        (MULTI_HOP, "all", "What does {X}'s {relation} do for work?"),
        (TEMPORAL, "newest", "When did {X}'s {relation} land a new position?"),
    ),
}


def about_state(rng: random.Random, state: State) -> list[Question]:
    """Current questions cite the newest telling and list the older ones as superseded."""
    relation = state.owner.sibling[0]
    questions = []
    for category, which, template in _STATE_QUESTIONS[state.kind]:
        text = _ask(rng, template, state.owner, {"relation": relation})
        gold = {"newest": state.labels[-1:], "previous": state.labels[-2:-1], "all": state.labels}[which]
        stale = tuple(state.labels[:-1]) if category == CURRENT else ()
        questions.append(Question(text, category, tuple(gold), stale))
    return questions
