"""REST endpoints to ask for an erasure, follow it, and take its certificate away.

An erasure is a proposal like any other (action ``erase``): the server plans it,
the rule set judges it (``review-erasure``: two approvals by default), reviewers
decide on the plan as one list, and the executor applies it with a receipt per
purged memory and a certificate last. These endpoints are its requester's view.
"""

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.problems import problem_response
from core.api.serializers import StrictSerializer
from core.canonical import digest
from core.errors import DomainError
from erasure.selectors import certificate_receipt, erasure_for, erasure_receipts
from executor.export import jsonl_lines
from executor.models import Receipt
from memory_core.api import SubjectInput
from proposals.api import IdempotencyKeyRequired, run_validation, valid_idempotency_key
from proposals.models import Proposal
from proposals.services import submit_proposal
from tenancy.authentication import request_agent


class ErasureNotCertified(DomainError):
    code = "erasure_not_certified"
    status = 409
    title = "The erasure has not been applied yet, so it has no certificate"


class SourceInput(StrictSerializer):
    evidence_id = serializers.UUIDField(help_text="an evidence source you registered")


class ErasureRequestInput(StrictSerializer):
    subject = SubjectInput(required=False, help_text="whom to forget: every memory about this subject goes")
    # The metaclass takes declared fields off the class, so this never shadows Field.source.
    source = SourceInput(  # type: ignore[assignment]
        required=False, help_text="what to retract: its content and every memory resting on it go"
    )
    reason = serializers.CharField(max_length=2000, help_text="why, as the reviewers and auditors read it")

    def validate(self, attrs):
        if ("subject" in attrs) == ("source" in attrs):
            raise serializers.ValidationError({"subject": ["Name a subject or a source, not both."]})
        return attrs


def erasure_of(data: dict[str, Any]) -> dict[str, Any]:
    """The payload's ``erasure`` from a validated request: what it names, as plain JSON values."""
    if "subject" in data:
        return {"subject": {"kind": data["subject"]["kind"], "id": data["subject"]["id"]}}
    return {"source": {"evidence_id": str(data["source"]["evidence_id"])}}


class ErasureOutput(serializers.Serializer):
    """An erasure as its requester reads it. Memories are named by id, revision and content hash only."""

    erasure_id = serializers.UUIDField()
    status = serializers.CharField(help_text="the proposal's status: pending_review, applied, …")
    classification = serializers.CharField()
    required_approvals = serializers.IntegerField()
    matched_rule = serializers.CharField()
    erasure_of = serializers.JSONField(
        help_text="the subject (kind and id; once applied, a keyed digest of the id) or the source"
    )
    reason = serializers.CharField()
    plan = serializers.JSONField(
        help_text="members (memory_id, revision, content_hash, type, state, because), …"
    )
    receipts = serializers.ListField(child=serializers.UUIDField(), help_text="in chain order")
    certificate = serializers.JSONField(
        allow_null=True,
        help_text="once applied: what went, the scan, exports, the records pseudonymised and grants revoked",
    )


def erasure_json(erasure: Proposal, receipts: list[Receipt]) -> dict[str, Any]:
    fields = erasure.fields or {}
    certified = certificate_receipt(receipts)
    certificate = None
    if certified is not None:
        certificate = {
            **certified.effects["erasure"],
            "receipt_id": str(certified.pk),
            "seq": certified.seq,
            "hash": certified.hash,
        }
    return {
        "erasure_id": str(erasure.pk),
        "status": erasure.status,
        "classification": erasure.classification,
        "required_approvals": erasure.required_approvals,
        "matched_rule": erasure.matched_rule,
        "erasure_of": fields.get("erasure"),
        "reason": fields.get("reason", ""),
        "plan": {name: fields.get(name, []) for name in ("members", "proposals", "resummarised")},
        "receipts": [str(receipt.pk) for receipt in receipts],
        "certificate": certificate,
    }


class ErasureCollectionApi(APIView):
    @extend_schema(
        summary="Ask to erase a subject",
        request=ErasureRequestInput,
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=True)],
        responses={
            201: ErasureOutput,
            403: OpenApiResponse(description="erasure_not_allowed: no live grant to act for the subject"),
            422: OpenApiResponse(description="Denied by policy, or the plan is too large (problem+json)"),
        },
    )
    def post(self, request):
        """Plan the erasure of every memory about a subject and send the plan to review.

        Nothing is removed until reviewers approve the plan (two by default) and the
        executor applies it. Only an agent holding a live grant to act for the subject may ask.
        """
        key = request.headers.get("Idempotency-Key", "")
        if not valid_idempotency_key(key):
            raise IdempotencyKeyRequired()
        data = run_validation(ErasureRequestInput(), request.data)
        submission = submit_proposal(
            agent=request_agent(request),
            idempotency_key=key,
            payload={"action": Proposal.Action.ERASE, "erasure": erasure_of(data), "reason": data["reason"]},
            request_hash=digest(request.data),
        )
        erasure = submission.proposal
        if erasure.status == Proposal.Status.DENIED:
            return problem_response(
                422,
                erasure.reason_codes[0],
                "Denied by policy",
                f"Rule {erasure.matched_rule} denied this erasure.",
                erasure_id=str(erasure.pk),
            )
        response = Response(erasure_json(erasure, []), status=status.HTTP_201_CREATED)
        if submission.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


class ErasureDetailApi(APIView):
    @extend_schema(summary="Get an erasure", responses=ErasureOutput)
    def get(self, request, erasure_id):
        """Where the erasure stands; once applied, its certificate (ids and hashes, never content)."""
        erasure = erasure_for(agent=request_agent(request), erasure_id=erasure_id)
        return Response(erasure_json(erasure, erasure_receipts(erasure)))


class ErasureCertificateApi(APIView):
    @extend_schema(
        summary="Download an erasure's certificate",
        responses={
            (200, "application/jsonl"): OpenApiResponse(
                description="a receipt export: verify_export checks it"
            ),
            409: OpenApiResponse(description="erasure_not_certified"),
        },
    )
    def get(self, request, erasure_id):
        """The erasure's receipts as a receipt export, to verify offline with ``manage.py verify_export``."""
        erasure = erasure_for(agent=request_agent(request), erasure_id=erasure_id)
        if certificate_receipt(erasure_receipts(erasure)) is None:
            raise ErasureNotCertified()
        receipts = Receipt.objects.filter(tenant_id=erasure.tenant_id, proposal=erasure)
        lines = jsonl_lines(
            receipts, exported_by=request_agent(request).name, filters=f"erasure={erasure.pk}"
        )
        response = StreamingHttpResponse(lines, content_type="application/jsonl; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="erasure-{erasure.pk}.jsonl"'
        return response
