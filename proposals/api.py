"""REST endpoints for agents' proposals."""

import functools
from typing import cast

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import CreatedCursorPagination
from core.api.problems import problem_response
from core.api.serializers import ChoiceField, Sha256Field, StrictSerializer
from core.canonical import digest
from core.errors import DomainError
from evidence.selectors import binding_statuses
from memory_core.api import READ_CONTEXT_PARAMETERS, PolicyContextInput, SubjectInput, read_context
from memory_core.models import Entity, Memory
from proposals.filters import ProposalFilter
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.presenters import (
    UNRESOLVED,
    ReadView,
    attach_submitted_views,
    attach_views,
    shown_proposal,
)
from proposals.selectors import dedupe_conflicts, proposal_detail, proposal_list
from proposals.services import Submission, amend_proposal, submit_proposal, withdraw_proposal
from tenancy.authentication import request_agent
from tenancy.models import Agent


class IdempotencyKeyRequired(DomainError):
    code = "idempotency_key_required"
    status = 400
    title = "Send an Idempotency-Key header (1-200 printable characters)"


def valid_idempotency_key(key: str) -> bool:
    return 0 < len(key) <= 200 and key.isprintable()


class _MemoryFieldsInput(StrictSerializer, serializers.ModelSerializer):
    # The memory fields a proposal may set, built from the Memory model's columns. Input only
    # (a docstring here would become the schema's description): save() is refused, since
    # memories are written by the executor alone.

    serializer_choice_field = ChoiceField

    class Meta:
        model = Memory
        fields = Memory.CHANGEABLE_FIELDS
        # What the columns do not say: the bounds an agent may propose.
        extra_kwargs = {
            "confidence": {"min_value": 0, "max_value": 1},
            "ttl_seconds": {"max_value": 10 * 365 * 86400},
        }

    def validate(self, attrs):
        if attrs.get("valid_from") and attrs.get("valid_to") and attrs["valid_to"] < attrs["valid_from"]:
            raise serializers.ValidationError({"valid_to": ["Must not be before valid_from."]})
        return attrs

    def save(self, **kwargs):
        raise NotImplementedError("Proposals write no memory; submit_proposal takes validated_data.")


class MemoryCreateInput(_MemoryFieldsInput):
    subject = SubjectInput()

    class Meta(_MemoryFieldsInput.Meta):
        fields = Memory.PROPOSED_FIELDS


class MemoryChangesInput(_MemoryFieldsInput):
    content = serializers.JSONField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Propose at least one change.")
        return super().validate(attrs)


class EvidenceBindingInput(StrictSerializer):
    evidence_id = serializers.UUIDField()
    revision = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    content_hash = Sha256Field()


class LinkInput(StrictSerializer):
    """The other end is a memory at an exact revision, or one of the tenant's entities (``about`` only)."""

    to_memory_id = serializers.UUIDField(
        required=False, help_text="the other memory (same tenant and scope), with to_revision"
    )
    to_revision = serializers.IntegerField(min_value=1, max_value=2**31 - 1, required=False)
    to_entity_id = serializers.UUIDField(
        required=False, help_text="or: the canonical entity this memory is about (relation about)"
    )
    relation = serializers.CharField(max_length=32, help_text="allowlisted by the source type's registration")

    def validate(self, attrs):
        if "to_entity_id" in attrs:
            extra = [name for name in ("to_memory_id", "to_revision") if name in attrs]
            if extra:
                raise serializers.ValidationError(
                    {name: ["Not allowed with to_entity_id."] for name in extra}
                )
            return attrs
        missing = [name for name in ("to_memory_id", "to_revision") if name not in attrs]
        if missing:
            raise serializers.ValidationError(
                {name: ["Required unless to_entity_id names the other end."] for name in missing}
            )
        return attrs


class EntityInput(StrictSerializer):
    kind = ChoiceField(choices=Entity.Kind.choices, required=False, help_text="entity_create")
    name = serializers.CharField(max_length=300, required=False, help_text="entity_create")
    aliases = serializers.ListField(
        child=serializers.CharField(max_length=300), max_length=20, required=False, help_text="entity_create"
    )
    entity_id = serializers.UUIDField(
        required=False, help_text="entity_merge (the one redirected), entity_unmerge"
    )
    into_entity_id = serializers.UUIDField(required=False, help_text="entity_merge: the winner")

    _NEEDED = {"entity_create": ["kind", "name"], "entity_merge": ["entity_id", "into_entity_id"]}

    def needed(self, action: str) -> list[str]:
        return self._NEEDED.get(action, ["entity_id"])


class ProposalSubmitInput(StrictSerializer):
    action = ChoiceField(
        choices=[
            (value, label)
            for value, label in Proposal.Action.choices
            if value not in (*Proposal.SYSTEM_ACTIONS, *Proposal.OWN_ENDPOINT_ACTIONS)
        ]
    )
    memory = MemoryCreateInput(required=False, help_text="create: the new memory")
    memory_id = serializers.UUIDField(
        required=False, help_text="update and lifecycle verbs: the target memory"
    )
    base_revision = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        required=False,
        help_text="update and lifecycle verbs: the revision it was computed against",
    )
    changes = MemoryChangesInput(required=False, help_text="update: the fields to change")
    entity = EntityInput(required=False, help_text="entity_create, entity_merge, entity_unmerge")
    link = LinkInput(
        required=False, help_text="link: the typed link from memory_id to another memory or an entity"
    )
    evidence = EvidenceBindingInput(many=True, required=False, max_length=100)  # type: ignore[call-arg]
    policy_context = PolicyContextInput(required=False)
    rationale = serializers.CharField(max_length=10000, required=False, allow_blank=True)
    reason = serializers.CharField(
        max_length=2000, required=False, help_text="expire/revoke/delete/purge/restore: why"
    )

    _TARGETED = ["memory_id", "base_revision"]
    _NEEDED = {"create": ["memory"], "update": [*_TARGETED, "changes"], "link": [*_TARGETED, "link"]}
    _FORBIDDEN = {
        "create": [*_TARGETED, "changes", "reason", "link", "entity"],
        "update": ["memory", "reason", "link", "entity"],
        "link": ["memory", "changes", "reason", "entity"],
    }
    _ENTITY_FORBIDDEN = [*_TARGETED, "memory", "changes", "reason", "link"]

    def validate(self, attrs):
        action = attrs["action"]
        needed = self._NEEDED.get(action, [*self._TARGETED, "reason"])
        forbidden = self._FORBIDDEN.get(action, ["memory", "changes", "link", "entity"])
        if action in Proposal.ENTITY_ACTIONS:
            needed, forbidden = ["entity"], self._ENTITY_FORBIDDEN
        errors = {name: ["Required for this action."] for name in needed if name not in attrs}
        errors |= {name: ["Not allowed for this action."] for name in forbidden if name in attrs}
        if errors:
            raise serializers.ValidationError(errors)
        if action in Proposal.ENTITY_ACTIONS:
            entity = attrs["entity"]
            missing = [name for name in EntityInput().needed(action) if name not in entity]
            if missing:
                raise serializers.ValidationError(
                    {"entity": {name: ["Required for this action."] for name in missing}}
                )
        return attrs


class AdmissionFindingOutput(serializers.Serializer):
    detector = serializers.CharField(help_text="credentials, personal_data or injection")
    version = serializers.CharField(help_text="the detector's version (part of the policy fingerprint)")
    field = serializers.CharField(
        help_text="the field path: memory.content.…, rationale, observation.text, evidence[…]"
    )
    kind = serializers.CharField(help_text="what was found: aws_access_key, email, instruction, …")
    start = serializers.IntegerField(help_text="where in the field it starts (characters)")
    end = serializers.IntegerField(help_text="where it ends")
    encoding = serializers.CharField(help_text="plain, base64, hex, or joined (split across fields)")

    class Meta:
        ref_name = "AdmissionFinding"


class ProposalOutput(serializers.ModelSerializer):
    """A proposal in the view attached to it (``proposals.presenters``); without one, metadata only."""

    memory_id = serializers.UUIDField(source="target_id")
    submitted_by = serializers.CharField(source="submitted_by.name")
    view = serializers.SerializerMethodField(
        help_text="raw, summary, masked or metadata_only: the view fields, rationale, evidence and "
        "policy_context are shown in (the read policy's, for the memory the proposal asserts)"
    )
    view_rule = serializers.SerializerMethodField(help_text="the read rule that chose the view")
    admission_findings = AdmissionFindingOutput(
        many=True,
        read_only=True,
        help_text="what the admission firewall found in the text and the cited evidence (never the text)",
    )

    class Meta:
        model = Proposal
        fields = [
            "id",
            "version",
            "action",
            "memory_id",
            "base_revision",
            "status",
            "outcome",
            "classification",
            "required_approvals",
            "matched_rule",
            "reason_codes",
            "admission_findings",
            "policy_version",
            "policy_fingerprint",
            "registration_version",
            "action_digest",
            "review_deadline",
            "fields",
            "evidence",
            "policy_context",
            "rationale",
            "submitted_by",
            "created_at",
            "updated_at",
            "view",
            "view_rule",
        ]

    def get_view(self, proposal: Proposal) -> str:
        return _read_view(proposal).mode

    def get_view_rule(self, proposal: Proposal) -> str:
        return _read_view(proposal).rule.id

    def to_representation(self, instance):
        return shown_proposal(super().to_representation(instance), getattr(instance, "read_view", None))


def _read_view(proposal: Proposal) -> ReadView:
    return getattr(proposal, "read_view", None) or ReadView(UNRESOLVED)


@functools.cache
def _submit_input() -> ProposalSubmitInput:
    # One instance per process: DRF builds (deep-copies, introspects the model for) a serializer's
    # nested fields on first use of each instance, which was a third of a submission's CPU.
    # Validation keeps no state on the instance, as ListSerializer's shared child relies on too.
    return ProposalSubmitInput()


def validated_submission(data) -> ProposalPayload:
    """Validate a submission body as ``ProposalSubmitInput`` (raises DRF's ValidationError)."""
    return cast(ProposalPayload, run_validation(_submit_input(), data))


def run_validation(serializer: serializers.Serializer, data) -> dict:
    """Validate ``data`` with a shared serializer; errors keyed by field, as ``is_valid`` keys them."""
    try:
        return serializer.run_validation(data)
    except serializers.ValidationError as exc:
        raise serializers.ValidationError(serializers.as_serializer_error(exc)) from None


@functools.cache
def _proposal_output() -> ProposalOutput:
    return ProposalOutput()  # built once, as the input above


def proposal_json(proposal: Proposal) -> dict:
    """Return the ``ProposalOutput`` of ``proposal`` in its attached view (``proposals.presenters``)."""
    return _proposal_output().to_representation(proposal)


_EVIDENCE = [
    {
        "evidence_id": "5b1f8a52-7d1e-4c5e-9a43-0f6b2c1d9e77",
        "revision": 1,
        "content_hash": "9f2c4e7a1b3d5f6081726354a9b8c7d6e5f40312a1b2c3d4e5f60718293a4b5c",
    }
]
_TARGET = {"memory_id": "0e4c7b8a-2f13-4d6e-8a91-5c3b2d1e0f9a", "base_revision": 1}
SUBMIT_EXAMPLES = [
    OpenApiExample(
        "create",
        summary="create: a user's own preference",
        value={
            "action": "create",
            "memory": {
                "subject": {"kind": "user", "id": "pm-alice"},
                "scope": "user",
                "type": "preference",
                "content": {
                    "statement": "Alice prefers weekly summaries",
                    "preference_key": "summary_cadence",
                    "preference_value": "weekly",
                },
            },
            "evidence": _EVIDENCE,
            "policy_context": {
                "acting_for_subject": {"kind": "user", "id": "pm-alice"},
                "consent_basis": "explicit",
                "risk_level": "low",
            },
        },
        request_only=True,
    ),
    OpenApiExample(
        "update",
        summary="update: change fields of an existing memory at the revision it was read at",
        value={
            "action": "update",
            **_TARGET,
            "changes": {"content": {"statement": "Alice prefers daily summaries"}},
            "evidence": _EVIDENCE,
            "rationale": "Alice said so in today's chat",
        },
        request_only=True,
    ),
    *(
        OpenApiExample(
            verb,
            summary=f"{verb}: a lifecycle verb with its reason",
            value={"action": verb, **_TARGET, "reason": reason},
            request_only=True,  # a body to send: the 201 answers a proposal, not this
        )
        for verb, reason in [
            ("expire", "the quarter it described has ended"),
            ("revoke", "the backtest it rested on had look-ahead bias"),
            ("delete", "Alice withdrew it"),
            ("purge", "erasure request 2026-118"),
            ("restore", "expired by mistake"),
        ]
    ),
]


class ProposalSubmitApi(APIView):
    """Submit a zero-write proposal. Denied proposals are stored for audit and answered 422.

    The 201 shows the proposal as a later read would show it to the caller, in the
    ``policy_context`` it sent (a confidential memory proposed without acting for its
    subject comes back masked; ``view`` says which view).
    """

    @extend_schema(
        summary="Submit a proposal",
        request=ProposalSubmitInput,
        examples=SUBMIT_EXAMPLES,
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=True)],
        responses={
            201: ProposalOutput,
            422: OpenApiResponse(description="Denied by policy (problem+json, proposal_id)"),
        },
    )
    def post(self, request):
        """Submit a zero-write proposal, bound to exact evidence revisions; nothing is written to memory.

        Denied proposals are stored for audit and answered 422. The 201 shows the proposal as a
        later read would show it to the caller, in the `policy_context` it sent.
        """
        key = request.headers.get("Idempotency-Key", "")
        if not valid_idempotency_key(key):
            raise IdempotencyKeyRequired()
        submission = submit_proposal(
            agent=request.user,
            idempotency_key=key,
            payload=validated_submission(request.data),
            request_hash=digest(request.data),
        )
        return submission_response(submission, request.user)


def submission_response(submission: Submission, agent: Agent) -> Response:
    """Answer a submission: 201 with the proposal, or 422 problem+json if policy denied it.

    The proposal is shown as any later read would show it to ``agent``, in the
    context it sent with it (``proposals.presenters.submitted_context``): a
    confidential memory proposed without acting for its subject is answered
    masked. A batch attaches every item's view first, in one read.
    """
    proposal = submission.proposal
    if getattr(proposal, "read_view", None) is None:
        attach_submitted_views(agent, [(proposal, submission.replayed)])
    if proposal.status == Proposal.Status.DENIED:
        response = problem_response(
            422,
            proposal.reason_codes[0],
            "Denied by policy",
            f"Rule {proposal.matched_rule} denied this proposal.",
            proposal_id=str(proposal.id),
            reason_codes=proposal.reason_codes,
            policy_fingerprint=proposal.policy_fingerprint,
            **_evidence_problems(proposal),
            **_dedupe_problems(proposal),
            **({"findings": proposal.admission_findings} if proposal.admission_findings else {}),
        )
    else:
        response = Response(proposal_json(proposal), status=status.HTTP_201_CREATED)
    if submission.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


def _evidence_problems(proposal: Proposal) -> dict:
    """Name each cited evidence revision that is not valid, so the agent knows which one to fix."""
    if proposal.policy_facts.get("evidence") in ("valid", "none"):
        return {}
    checked = binding_statuses(tenant=proposal.tenant, bindings=proposal.evidence)
    return {
        "evidence": [
            {"evidence_id": binding["evidence_id"], "revision": binding["revision"], "status": status}
            for binding, status, _ in checked
            if status != "valid"
        ]
    }


def _dedupe_problems(proposal: Proposal) -> dict:
    """Name the active memory holding the dedupe key, so the agent can propose an update of it."""
    if proposal.policy_facts.get("dedupe") in (None, "none"):
        return {}
    held_by = dedupe_conflicts(proposal).memories
    return {"held_by": [{"memory_id": str(memory.pk), "revision": memory.revision} for memory in held_by]}


class ProposalListApi(ListAPIView):
    """The tenant's proposals, newest first; ``?status=`` and ``?classification=`` narrow them."""

    queryset = Proposal.objects.none()  # names the model for the schema; get_queryset scopes it
    serializer_class = ProposalOutput
    pagination_class = CreatedCursorPagination
    filterset_class = ProposalFilter

    def get_queryset(self):
        return proposal_list(tenant=request_agent(self.request).tenant).select_related("submitted_by")

    @extend_schema(summary="List proposals", parameters=READ_CONTEXT_PARAMETERS)
    def get(self, request, *args, **kwargs):
        """The tenant's proposals, newest first; `?status=` and `?classification=` narrow them."""
        self.read_context = read_context(request)  # refused (403) before anything is listed
        return self.list(request, *args, **kwargs)

    def paginate_queryset(self, queryset):
        return attach_views(super().paginate_queryset(queryset) or [], self.read_context)


class ProposalDetailApi(APIView):
    """One proposal of the tenant, in the view the read policy gives the caller (``?acting_for=``)."""

    @extend_schema(summary="Get a proposal", parameters=READ_CONTEXT_PARAMETERS, responses=ProposalOutput)
    def get(self, request, proposal_id):
        context = read_context(request)
        proposal = proposal_detail(tenant=request.user.tenant, proposal_id=proposal_id)
        return Response(proposal_json(*attach_views([proposal], context)))


class ProposalWithdrawApi(APIView):
    """Withdraw an open proposal; answered in the caller's view, as a read (``?acting_for=``)."""

    @extend_schema(
        summary="Withdraw a proposal",
        parameters=READ_CONTEXT_PARAMETERS,
        request=None,
        responses=ProposalOutput,
    )
    def post(self, request, proposal_id):
        context = read_context(request)
        proposal = proposal_detail(tenant=request.user.tenant, proposal_id=proposal_id)
        proposal = withdraw_proposal(agent=request.user, proposal=proposal)
        return Response(proposal_json(*attach_views([proposal], context)))


class ProposalCollectionApi(ProposalSubmitApi, ProposalListApi):
    """``/proposals/``: POST submits, GET lists (one URL, two operations)."""


class ProposalAmendApi(APIView):
    """Replace the action of a proposal a reviewer returned with request_changes."""

    @extend_schema(
        summary="Amend a returned proposal", request=ProposalSubmitInput, responses={200: ProposalOutput}
    )
    def post(self, request, proposal_id):
        proposal = proposal_detail(tenant=request.user.tenant, proposal_id=proposal_id)
        proposal = amend_proposal(
            agent=request.user, proposal=proposal, payload=validated_submission(request.data)
        )
        attach_submitted_views(request.user, [(proposal, False)])  # its context was bound just now
        return Response(proposal_json(proposal))
