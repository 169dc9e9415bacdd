"""Who talks: two personas per conversation, with family, work, a home, a spelling habit and tastes."""

import random
from dataclasses import dataclass

# (name, what friends call them, pronoun set)
_PEOPLE = (
    ("Melanie", "Mel", "she"), ("Caroline", "Caro", "she"), ("Jonathan", "Jon", "he"),
    ("Samantha", "Sam", "she"), ("Nathaniel", "Nate", "he"), ("Katherine", "Kate", "she"),
    ("Alexander", "Alex", "he"), ("Deborah", "Deb", "she"), ("Gabriel", "Gabe", "he"),
    ("Rebecca", "Becca", "she"), ("Timothy", "Tim", "he"), ("Jessica", "Jess", "she"),
    ("Benjamin", "Ben", "he"), ("Natalie", "Nat", "she"), ("Daniel", "Dan", "he"),
    ("Joanna", "Jo", "she"), ("Michael", "Mike", "he"), ("Elizabeth", "Liz", "she"),
    ("Christopher", "Chris", "he"), ("Victoria", "Vicky", "she"), ("Matthew", "Matt", "he"),
    ("Abigail", "Abby", "she"), ("Andrew", "Andy", "he"), ("Olivia", "Liv", "she"),
)  # fmt: skip
PRONOUNS = {"she": ("she", "her", "her"), "he": ("he", "him", "his")}
_KIDS = (
    "Lily", "Max", "Ava", "Leo", "Mia", "Noah", "Emma", "Finn", "Zoe", "Owen", "Ruby", "Eli",
    "Isla", "Jack", "Nora", "Theo",
)  # fmt: skip
_PARTNERS = ("Tom", "Anna", "Chris", "Sara", "Mark", "Jen", "Paul", "Lucy", "Greg", "Maria")
_SIBLINGS = (("sister", "Hannah"), ("sister", "Claire"), ("brother", "Ryan"), ("brother", "Omar"))
_SIBLING_JOBS = ("a dental hygienist", "a firefighter", "a high school teacher", "a software tester")
_JOBS = (
    ("a nurse", "St. Mary's hospital"), ("a graphic designer", "a small branding agency"),
    ("a high school counselor", "Lincoln High"), ("a software developer", "a fintech startup"),
    ("a pastry chef", "a French bakery downtown"), ("a physical therapist", "a sports clinic"),
    ("an accountant", "a mid-size firm"), ("a librarian", "the public library"),
    ("an electrician", "my uncle's company"), ("a marketing manager", "an outdoor gear brand"),
    ("a vet tech", "an animal hospital"), ("a social worker", "the county"),
)  # fmt: skip
_HOMES = (
    ("an apartment", "near the river"), ("a tiny flat", "above a coffee shop"),
    ("a rented townhouse", "on the east side"), ("my parents' old place", "out in the suburbs"),
)  # fmt: skip
_NEW_HOMES = (
    ("a house", "Maple Grove"), ("a bungalow", "Cedar Falls"), ("a condo", "Riverside"),
    ("a little cottage", "Willow Creek"), ("a duplex", "Fairview"),
)  # fmt: skip


@dataclass(frozen=True)
class Persona:
    name: str
    nickname: str
    pronoun: str  # "she" | "he"
    british: bool  # writes "favourite", "colour", "mum", "travelled"
    partner: str
    kids: tuple[str, ...]  # empty: no children
    sibling: tuple[str, str]  # (relation, name)
    sibling_job: str
    jobs: tuple[tuple[str, str], ...]  # (role, workplace), oldest first; the last is current
    homes: tuple[tuple[str, str], ...]  # (kind, where), oldest first

    @property
    def subject(self) -> str:
        return PRONOUNS[self.pronoun][0]

    @property
    def object(self) -> str:
        return PRONOUNS[self.pronoun][1]

    @property
    def possessive(self) -> str:
        return PRONOUNS[self.pronoun][2]


def names(rng: random.Random, conversations: int) -> list[tuple[tuple, tuple]]:
    """Two people per conversation, no name in two conversations while names last."""
    order = rng.sample(_PEOPLE, len(_PEOPLE))
    return [(order[2 * n % len(order)], order[(2 * n + 1) % len(order)]) for n in range(conversations)]


def pair(rng: random.Random, who: tuple[tuple, tuple]) -> tuple[Persona, Persona]:
    """The two people of a conversation; the first has children, the second may."""
    a, b = who
    first = _persona(rng, a, with_kids=True)
    return first, _persona(rng, b, with_kids=rng.random() < 0.4)


def _persona(rng: random.Random, who: tuple[str, str, str], *, with_kids: bool) -> Persona:
    name, nickname, pronoun = who
    jobs = rng.sample(_JOBS, rng.choice((2, 2, 3)))
    homes = (rng.choice(_HOMES), rng.choice(_NEW_HOMES))
    kids = tuple(rng.sample(_KIDS, rng.choice((1, 2, 2, 3)))) if with_kids else ()
    return Persona(
        name=name,
        nickname=nickname,
        pronoun=pronoun,
        british=rng.random() < 0.35,
        partner=rng.choice(_PARTNERS),
        kids=kids,
        sibling=rng.choice(_SIBLINGS),
        sibling_job=rng.choice(_SIBLING_JOBS),
        jobs=tuple(jobs),
        homes=homes,
    )
