"""``POST /api/v1/proposals/batch``: many proposals in one request, one answer per item, in order.

Each item goes through exactly the path of a single submit (the same input
serializer, ``submit_proposal`` with its own durable transaction, idempotency
key and outbox row), so a batch grants no guarantee less than N single posts:
an item refused or denied is reported in its place while the others stand.
The same key and body replays whether it came singly or in a batch, and
each item counts against the caller's rate as its single post would.
"""

import functools

from django.conf import settings
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.problems import problem_exception_handler
from core.api.serializers import StrictSerializer
from core.canonical import digest
from core.errors import DomainError
from proposals.api import (
    SUBMIT_EXAMPLES,
    IdempotencyKeyRequired,
    ProposalOutput,
    ProposalSubmitInput,
    run_validation,
    submission_response,
    valid_idempotency_key,
    validated_submission,
)
from proposals.presenters import attach_submitted_views
from proposals.services import BatchItem, Submission, submit_proposals
from tenancy.models import Agent
from tenancy.throttling import charge


class BatchTooLarge(DomainError):
    code = "batch_too_large"
    status = 413
    title = "Too many proposals in one batch"


@extend_schema_field(ProposalSubmitInput)
class _ProposalBody(serializers.DictField):
    """An object checked item by item (as ProposalSubmitInput), so one bad item fails alone."""


class BatchItemInput(StrictSerializer):
    idempotency_key = serializers.CharField(
        max_length=200, trim_whitespace=False, help_text="This item's own key (1-200 printable characters)"
    )
    proposal = _ProposalBody(help_text="The body a single POST /api/v1/proposals/ would take")


class BatchSubmitInput(StrictSerializer):
    items = serializers.ListField(child=serializers.DictField(), min_length=1)

    class Meta:
        ref_name = "ProposalBatchInput"


@extend_schema_field({"type": "object", "description": "The proposal (201/200) or a problem (4xx)"})
class _ItemBody(serializers.DictField):
    pass


class BatchItemResult(serializers.Serializer):
    index = serializers.IntegerField()
    idempotency_key = serializers.CharField(allow_blank=True)
    status = serializers.IntegerField(help_text="201 created, 200 replayed, or the item's 4xx")
    replayed = serializers.BooleanField()
    proposal = ProposalOutput(required=False, help_text="When status is 201 or 200")
    problem = _ItemBody(required=False, help_text="problem+json of the item, when status is 4xx")


class BatchSubmitOutput(serializers.Serializer):
    results = BatchItemResult(many=True)
    created = serializers.IntegerField()
    replayed = serializers.IntegerField()
    refused = serializers.IntegerField(help_text="Items answered 4xx, including policy denials (422)")


class ProposalBatchSubmitApi(APIView):
    """Submit up to CUSTODIAN_MAX_BATCH_ITEMS proposals, each with its own idempotency key.

    The answer is 200 with one result per item, in the items' order: 201 (created), 200 (a replay
    of the same key and body) or the 4xx problem a single submit would have answered. Items are
    independent: a refused item does not roll back the others.
    """

    extra_json_depth = 3  # {"items": [{"proposal": …}]}: a proposal nests as deep as a single submit

    @property
    def max_body_bytes(self) -> int:
        return settings.CUSTODIAN_MAX_BATCH_BODY_BYTES

    @extend_schema(
        summary="Submit proposals in a batch",
        operation_id="proposals_batch_create",
        request=BatchSubmitInput,
        responses={200: BatchSubmitOutput},
        examples=[
            OpenApiExample(
                "batch",
                summary="two proposals, each with its own key",
                value={
                    "items": [
                        {"idempotency_key": f"turn-{n}", "proposal": example.value}
                        for n, example in enumerate(SUBMIT_EXAMPLES[:2], 1)
                    ]
                },
                request_only=True,
            )
        ],
    )
    def post(self, request):
        envelope = BatchSubmitInput(data=request.data)
        envelope.is_valid(raise_exception=True)
        items = envelope.validated_data["items"]
        if len(items) > settings.CUSTODIAN_MAX_BATCH_ITEMS:
            raise BatchTooLarge(f"Send at most {settings.CUSTODIAN_MAX_BATCH_ITEMS} items per batch")
        charge(self, request, len(items) - 1)  # each item costs what its single POST would
        checked = [_check_item(item) for item in items]
        valid = [entry for entry in checked if isinstance(entry, BatchItem)]
        submitted = submit_proposals(agent=request.user, items=valid)
        done = [(out.proposal, out.replayed) for out in submitted if isinstance(out, Submission)]
        attach_submitted_views(request.user, done)
        outcomes = iter(submitted)
        results = [
            _result(request.user, index, item, next(outcomes) if isinstance(entry, BatchItem) else entry)
            for index, (item, entry) in enumerate(zip(items, checked, strict=True))
        ]
        return Response(
            {
                "results": results,
                "created": sum(result["status"] == 201 for result in results),
                "replayed": sum(result["replayed"] for result in results),
                "refused": sum(result["status"] >= 400 for result in results),
            }
        )


def _check_item(item: dict) -> BatchItem | Exception:
    """Validate one item as a single POST would be validated; return the error instead of raising it."""
    key = item.get("idempotency_key")
    if not (isinstance(key, str) and valid_idempotency_key(key)):
        return IdempotencyKeyRequired("Each item needs an idempotency_key (1-200 printable characters)")
    try:
        body = run_validation(_item_input(), item)["proposal"]
        return BatchItem(key, validated_submission(body), digest(body))
    except serializers.ValidationError as exc:
        return exc


@functools.cache
def _item_input() -> BatchItemInput:
    return BatchItemInput()  # built once per process, as proposals.api's input serializer


def _result(agent: Agent, index: int, item: dict, outcome: Submission | Exception) -> dict:
    """Report one item's answer: what a single submit would have answered, as data (in its view)."""
    key = item.get("idempotency_key")
    result: dict = {"index": index, "idempotency_key": key if isinstance(key, str) else "", "replayed": False}
    if isinstance(outcome, Submission):
        response = submission_response(outcome, agent)
        result["replayed"] = outcome.replayed
    else:
        response = problem_exception_handler(outcome, {})
    if response.status_code < 400:
        result["status"] = 200 if result["replayed"] else response.status_code
        result["proposal"] = response.data
    else:
        result["status"] = response.status_code
        result["problem"] = response.data
    return result
