"""Episodes: the few turns in which one thing is told, reacted to and followed up, with labels for gold.

An episode is a list of ``(speaker, text, label)``; a label names a turn a
question may cite (``e7.core``) until the session gives it a key.
"""

import random
from dataclasses import dataclass, field

from bench.long_chats import happenings as H
from bench.long_chats import phrasing as P
from bench.long_chats.people import Persona

Line = tuple[str, str, str | None]  # speaker, text (without "Speaker: "), label


@dataclass
class Told:
    """One happening as placed: who, what, when, its slots and the labels of its turns."""

    number: int
    owner: Persona
    happening: H.Happening
    session: int
    slots: dict[str, str]
    split: bool  # asked by the listener and answered by the teller, over two turns
    labels: list[str] = field(default_factory=list)

    def label(self, part: str) -> str:
        return f"e{self.number}.{part}"

    @property
    def telling(self) -> tuple[str, ...]:
        """The turns that tell it: the one turn, or the listener's question and the teller's answer."""
        return (self.label("ask"), self.label("answer")) if self.split else (self.label("core"),)

    @property
    def own(self) -> str:
        """The teller's own turn saying it happened."""
        return self.label("answer" if self.split else "core")


_EXTRAS = {
    "animal": H.ANIMALS, "animal2": H.ANIMALS2, "exhibit": H.EXHIBITS, "shell": H.SHELLS,
    "float": H.FLOATS, "compliment": H.COMPLIMENTS, "grade": H.GRADES, "photo_subject": H.PHOTO_SUBJECTS,
    "song": H.SONGS, "dog": H.DOGS, "count": H.COUNTS, "story": H.STORIES, "encore": H.ENCORES,
    "minutes": H.MINUTES, "venue": H.VENUES, "art": H.ARTS, "price": H.PRICES,
}  # fmt: skip


def slots_for(rng: random.Random, happening: H.Happening, owner: Persona, extra: dict[str, str]) -> dict:
    """Every value the happening's turns and questions may name, drawn once."""
    slots = {name: rng.choice(values) for name, values in _EXTRAS.items()}
    slots.update({name: rng.choice(values) for name, values in happening.slots.items()})
    slots.update(extra)
    slots["when"] = rng.choice(P.WHEN)
    slots["kid"] = rng.choice(owner.kids) if owner.kids else ""
    slots["partner"] = owner.partner
    if "item" in slots:
        slots["item_word"] = slots["item"].split()[-1]
    return slots


def person_slots(person: Persona) -> dict[str, str]:
    return {
        "X": person.name,
        "subj": person.subject,
        "obj": person.object,
        "poss": person.possessive,
    }


def happening_lines(rng: random.Random, told: Told, listener: Persona, used: set) -> list[Line]:
    """The episode of one happening: told (in one turn or over two), reacted to, followed up."""
    h, teller = told.happening, told.owner
    slots = {**told.slots, "other": listener.nickname}
    back = {**told.slots, "other": teller.nickname}

    def say(person: Persona, options: tuple, part: str | None, values: dict) -> Line:
        text = P.fill(P.pick(rng, options, used), values)
        return person.name, P.british(text) if person.british else text, part and told.label(part)

    lines = (
        [say(listener, h.ask, "ask", back), say(teller, h.answer, "answer", slots)]
        if told.split
        else [say(teller, h.core, "core", slots)]
    )
    lines += [say(listener, h.follow, None, back), say(teller, h.detail, "detail", slots)]
    if rng.random() < 0.6:
        lines.append(say(listener, P.REACT, None, back))
    if rng.random() < 0.3:
        lines.append(say(teller, P.THANKS, None, slots))
    return lines


def again_lines(rng: random.Random, told: Told, listener: Persona, used: set) -> list[Line]:
    """A passing mention in a later session, and the listener's reply."""
    text = P.fill(rng.choice(told.happening.again), {**told.slots, "other": listener.nickname})
    reply = P.fill(P.pick(rng, P.AGAIN_REACT, used), {"other": told.owner.nickname})
    return [_spelled(told.owner, text, None), _spelled(listener, reply, None)]


def small_talk(rng: random.Random, a: Persona, b: Persona, used: set) -> list[Line]:
    opener, reply = P.pick(rng, P.SMALL_TALK, used)
    return [
        _spelled(a, P.fill(opener, {"other": b.nickname}), None),
        _spelled(b, P.fill(reply, {"other": a.nickname}), None),
    ]


def greeting(rng: random.Random, a: Persona, b: Persona, weekday: str) -> list[Line]:
    return [
        _spelled(a, P.fill(rng.choice(P.GREET), {"other": b.nickname, "weekday": weekday}), None),
        _spelled(b, P.fill(rng.choice(P.GREET_BACK), {"other": a.nickname}), None),
    ]


def farewell(rng: random.Random, a: Persona, b: Persona) -> list[Line]:
    return [
        _spelled(a, P.fill(rng.choice(P.BYE), {"other": b.nickname}), None),
        _spelled(b, P.fill(rng.choice(P.BYE_BACK), {"other": a.nickname}), None),
    ]


def state_lines(
    rng: random.Random, teller: Persona, listener: Persona, told: tuple, reply: tuple, label: str, slots: dict
) -> list[Line]:
    """A state fact (job, home, favourite, a sibling's news) told in one turn and replied to."""
    text = P.fill(rng.choice(told), slots)
    lines = [_spelled(teller, text, label)]
    lines.append(_spelled(listener, P.fill(rng.choice(reply), {**slots, "other": teller.nickname}), None))
    return lines


def _spelled(person: Persona, text: str, label: str | None) -> Line:
    return person.name, P.british(text) if person.british else text, label
