"""What the admission firewall reads of a proposal, and how a refused secret is withheld.

The proposal's own text (its frozen fields, the rationale and, for an observation's
candidates, the observation) is scanned at submission; cited evidence was scanned when it
was registered, and its findings come with the revision. A proposal denied for a secret is
stored for audit with its findings only: every string of its fields is withheld before
the row, its history row or any answer is written.
"""

from typing import Any

from admission import Finding, Scan, scan
from evidence.models import EvidenceRevision
from proposals.models import Proposal
from proposals.payloads import ProposalPayload

WITHHELD = "[withheld: secret detected]"


# The parts of a payload that carry an agent's text, as the frozen action names them.
_TEXT_PARTS = ("memory", "changes", "compaction", "entity", "link", "reason", "rationale", "observation")
# Frozen fields that say what the action is, kept when a refused proposal's text is withheld.
_SHAPE = frozenset(
    {"subject", "scope", "type", "sensitivity", "confidence", "retention_policy", "ttl_seconds"}
    | {"expires_at", "valid_from", "valid_to"}
)


def screen(payload: ProposalPayload, revisions: list[EvidenceRevision]) -> Scan:
    """Scan the text ``payload`` carries and fold in the findings of the evidence it cites."""
    sources = {part: payload[part] for part in _TEXT_PARTS if payload.get(part)}  # type: ignore[literal-required]
    own = scan(sources)
    cited = tuple(
        Finding(**{**finding, "field": f"evidence[{revision}].{finding['field']}"})
        for revision in revisions
        for finding in revision.admission_findings or ()
    )
    return own.merged(Scan(cited)) if cited else own


def withhold(proposal: Proposal, result: Scan) -> None:
    """Withhold the agent's text from what the proposal stores (a secret was found in it).

    Every frozen field goes but those that only say what the action is (subject, scope,
    type, sensitivity, retention, dates), and those too when a secret was found in one;
    the rationale and the dedupe key likewise. What remains is the shape of the action,
    enough for an auditor to see what was refused and why.
    """
    named = _top_fields(result)
    proposal.fields = {
        name: value if name in _SHAPE and name not in named else _withheld(value, result.secret_keys)
        for name, value in (proposal.fields or {}).items()
    }
    proposal.rationale = WITHHELD if proposal.rationale else ""
    proposal.dedupe_key = ""


def _top_fields(result: Scan) -> set[str]:
    """The frozen fields the secret findings point into (``memory.<field>…``, ``changes.<field>…``)."""
    fields = set()
    for finding in result.findings:
        if finding.detector != "credentials":
            continue
        for part in finding.field.split(" + "):
            segments = part.replace("[", ".").split(".")
            if segments[0] in ("memory", "changes") and len(segments) > 1:
                fields.add(segments[1].rstrip("#"))
    return fields


def _withheld(value: Any, secret_keys: frozenset[str]) -> Any:
    if isinstance(value, str):
        return WITHHELD
    if isinstance(value, dict):
        return {
            f"withheld_{index}" if key in secret_keys else key: _withheld(item, secret_keys)
            for index, (key, item) in enumerate(value.items())
        }
    if isinstance(value, list):
        return [_withheld(item, secret_keys) for item in value]
    return value
