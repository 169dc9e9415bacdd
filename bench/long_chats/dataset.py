"""Assemble conversations: place what each person tells in sessions days apart, word the turns, key them."""

import datetime
import random
from collections.abc import Callable

from bench.conversations import Conversation, Dataset, Question, Turn
from bench.long_chats import episodes as E
from bench.long_chats import happenings as H
from bench.long_chats import phrasing as P
from bench.long_chats import questions as Q
from bench.long_chats.people import Persona, names, pair

SESSIONS = (20, 30)  # sessions per conversation, drawn in this range unless given
TURNS = (15, 30)  # turns per session, drawn in this range (more if what is told needs them)
ADVERSARIAL_SHARE = 0.8  # happenings of one person also asked about the other

Render = Callable[[random.Random, set], list[E.Line]]


def generate(
    *, conversations: int, sessions: int | None = None, seed: int = 13, names_in_text: bool = True
) -> Dataset:
    """Return ``conversations`` long chats of ``sessions`` sessions each (default 20-30), with questions.

    ``names_in_text``: each turn's statement begins "Name: ", as a transcript
    reads; without it, the same turns say only what was said.
    """
    if sessions is not None and sessions < 4:
        raise ValueError("a long chat needs at least 4 sessions")
    built, questions = [], []
    people = names(random.Random(f"custodian-long-chats-{seed}"), conversations)
    for number, who in enumerate(people, start=1):
        rng = random.Random(f"custodian-long-chats-{seed}-{number}")
        conversation, asked = _conversation(rng, number, who, sessions, names_in_text)
        built.append(conversation)
        questions += asked
    return Dataset(built, questions)


def _conversation(rng: random.Random, number: int, who, sessions: int | None, names_in_text: bool) -> tuple:
    a, b = pair(rng, who)
    count = sessions or rng.randint(*SESSIONS)
    plan: list[list[Render]] = [[] for _ in range(count)]
    told: list[E.Told] = []
    states: list[Q.State] = []
    for person, other in ((a, b), (b, a)):
        told += _place_happenings(rng, plan, person, other, start=len(told))
        states += _place_states(rng, plan, person, other)
    conversation = Conversation(number, (a.name, b.name))
    keys: dict[str, str] = {}
    when = datetime.datetime(2023, rng.randint(1, 6), rng.randint(1, 28), tzinfo=datetime.UTC)
    for s, renders in enumerate(plan):
        when += datetime.timedelta(days=rng.randint(3, 21) if s else 0)
        started = when.replace(hour=rng.randint(8, 21), minute=rng.randint(0, 59))
        lines = _session_lines(rng, a, b, renders, started)
        turns = _turns(number, s + 1, lines, started, rng, keys, names_in_text)
        conversation.sessions.append(turns)
    asked = _questions(rng, a, b, told, states)
    return conversation, [_resolve(question, keys) for question in asked]


def _place_happenings(rng, plan, person: Persona, other: Persona, *, start: int) -> list[E.Told]:
    """Pick what the person does, place each in a session, and a later passing mention of some."""
    chosen = list(rng.sample(H.CLASSES, rng.randint(3, 5))) + list(rng.sample(H.SHOWS, rng.randint(3, 5)))
    if person.kids:
        chosen += rng.sample(H.KIDS, rng.randint(4, 6))
    extras: list[dict] = [{} for _ in chosen]
    for city, food in rng.sample(H.CITIES, rng.randint(3, 4)):
        chosen.append(H.TRIPS)
        extras.append({"city": city, "food": food, "days": rng.choice(("four", "five", "six"))})
    if rng.random() < 0.8:
        (pet, kind), (name, pronoun) = rng.choice(H.PETS), rng.choice(H.PET_NAMES)
        chosen.append(H.PET)
        extras.append({"pet": pet, "pet_kind": kind, "pet_name": name, "pet_sub": pronoun,
                       "pet_obj": "her" if pronoun == "she" else "him"})  # fmt: skip
    if rng.random() < 0.7:
        chosen.append(H.PURCHASE)
        extras.append({})
    told = []
    for offset, (happening, extra) in enumerate(zip(chosen, extras, strict=True)):
        session = rng.randrange(len(plan))
        slots = E.slots_for(rng, happening, person, extra)
        item = E.Told(start + offset, person, happening, session, slots, split=rng.random() < 0.4)
        told.append(item)
        plan[session].append(lambda r, used, t=item, o=other: E.happening_lines(r, t, o, used))
        if session + 1 < len(plan) and rng.random() < 0.5:
            later = rng.randrange(session + 1, len(plan))
            plan[later].append(lambda r, used, t=item, o=other: E.again_lines(r, t, o, used))
    return told


def _place_states(rng, plan, person: Persona, other: Persona) -> list[Q.State]:
    """Job and home told early and changed later; favourites; a sibling introduced, then their news."""
    n, tag = len(plan), f"{person.name}"
    early = lambda: rng.randrange(0, max(n // 3, 1))  # noqa: E731
    states = []

    def tell(session: int, label: str, told: tuple, reply: tuple, slots: dict) -> str:
        values = {**slots, "other": other.nickname}
        plan[session].append(lambda r, used: E.state_lines(r, person, other, told, reply, label, values))
        return label

    jobs = [tell(early(), f"{tag}.job0", P.JOB_FIRST, P.JOB_FIRST_REACT, _job(person, 0))]
    moments = sorted(rng.sample(range(n // 3 + 1, n), len(person.jobs) - 1))
    for k, session in enumerate(moments, start=1):
        jobs.append(tell(session, f"{tag}.job{k}", P.JOB_CHANGE, P.JOB_REACT, _job(person, k)))
    states.append(Q.State(person, "job", jobs))
    (kind0, where0), (kind1, where1) = person.homes
    homes = [
        tell(early(), f"{tag}.home0", P.HOME_FIRST, P.HOME_FIRST_REACT, {"kind": kind0, "where": where0}),
        tell(
            rng.randrange(n // 2, n),
            f"{tag}.home1",
            P.HOME_MOVE,
            P.HOME_REACT,
            {"kind": kind1, "where": where1},
        ),
    ]
    states.append(Q.State(person, "home", homes))
    for what, template, values in rng.sample(P.FAVORITES, 2):
        label = tell(
            rng.randrange(n),
            f"{tag}.fav-{what}",
            (template,),
            P.FAVORITE_REACT,
            {"value": rng.choice(values)},
        )
        states.append(Q.State(person, f"favorite:{what}", [label]))
    relation, sibling = person.sibling
    first = rng.randrange(0, n - 1)
    sib = {"relation": relation, "sibling": sibling, "job": person.sibling_job}
    intro = tell(first, f"{tag}.sib0", P.SIBLING_INTRO, P.SIBLING_INTRO_REACT, sib)
    news = tell(rng.randrange(first + 1, n), f"{tag}.sib1", P.SIBLING_JOB, P.SIBLING_REACT, sib)
    states.append(Q.State(person, "sibling", [intro, news]))
    return states


def _job(person: Persona, k: int) -> dict:
    role, place = person.jobs[k]
    return {"role": role, "place": place}


def _session_lines(rng, a: Persona, b: Persona, renders: list[Render], started) -> list[E.Line]:
    """Greeting, what is told with chit-chat between the episodes up to the session's length, farewell."""
    first, second = (a, b) if rng.random() < 0.5 else (b, a)
    used: set = set()
    rng.shuffle(renders)
    blocks = [render(rng, used) for render in renders]
    target = rng.randint(*TURNS) - 4
    while sum(map(len, blocks)) < target or (rng.random() < 0.3 and len(blocks) < 2 * len(renders) + 1):
        at = rng.randrange(len(blocks) + 1)
        last = blocks[at - 1][-1][0] if at else second.name
        opener, listener = (b, a) if last == a.name else (a, b)
        blocks.insert(at, E.small_talk(rng, opener, listener, used))
    weekday = P.WEEKDAYS[started.weekday()]
    body = [line for block in blocks for line in block]
    return E.greeting(rng, first, second, weekday) + body + E.farewell(rng, second, first)


def _turns(
    number: int, s: int, lines: list[E.Line], started, rng, keys: dict, names_in_text: bool
) -> list[Turn]:
    """Key the session's turns; a line its speaker already said in the session is dropped (no question
    cites one)."""
    session, turns, seen = f"c{number}-s{s}", [], set()
    at = started
    for speaker, text, label in lines:
        if (speaker, text) in seen:
            assert label is None, text
            continue
        seen.add((speaker, text))
        statement = f"{speaker}: {text}" if names_in_text else text
        at += datetime.timedelta(seconds=rng.randint(20, 180))
        turn = Turn(f"{session}-t{len(turns) + 1}", session, speaker, statement, at)
        turns.append(turn)
        if label:
            keys[label] = turn.key
    return turns


def _questions(rng, a: Persona, b: Persona, told: list[E.Told], states: list[Q.State]) -> list[Question]:
    asked = []
    for item in told:
        asked += Q.about_happening(rng, item)
    for person, other in ((a, b), (b, a)):
        asked += Q.gathered(rng, person, told)
        asked += Q.inferred(rng, person, told)
        theirs = {_signature(t) for t in told if t.owner is other}
        mine = [t for t in told if t.owner is person and _signature(t) not in theirs]
        for item in mine:
            if rng.random() < ADVERSARIAL_SHARE:
                asked.append(Q.adversarial(rng, item, other))
    for state in states:
        asked += Q.about_state(rng, state)
    return asked


def _signature(told: E.Told) -> tuple[str, str]:
    """What makes two happenings the same thing done (a trip is to one city)."""
    return told.happening.key, told.slots.get("city", "")


def _resolve(question: Question, keys: dict[str, str]) -> Question:
    """Name the gold turns by key instead of label; every label must have been said."""
    missing = [label for label in (*question.gold, *question.superseded) if label not in keys]
    assert not missing, (question, missing)
    return Question(
        question.text,
        question.category,
        tuple(keys[label] for label in question.gold),
        tuple(keys[label] for label in question.superseded),
    )
