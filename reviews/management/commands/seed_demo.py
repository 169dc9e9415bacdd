"""Load a demo tenant: a research agent, a PM, an auditor, evidence and proposals.

Everything goes through the real services, so auto proposals reach the
outbox and the running executor applies them within seconds.
"""

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from guardian.shortcuts import assign_perm

from core.canonical import digest
from evidence.services import register_evidence
from proposals.payloads import ProposalPayload
from proposals.services import submit_proposal
from provenance.services import add_evidence_revision
from reviews.selectors import AUDIT, DECIDE
from tenancy.models import Tenant
from tenancy.services import create_tenant, grant_delegation, issue_agent_token

TENANT = "quant-research"


class Command(BaseCommand):
    help = "Create the demo tenant, people, evidence and proposals (skipped if it exists)."

    def handle(self, *args, **options):
        if Tenant.objects.filter(name=TENANT).exists():
            tenant = Tenant.objects.get(name=TENANT)
            _, raw = issue_agent_token(tenant=tenant, agent_name="research-agent")
            self.stdout.write(f"Demo tenant exists. New agent token: {raw}")
            return
        raw = self._seed()
        self.stdout.write(
            "Demo loaded.\n"
            f"  agent token (research-agent): {raw}\n"
            "  logins: pm/pm and pm2/pm2 (reviewers), auditor/auditor, admin/admin (superuser)\n"
            "  review UI: http://127.0.0.1:8000/review/\n"
            "  try: curl -H 'Authorization: Bearer <token>' http://127.0.0.1:8000/api/v1/proposals/"
        )

    def _seed(self) -> str:
        tenant = create_tenant(name=TENANT)
        token, raw = issue_agent_token(tenant=tenant, agent_name="research-agent")
        agent = token.agent
        # The operator lets the research agent act for Alice and for the desk (nothing else).
        for subject in ({"kind": "user", "id": "pm-alice"}, {"kind": "org", "id": "quant-desk"}):
            grant_delegation(agent=agent, subject=subject, reason="demo: research assistant")
        User.objects.create_superuser("admin", "admin@example.com", "admin")
        for name, group, perm in [
            ("pm", "reviewers", DECIDE),
            ("pm2", "reviewers", DECIDE),
            ("auditor", "auditors", AUDIT),
        ]:
            user = User.objects.create_user(name, f"{name}@example.com", name, is_staff=True)
            user.groups.add(Group.objects.get(name=group))
            assign_perm(perm, user, tenant)

        backtest = register_evidence(
            agent=agent,
            kind="backtest_run",
            external_ref="bt/momentum_12_1/2026-11-27",
            content={"factor": "momentum_12_1", "universe": "CSI800", "ic_mean": 0.031, "ic_ir": 0.41},
        )
        backtest_v2 = add_evidence_revision(
            source=backtest.source,
            agent=agent,
            content={
                "factor": "momentum_12_1",
                "universe": "CSI800",
                "neutralised": "industry",
                "ic_mean": 0.012,
                "ic_ir": 0.09,
            },
        )
        chat = register_evidence(
            agent=agent,
            kind="conversation",
            external_ref="chat/alice/2026-11-28",
            content={"speaker": "pm-alice", "text": "Please send me weekly summaries, not daily."},
        )
        alice = {"kind": "user", "id": "pm-alice"}
        alice_context = {"acting_for_subject": alice, "consent_basis": "explicit", "risk_level": "low"}
        proposals: list[ProposalPayload] = [
            # auto_apply: Alice's own explicit preference
            {
                "action": "create",
                "evidence": [chat.binding()],
                "policy_context": alice_context,
                "memory": {
                    "subject": alice,
                    "scope": "user",
                    "type": "preference",
                    "content": {
                        "statement": "Alice prefers weekly summaries",
                        "preference_key": "summary_cadence",
                        "preference_value": "weekly",
                    },
                },
            },
            {
                "action": "create",
                "evidence": [chat.binding()],
                "policy_context": alice_context,
                "memory": {
                    "subject": alice,
                    "scope": "user",
                    "type": "preference",
                    "content": {
                        "statement": "Alice wants IC tables as rank IC",
                        "preference_key": "ic_metric",
                        "preference_value": "rank_ic",
                    },
                },
            },
            # policy_gated: an episodic event
            {
                "action": "create",
                "evidence": [backtest_v2.binding()],
                "policy_context": alice_context,
                "memory": {
                    "subject": alice,
                    "scope": "user",
                    "type": "episodic_event",
                    "content": {"statement": "Backtest of momentum_12_1 rerun with industry neutralisation"},
                },
            },
            # review_required: a factor conclusion for the whole desk
            {
                "action": "create",
                "evidence": [backtest_v2.binding()],
                "policy_context": {
                    "acting_for_subject": {"kind": "org", "id": "quant-desk"},
                    "risk_level": "medium",
                },
                "rationale": "IC falls from 0.031 to 0.012 (IR 0.41 to 0.09) once industry-neutralised.",
                "memory": {
                    "subject": {"kind": "org", "id": "quant-desk"},
                    "scope": "org",
                    "type": "semantic_fact",
                    "dedupe_key": "factor:momentum_12_1:ic_stability",
                    "confidence": 0.7,
                    "content": {
                        "statement": "momentum_12_1 shows unstable IC after industry neutralisation",
                        "factor": "momentum_12_1",
                        "universe": "CSI800",
                        "horizon": "20d",
                        "metric": "rank_ic",
                        "value": 0.012,
                        "conclusion": "unstable after neutralisation",
                    },
                },
            },
            # denied: cites the superseded revision 1
            {
                "action": "create",
                "evidence": [backtest.binding()],
                "policy_context": alice_context,
                "memory": {
                    "subject": alice,
                    "scope": "user",
                    "type": "preference",
                    "content": {"statement": "Alice trusts momentum_12_1"},
                },
            },
        ]
        for number, payload in enumerate(proposals, start=1):
            submit_proposal(
                agent=agent, idempotency_key=f"demo-{number}", payload=payload, request_hash=digest(payload)
            )
        return raw
