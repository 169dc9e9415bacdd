"""Bounded Dreaming's planner: a frozen window in, at most a budget of typed actions out.

Pure (no database, no decisions): the server freezes the window
(``maintenance.dreaming.windows``), asks the planner chosen by
``CUSTODIAN_DREAMING_PLANNER`` for a plan, re-validates every action
(``maintenance.dreaming.checks``) and only then turns it into proposals, which policy,
reviewers and the executor govern like any other. A model planner can be
plugged in later behind the same interface and gets no more power: it sees
the window only and its plan is refused whole if it oversteps.

Five kinds: ``create``, ``update``, ``merge`` (a survivor and one duplicate;
the duplicate goes dormant with a ``supersedes`` link from the survivor),
``archive`` (dormant) and ``link``. No kind deletes or purges.
"""

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

KINDS = ("create", "update", "merge", "archive", "link")
ENTITY_END = "entity:"  # a link's ``other`` naming a canonical entity a cited member names
NEAR_DUPLICATE = 0.8  # Jaccard similarity of word sets at or above which two statements are near-duplicates
MAX_GROUP = 400  # members of one subject+scope+type compared pairwise per pass (the rest wait)
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"\d")


@dataclass(frozen=True)
class Member:
    """One window member as frozen: enough to plan on, nothing the read policy would not show the owner."""

    memory_id: str
    revision: int
    type: str
    scope: str
    subject: dict
    sensitivity: str
    content: dict
    created_at: str
    valid_to: str | None = None
    evidence: tuple[str, ...] = ()  # evidence revision ids its current revision rests on
    entities: tuple[str, ...] = ()  # canonical entity ids its statement names
    about: tuple[str, ...] = ()  # canonical entity ids it already has an ``about`` link to


@dataclass(frozen=True)
class Window:
    trigger: str
    members: tuple[Member, ...]
    budget: int
    relations: tuple[str, ...] = ()  # the link relations the type's registration allows


@dataclass(frozen=True)
class Action:
    """One typed action; ``cites`` names the window members it rests on."""

    kind: str
    cites: tuple[str, ...]
    target: str = ""  # update/archive: the member; merge: the survivor; link: the source
    other: str = ""  # merge: the duplicate; link: the other end, a member or ENTITY_END + an entity id
    relation: str = ""  # link
    fields: dict[str, Any] = field(default_factory=dict)  # update: changes; create: the memory
    reason: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "cites": list(self.cites),
            "target": self.target,
            "other": self.other,
            "relation": self.relation,
            "fields": self.fields,
            "reason": self.reason,
        }


class Planner(Protocol):
    name: str
    version: str

    def plan(self, window: Window) -> list[Action]: ...


def words(text: str) -> frozenset[str]:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return frozenset(_WORD.findall(folded))


def normalised(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return " ".join(_WORD.findall(folded))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def structured(content: dict) -> dict[str, Any]:
    """The content's key/value pairs (``preference_key`` with ``preference_value``…)."""
    pairs = {}
    for name, key in content.items():
        if name.endswith("_key") and f"{name[:-4]}_value" in content:
            pairs[f"{name}={key}"] = content[f"{name[:-4]}_value"]
    return pairs


def near_duplicates(a: Member, b: Member) -> bool:
    """Same meaning for merging: similar words, the same key/value pairs, and no number that differs."""
    if structured(a.content) != structured(b.content):
        return False
    wa, wb = words(str(a.content.get("statement", ""))), words(str(b.content.get("statement", "")))
    numbers = {w for w in wa ^ wb if _NUMBER.search(w)}
    return not numbers and jaccard(wa, wb) >= NEAR_DUPLICATE


def near_duplicate_clusters(members: list[Member]) -> list[list[Member]]:
    """Clusters of near-duplicates (``near_duplicates`` with the first of each), without comparing all pairs.

    Members can only match with equal key/value pairs and equal number-bearing
    words, so they are bucketed on those first; inside a bucket, Jaccard >= 0.8
    needs word counts within 0.8 of each other, so each member is compared only
    with those of similar length (sorted by length, stopping at the bound).
    """
    buckets: dict[tuple, list[tuple[frozenset[str], Member]]] = {}
    for member in members:
        said = words(str(member.content.get("statement", "")))
        numbers = frozenset(w for w in said if _NUMBER.search(w))
        key = (tuple(sorted((k, repr(v)) for k, v in structured(member.content).items())), numbers)
        buckets.setdefault(key, []).append((said, member))
    clusters = []
    for bucket in buckets.values():
        bucket.sort(key=lambda item: (len(item[0]), item[1].memory_id))
        placed: set[int] = set()
        for i, (said, member) in enumerate(bucket):
            if i in placed:
                continue
            cluster = [member]
            for j in range(i + 1, len(bucket)):
                other = bucket[j][0]
                if len(said) < NEAR_DUPLICATE * len(other):
                    break  # every later one is longer still
                if j not in placed and jaccard(said, other) >= NEAR_DUPLICATE:
                    cluster.append(bucket[j][1])
                    placed.add(j)
            if len(cluster) > 1:
                clusters.append(sorted(cluster, key=lambda m: m.memory_id))
    return clusters


class RulePlanner:
    """The deterministic default.

    exact duplicate (same normalised statement and key/value pairs) -> merge
    into the oldest; near-duplicate (word Jaccard >= 0.8, equal key/value
    pairs, no differing number) -> merge; two members giving one structured
    key different values -> update of the older closing its validity at the
    newer's creation (the server routes it to review); a canonical entity
    that two or more members name -> an ``about`` link from each of them to
    the entity, if the type allows it (the index of memories by entity).
    """

    name = "rules"
    version = "2026-12-01.1"

    def plan(self, window: Window) -> list[Action]:
        members = sorted(window.members, key=lambda m: (m.created_at, m.memory_id))
        actions: list[Action] = []
        retired: set[str] = set()
        for i, survivor in enumerate(members):
            if survivor.memory_id in retired:
                continue
            for duplicate in members[i + 1 :]:
                if duplicate.memory_id in retired:
                    continue
                exact = _same_text(survivor, duplicate) and structured(survivor.content) == structured(
                    duplicate.content
                )
                if exact or near_duplicates(survivor, duplicate):
                    retired.add(duplicate.memory_id)
                    actions.append(
                        Action(
                            "merge",
                            (survivor.memory_id, duplicate.memory_id),
                            target=survivor.memory_id,
                            other=duplicate.memory_id,
                            reason="exact duplicate" if exact else "near duplicate",
                        )
                    )
        live = [m for m in members if m.memory_id not in retired]
        # A merge survivor is kept as it is (its lineage link is bound to this revision).
        survivors: set[str] = {action.target for action in actions}
        changed: set[str] = set()
        for i, older in enumerate(live):
            for newer in live[i + 1 :]:
                key = _contradicted_key(older, newer)
                if key and older.memory_id not in changed | survivors and older.valid_to is None:
                    changed.add(older.memory_id)
                    actions.append(
                        Action(
                            "update",
                            (older.memory_id, newer.memory_id),
                            target=older.memory_id,
                            fields={"valid_to": newer.created_at},
                            reason=f"contradiction on {key}: the newer statement replaces it from then on",
                        )
                    )
        if "about" in window.relations:
            unchanged = [m for m in live if m.memory_id not in changed]
            actions += [
                Action("link", (member.memory_id,), member.memory_id, ENTITY_END + entity, "about")
                for member, entity in unlinked_entities(unchanged)
            ]
        return actions[: window.budget]


def unlinked_entities(members: list[Member]) -> list[tuple[Member, str]]:
    """(member, entity) for each entity two or more members name, where that member has no link to it yet."""
    found = []
    for entity in sorted({e for m in members for e in m.entities}):
        naming = [m for m in members if entity in m.entities]
        if len(naming) > 1:
            found += [(m, entity) for m in naming if entity not in m.about]
    return found


def _same_text(a: Member, b: Member) -> bool:
    return normalised(str(a.content.get("statement", ""))) == normalised(str(b.content.get("statement", "")))


def _contradicted_key(a: Member, b: Member) -> str:
    pa, pb = structured(a.content), structured(b.content)
    for key in sorted(set(pa) & set(pb)):
        if pa[key] != pb[key]:
            return key
    return ""


def planner() -> Planner:
    """The planner named by ``CUSTODIAN_DREAMING_PLANNER`` (a dotted path; default the rule planner)."""
    path = getattr(settings, "CUSTODIAN_DREAMING_PLANNER", "")
    return import_string(path)() if path else RulePlanner()
