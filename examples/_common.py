"""What every example shares: configuration from the environment, and one way to print a step.

CUSTODIAN_URL             Custodian's base URL (default http://127.0.0.1:8000)
CUSTODIAN_TOKEN           an agent token (make run prints one; or manage.py create_agent_token)
CUSTODIAN_REVIEWER_TOKEN  a reviewer's personal token (manage.py create_user_token --user pm)
CUSTODIAN_REVIEWER2_TOKEN a second, different reviewer's (--user pm2): purges need two people
CUSTODIAN_ACTING_FOR      kind:id the agent acts for (an operator's grant; default user:pm-alice)
CUSTODIAN_AGENT_NAME      the token's agent name, repeated in MGP's policy_context (06; research-agent)
"""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any

from custodian_client import Custodian

URL = os.environ.get("CUSTODIAN_URL", "http://127.0.0.1:8000")
ACTING_FOR = os.environ.get("CUSTODIAN_ACTING_FOR", "user:pm-alice")
_KIND, _, _ID = ACTING_FOR.partition(":")
SUBJECT = {"kind": _KIND, "id": _ID}
# The subject saying it themself, at low risk: the rule set lets such a preference apply on its own.
OWNER_CONTEXT = {"acting_for_subject": SUBJECT, "consent_basis": "explicit", "risk_level": "low"}
RUN = uuid.uuid4().hex[:8]  # keeps reruns of an example from colliding with their earlier memories


def token(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        sys.exit(f"Set {name} (see examples/README.md).")
    return value


def agent() -> Custodian:
    return Custodian(URL, token("CUSTODIAN_TOKEN"))


def reviewer(name: str = "CUSTODIAN_REVIEWER_TOKEN") -> Custodian:
    return Custodian(URL, token(name))


def step(text: str, **facts: Any) -> None:
    details = "  ".join(f"{key}={value}" for key, value in facts.items())
    print(f"- {text}" + (f"  [{details}]" if details else ""), flush=True)


def preference(statement: str, key: str, value: str) -> dict[str, Any]:
    return {
        "subject": SUBJECT,
        "scope": "user",
        "type": "preference",
        "content": {"statement": statement, "preference_key": key, "preference_value": value},
    }


def approve(pm: Custodian, proposal_id: str, reason: str) -> None:
    """Approve as a reviewer over REST: find it in the queue, approve the digest that was reviewed."""
    for queued in pm.review_queue():
        if queued["id"] == proposal_id:
            pm.decide(proposal_id, "approve", reason=reason, action_digest=queued["action_digest"])
            return
    sys.exit(f"proposal {proposal_id} is not in this reviewer's queue")
