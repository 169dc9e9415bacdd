"""A generated long-conversation set for the retrieval-quality benchmark (deterministic per seed).

Pairs of named speakers talk over many sessions. Facts are told once and
asked about later in other words: irregular forms ("won" / "win"),
synonyms, the speaker's name in every turn (a term every memory of that
speaker shares), facts that change over time (an old home or job stays in
the record after a move), and chit-chat that shares the common words.
Each question names its gold turns; a "current" question also names the
superseded turns that state an older value of the same fact.

Pure Python (no Django), like ``bench.textgen``.
"""

import datetime
import random
from dataclasses import dataclass, field

SINGLE_HOP, MULTI_HOP, TEMPORAL, CURRENT = "single_hop", "multi_hop", "temporal", "current"
CATEGORIES = (SINGLE_HOP, MULTI_HOP, TEMPORAL, CURRENT)

_NAMES = (
    "Maya", "Tomas", "Priya", "Jonah", "Elena", "Kofi", "Ingrid", "Rafael", "Aiko", "Dmitri",
    "Leila", "Oscar", "Nadia", "Felix", "Chiara", "Samuel", "Yara", "Bruno", "Hana", "Viktor",
)  # fmt: skip
_CITIES = (
    "Lisbon", "Denver", "Oslo", "Kyoto", "Nairobi", "Porto", "Tucson", "Ghent", "Valparaiso",
    "Tallinn", "Halifax", "Cusco", "Bergen", "Hobart", "Quebec", "Seville",
)  # fmt: skip
_ROLES = (
    "nurse", "carpenter", "pharmacist", "data analyst", "librarian", "chef", "architect",
    "paramedic", "translator", "electrician", "teacher", "accountant",
)  # fmt: skip
_COMPANIES = (
    "Northwind", "Bluefin Labs", "Cedar Health", "Orbital Foods", "Kestrel Transit", "Lumen Press",
    "Harbor Clinic", "Quarry Studio", "Tidewater Bank", "Juniper Schools",
)  # fmt: skip
_PETS = (("puppy", "dog"), ("kitten", "cat"), ("rabbit", "rabbit"), ("parrot", "bird"))
_PET_NAMES = ("Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Clementine", "Ziggy", "Nutmeg")
_CONTESTS = (
    ("regional chess tournament", "chess"),
    ("city marathon", "marathon"),
    ("baking contest at the county fair", "baking"),
    ("amateur photography award", "photography"),
    ("pub quiz championship", "quiz"),
)
_GIFTS = (
    "a silk scarf",
    "a vintage record player",
    "a leather journal",
    "a pair of hiking boots",
    "a telescope",
)
_RELATIVES = (("sister", "her"), ("brother", "his"), ("mother", "her"), ("father", "his"))
_SIBLING_NAMES = ("Lena", "Marco", "Ruth", "Idris", "Greta", "Tariq", "Noor", "Emil")
_INSTRUMENTS = ("cello", "ukulele", "saxophone", "harp", "drum")
_BOOKS = ("The Salt Road", "Winter Orchard", "A Map of Tides", "The Glass Keeper", "Quiet Engines")
_FILLER = (
    "{a}: Hey {b}, how have you been? It feels like ages since we talked.",
    "{a}: Ha, that sounds like so much fun, {b}!",
    "{a}: Work has been busy lately but good, thanks for asking.",
    "{a}: I totally get that, {b}. Some weeks are just like that.",
    "{a}: Let's catch up again soon, take care!",
    "{a}: That's wonderful news, I'm really happy for you.",
    "{a}: Honestly I just needed a quiet weekend at home.",
    "{a}: Did you end up watching that new series everyone talks about?",
    "{a}: The weather has been strange this week, sunny then cold again.",
    "{a}: Good luck with everything, {b}, let me know how it goes.",
)


@dataclass(frozen=True)
class Turn:
    key: str  # "c1-s3-t7": conversation, session, turn
    session: str  # "c1-s3": the evidence source of the turn
    speaker: str
    statement: str
    occurred_at: datetime.datetime


@dataclass(frozen=True)
class Question:
    text: str
    category: str
    gold: tuple[str, ...]
    superseded: tuple[str, ...] = ()


@dataclass
class Conversation:
    number: int
    speakers: tuple[str, str]
    sessions: list[list[Turn]] = field(default_factory=list)


@dataclass
class Dataset:
    conversations: list[Conversation]
    questions: list[Question]

    @property
    def turns(self) -> list[Turn]:
        return [turn for c in self.conversations for session in c.sessions for turn in session]


def generate(*, conversations: int, sessions: int, seed: int = 13) -> Dataset:
    """Return ``conversations`` dialogues of ``sessions`` sessions each (at least 6), with their questions."""
    if sessions < 6:
        raise ValueError("the facts of a speaker need at least 6 sessions")
    rng = random.Random(f"custodian-conversations-{seed}")
    built, questions = [], []
    for number in range(1, conversations + 1):
        a, b = rng.sample(_NAMES, 2)
        conversation = Conversation(number, (a, b))
        plan: list[list[tuple[str, list]]] = [[] for _ in range(sessions)]  # per session: (speaker, facts)
        asked = [q for speaker in (a, b) for q in _speaker_facts(rng, number, speaker, sessions, plan)]
        start = datetime.datetime(2023, 1, 9, 18, tzinfo=datetime.UTC) + datetime.timedelta(days=number)
        keys = {}
        for s in range(sessions):
            when = start + datetime.timedelta(days=17 * s)
            session_key, lines = f"c{number}-s{s + 1}", []
            facts = plan[s]
            rng.shuffle(facts)
            for speaker, fact in facts:
                other = b if speaker == a else a
                lines.append((speaker, fact[0], fact[1]))
                lines.append((other, rng.choice(_FILLER).format(a=other, b=speaker), None))
            while len(lines) < 12:
                speaker = rng.choice((a, b))
                other = b if speaker == a else a
                lines.insert(
                    rng.randrange(len(lines) + 1),
                    (speaker, rng.choice(_FILLER).format(a=speaker, b=other), None),
                )
            turns = []
            for t, (speaker, statement, label) in enumerate(lines, start=1):
                turn = Turn(
                    f"{session_key}-t{t}",
                    session_key,
                    speaker,
                    statement,
                    when + datetime.timedelta(minutes=t),
                )
                turns.append(turn)
                if label:
                    keys[label] = turn.key
            conversation.sessions.append(_unique(turns))
        built.append(conversation)
        questions += [_resolve(q, keys) for q in asked]
    return Dataset(built, questions)


def _unique(turns: list[Turn]) -> list[Turn]:
    """Drop a repeated filler line within a session (the same statement twice would read as one memory)."""
    seen, kept = set(), []
    for turn in turns:
        if turn.statement not in seen:
            seen.add(turn.statement)
            kept.append(turn)
    return kept


def _resolve(question: Question, keys: dict[str, str]) -> Question:
    """Questions name their turns by label until the turns have keys."""
    assert all(label in keys for label in (*question.gold, *question.superseded)), question
    return Question(
        question.text,
        question.category,
        tuple(keys.get(g, g) for g in question.gold),
        tuple(keys.get(s, s) for s in question.superseded),
    )


def _speaker_facts(
    rng: random.Random, number: int, x: str, sessions: int, plan: list[list]
) -> list[Question]:
    """Place one speaker's facts in sessions (told) and return the questions about them (asked)."""
    questions = []

    def tell(session: int, label: str, statement: str) -> str:
        full = f"c{number}-{x}-{label}"
        plan[session].append((x, (f"{x}: {statement}", full)))
        return full

    late = lambda: rng.randrange(sessions // 2, sessions)  # noqa: E731
    early = lambda: rng.randrange(0, sessions // 2)  # noqa: E731

    # Home: told early, changed later (and maybe again); "where now" must find the latest move.
    cities = rng.sample(_CITIES, 3)
    first, moved = early(), late()
    old = tell(first, "home0", f"I've lived in {cities[0]} for years now, I love walking by the river there.")
    new = tell(moved, "home1", f"Big news: we packed everything and moved to {cities[1]} last month.")
    questions += [
        Question(f"Which city is {x} living in now?", CURRENT, (new,), (old,)),
        Question(f"Which city did {x} move to?", SINGLE_HOP, (new,)),
        Question(f"When did {x} relocate to {cities[1]}?", TEMPORAL, (new,)),
    ]
    # Job: changes once; the old job says "work", the new one says "job".
    roles, companies = rng.sample(_ROLES, 2), rng.sample(_COMPANIES, 2)
    old = tell(early(), "job0", f"I work as a {roles[0]} at {companies[0]}, long hours but I like it.")
    new = tell(late(), "job1", f"I started a new job last week, I'm now a {roles[1]} with {companies[1]}.")
    questions += [
        Question(f"What does {x} do for work these days?", CURRENT, (new,), (old,)),
        Question(f"What is {x}'s new job?", CURRENT, (new,), (old,)),
    ]
    # Pet: adopted once.
    (young, species), pet = rng.choice(_PETS), rng.choice(_PET_NAMES)
    adopted = tell(
        rng.randrange(sessions), "pet", f"We adopted a {young} from the shelter and named her {pet}!"
    )
    questions += [
        Question(f"What is the name of {x}'s {species}?", SINGLE_HOP, (adopted,)),
        Question(f"When did {x} adopt {pet}?", TEMPORAL, (adopted,)),
    ]
    # A win (irregular form), then a trip in the next session: "where did x go after winning".
    (contest, short), place = rng.choice(_CONTESTS), rng.choice(_CITIES)
    at = rng.randrange(sessions - 1)
    won = tell(at, "win", f"I won first prize at the {contest}, still can't believe it.")
    trip = tell(at + 1, "trip", f"Just got back from five days in {place}, the food there was incredible.")
    questions += [
        Question(f"Which {short} competition did {x} win?", SINGLE_HOP, (won,)),
        Question(f"Where did {x} travel after winning the {short} prize?", MULTI_HOP, (won, trip)),
        Question(f"When did {x} take the trip to {place}?", TEMPORAL, (trip,)),
    ]
    # A gift (irregular "bought"), and a relative whose job is told in another session (multi-hop).
    (relative, pronoun), gift = rng.choice(_RELATIVES), rng.choice(_GIFTS)
    bought = tell(rng.randrange(sessions), "gift", f"I bought {gift} as a gift for my {relative}'s birthday.")
    questions.append(
        Question(f"What did {x} buy for {pronoun} {relative}'s birthday?", SINGLE_HOP, (bought,))
    )
    kin, kin_role = rng.choice(_SIBLING_NAMES), rng.choice(_ROLES)
    told = early()
    intro = tell(told, "kin", f"My {relative} {kin} is coming to stay with us next week.")
    kin_job = tell(
        rng.randrange(told + 1, sessions), "kinjob", f"{kin} just got hired as a {kin_role}, so proud."
    )
    questions.append(Question(f"What does {x}'s {relative} do for a living?", MULTI_HOP, (intro, kin_job)))
    # A hobby and a book: single facts asked in other words.
    instrument, book = rng.choice(_INSTRUMENTS), rng.choice(_BOOKS)
    lessons = tell(
        rng.randrange(sessions), "music", f"I've been taking {instrument} lessons every Tuesday evening."
    )
    reading = tell(rng.randrange(sessions), "book", f"I'm reading '{book}' right now, part one shocked me.")
    questions += [
        Question(f"Which instrument is {x} learning to play?", SINGLE_HOP, (lessons,)),
        Question(f"What book has {x} been reading lately?", SINGLE_HOP, (reading,)),
        Question(f"When did {x} start the {instrument} lessons?", TEMPORAL, (lessons,)),
    ]
    return questions
