"""A secret an agent hands to the MCP server is refused by Custodian; the MCP process stores nothing.

The MCP process reaches Custodian only over REST: the refusal is the REST answer, relayed as a
tool error that names the code, never the secret.
"""

import anyio
import pytest

from evidence.models import EvidenceRevision
from proposals.models import Proposal
from tests.database_scan import tables_holding
from tests.mcp.test_mcp_server import _stdio_session, _text, mcp_env

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_secret_through_mcp_remember_is_refused_and_stored_nowhere(live_server, agent, key, tmp_path):
    other = "AKIA" + key[4:][::-1]

    async def run() -> tuple[object, object]:
        async with _stdio_session(mcp_env(live_server.url, agent.token, tmp_path), tmp_path) as session:
            await session.initialize()
            in_statement = await session.call_tool(
                "remember",
                {"statement": f"Alice's deploy key is {key}", "evidence_text": "She pasted it in chat."},
            )
            in_evidence = await session.call_tool(
                "remember",
                {"statement": "Alice prefers weekly summaries", "evidence_text": f"key={other}"},
            )
            return in_statement, in_evidence

    in_statement, in_evidence = anyio.run(run)
    for result, secret in ((in_statement, key), (in_evidence, other)):
        assert result.is_error and "secret_detected" in _text(result), _text(result)
        assert secret not in _text(result)
        assert tables_holding(secret) == []
    denied = Proposal.objects.get()
    assert (denied.matched_rule, denied.status) == ("deny-secret", "denied")
    assert EvidenceRevision.objects.count() == 1  # the first call's evidence; the second was refused
