"""Turn a proposal into what a reviewer reads: a sentence and a field-by-field diff."""

from dataclasses import dataclass
from typing import Any

from memory_core.models import Memory
from memory_core.people import person_rule, readable_content
from proposals.models import Proposal

# Factor conclusions first, in the order a PM reads them.
CONTENT_ORDER = ["statement", "factor", "universe", "horizon", "metric", "value", "conclusion"]
# Then the memory fields, in the model's order; content is shown key by key above them.
FIELD_ORDER = [name for name in Memory.PROPOSED_FIELDS if name != "content"]

# Actions whose review shows the frozen action itself, field by field (an erasure: its plan).
FROZEN_ACTION_SHOWN = (Proposal.Action.LINK, Proposal.Action.COMPACT, Proposal.Action.ERASE)


@dataclass(frozen=True)
class DiffRow:
    field: str
    current: Any
    proposed: Any

    @property
    def changed(self) -> bool:
        return self.current != self.proposed


def plain_language(proposal: Proposal, memory: Memory | None) -> str:
    """Say in one sentence what applying the proposal would do."""
    statement = (proposal.fields.get("content") or {}).get("statement")
    if proposal.action == Proposal.Action.CREATE:
        subject = proposal.fields.get("subject", {})
        return (
            f"Remember a new {proposal.memory_type.replace('_', ' ')} about "
            f"{subject.get('kind')}:{subject.get('id')} in {proposal.memory_scope} scope: “{statement}”."
        )
    if proposal.action == Proposal.Action.COMPACT:  # (fields are scrubbed once the summary is purged)
        subject = proposal.fields.get("memory", {}).get("subject", {})
        return (
            f"Summarise {len(proposal.fields.get('members', []))} {proposal.memory_type.replace('_', ' ')}"
            f" memories about {subject.get('kind')}:{subject.get('id')} into one new memory"
            " and make them dormant."
        )
    if proposal.action == Proposal.Action.ERASE:
        return _erasure_sentence(proposal.fields)
    if proposal.action == Proposal.Action.LINK:
        fields = proposal.fields
        other = (
            f"entity {fields['to_entity_id']}"
            if "to_entity_id" in fields
            else f"memory {fields.get('to_memory_id')} (revision {fields.get('to_revision')})"
        )
        return (
            f"Link memory {proposal.target_id} (revision {proposal.base_revision})"
            f" {fields.get('relation')} {other}."
        )
    changed = ", ".join(sorted(proposal.fields)) or "nothing"
    where = f"revision {proposal.base_revision}" + (f" (now {memory.revision})" if memory else "")
    text = f"Change {changed} of memory {proposal.target_id} from {where}."
    return text + (f" New statement: “{statement}”." if statement else "")


def _erasure_sentence(fields: dict[str, Any]) -> str:
    request = fields.get("erasure") or {}
    members = fields.get("members", [])
    derived = sum(1 for member in members if member.get("because") == "derived")
    if request.get("kind") == "source":
        source = request.get("evidence_id")
        what = f"Retract evidence {source} (its content goes): purge {len(members)} memories resting on it"
    else:
        subject = request.get("subject") or {}
        named = (
            f"{subject.get('kind')}:{subject.get('id')}" if "id" in subject else f"a {subject.get('kind')}"
        )
        what = f"Erase {named}: purge {len(members)} memories about them"
    return (
        f"{what} ({derived} derived from those), withdraw {len(fields.get('proposals', []))} open"
        f" proposals about them and re-summarise {len(fields.get('resummarised', []))} summaries"
        " that also rest on other memories. Nothing of it can be restored."
    )


@dataclass(frozen=True)
class Diff:
    """A proposal's field-by-field change; ``compared`` is false when there is nothing to compare with.

    A create has no current memory, so its table shows only the new values (an
    empty "Current" column reads as a deletion); entity actions, links and
    compactions show the frozen action itself.
    """

    rows: list[DiffRow]
    compared: bool
    heading: str  # the proposed column's heading
    caption: str = ""


def diff_rows(proposal: Proposal, memory: Memory | None) -> Diff:
    """Return content fields, then memory fields, as (current, proposed) pairs."""
    if proposal.action in (*Proposal.ENTITY_ACTIONS, *FROZEN_ACTION_SHOWN):
        # Entity actions, links, compactions and erasures: the reviewer reads the frozen action itself.
        rows = [DiffRow(name, None, _show(value)) for name, value in sorted(proposal.fields.items())]
        return Diff(rows, compared=False, heading="Proposed")
    current = memory.snapshot() if memory else {}
    proposed = {**current, **proposal.fields}
    current_content, proposed_content = current.get("content") or {}, proposed.get("content") or {}
    keys = [k for k in CONTENT_ORDER if k in current_content or k in proposed_content]
    keys += sorted((set(current_content) | set(proposed_content)) - set(CONTENT_ORDER))
    rows = [DiffRow(f"content.{k}", current_content.get(k), proposed_content.get(k)) for k in keys]
    rows += [DiffRow(name, _show(current.get(name)), _show(proposed.get(name))) for name in FIELD_ORDER]
    if memory is None:
        caption = "A new memory: nothing exists yet, so nothing is replaced. Every value below is new."
        return Diff(rows, compared=False, heading="New value", caption=caption)
    return Diff(rows, compared=True, heading="Proposed")


def _show(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"kind", "id"}:
        return f"{value['kind']}:{value['id']}"
    return value


@dataclass(frozen=True)
class ConflictRow:
    kind: str  # "memory" or "proposal"
    id: Any
    says: str  # its statement as this person may read it ("" when the read policy hides it)
    detail: str
    digest: str = ""  # a proposal's action digest as shown, for deciding it together
    decidable: bool = False  # a pending proposal that still needs this person


def conflict_rows(conflicts, *, decidable: frozenset | set = frozenset()) -> list[ConflictRow]:
    """What else claims the proposal's dedupe key, each with what it says, for side-by-side reading.

    An active memory's statement goes through the read policy for people; a
    pending proposal of the same tenant is shown as its own review page shows it.
    """
    rows = []
    for memory in conflicts.memories:
        content = readable_content(memory, person_rule(memory)).get("content") or {}
        rows.append(
            ConflictRow("memory", memory.pk, str(content.get("statement", "")), f"revision {memory.revision}")
        )
    for other in conflicts.proposals:
        statement = (other.fields.get("content") or {}).get("statement", "")
        rows.append(
            ConflictRow(
                "proposal",
                other.pk,
                str(statement),
                f"{other.action}, {other.get_status_display()}",
                digest=other.action_digest,
                decidable=other.pk in decidable,
            )
        )
    return rows


# What a reviewer is told about each admission finding (``admission``): the kind in words.
FINDING_WORDS = {
    "instruction": "instructions aimed at the model that reads the memory",
    "tool_call_syntax": "tool-call or chat-template syntax",
    "invisible_unicode": "invisible characters (zero-width, bidirectional override or tag)",
    "email": "an email address",
    "phone": "a phone number",
    "payment_card": "a payment card number",
    "iban": "an IBAN",
    "national_id": "a national id number",
}


@dataclass(frozen=True)
class FindingRow:
    field: str
    words: str


def admission_rows(proposal: Proposal) -> dict[str, list[FindingRow]]:
    """The proposal's injection and personal-data findings, each as field and words, for the page."""
    rows: dict[str, list[FindingRow]] = {"injection": [], "personal_data": []}
    for finding in proposal.admission_findings or []:
        if finding.get("detector") in rows:
            words = FINDING_WORDS.get(finding.get("kind", ""), finding.get("kind", ""))
            row = FindingRow(finding.get("field", ""), words)
            if row not in rows[finding["detector"]]:
                rows[finding["detector"]].append(row)
    return rows
