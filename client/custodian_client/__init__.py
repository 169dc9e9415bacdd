"""custodian-client: a typed Python client for Custodian, governed memory for AI agents.

from custodian_client import Custodian
with Custodian("http://127.0.0.1:8000", token) as custodian:
    evidence = custodian.register_evidence("conversation", "chat/42", {"text": "Weekly, please."})
    proposal = custodian.propose("create", memory={...}, evidence=[evidence])
    receipt = custodian.wait_for_receipt(proposal["id"])
    # or all three in one call, with the shared defaults (custodian_client.remember):
    outcome = custodian.remember("Alice prefers weekly summaries", about="user:pm-alice")
"""

from custodian_client._core import RetryEvent, RetryPolicy, binding
from custodian_client.aio import AsyncCustodian
from custodian_client.client import Custodian
from custodian_client.errors import CustodianError, ProposalClosed, ProposalDenied, WaitTimeout
from custodian_client.remember import REMEMBER_DEFAULTS
from custodian_client.types import Remembered

__all__ = [
    "REMEMBER_DEFAULTS",
    "AsyncCustodian",
    "Custodian",
    "CustodianError",
    "ProposalClosed",
    "ProposalDenied",
    "Remembered",
    "RetryEvent",
    "RetryPolicy",
    "WaitTimeout",
    "binding",
]
__version__ = "0.1.0"
