"""REST endpoints for governed reads: recall search and get, each in the view policy allows."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.serializers import ChoiceField, StrictSerializer
from core.replica import reads_from_replica
from memory_core.entities import entity_cluster, expansion_terms
from memory_core.links import MAX_LINKS_PER_HIT
from memory_core.models import Memory, RecallFeedback
from memory_core.recall import RecallQuery, read_memory, recall, recall_item_json
from memory_core.services import record_feedback
from tenancy.services import bind_policy_context


class SubjectInput(StrictSerializer):
    kind = ChoiceField(choices=Memory.SubjectKind.choices)
    id = serializers.CharField(max_length=256)


class PolicyContextInput(StrictSerializer):
    """MGP's policy_context. actor_agent and tenant_id come from the token; if sent they must match."""

    actor_agent = serializers.CharField(max_length=200, required=False)
    tenant_id = serializers.CharField(max_length=200, required=False)
    acting_for_subject = SubjectInput(required=False)
    requested_action = serializers.CharField(max_length=32, required=False)
    task_id = serializers.CharField(max_length=200, required=False)
    task_type = serializers.CharField(max_length=200, required=False)
    session_id = serializers.CharField(max_length=200, required=False)
    risk_level = ChoiceField(choices=["low", "medium", "high"], required=False)
    channel = serializers.CharField(max_length=100, required=False)
    chat_id = serializers.CharField(max_length=200, required=False)
    data_zone = ChoiceField(choices=["internal", "external"], required=False)
    runtime_id = serializers.CharField(max_length=200, required=False)
    runtime_instance_id = serializers.CharField(max_length=200, required=False)
    correlation_id = serializers.CharField(max_length=200, required=False)
    consent_basis = serializers.CharField(max_length=100, required=False)
    assertion_origin = serializers.CharField(max_length=100, required=False)


class RecallFiltersInput(StrictSerializer):
    subject = SubjectInput(required=False)
    scope = ChoiceField(choices=Memory.Scope.choices, required=False)
    types = serializers.ListField(
        child=ChoiceField(choices=Memory.Type.choices), required=False, max_length=8
    )
    states = serializers.ListField(
        child=ChoiceField(choices=["active", "expired", "dormant"]), required=False, max_length=3
    )
    valid_at = serializers.DateTimeField(required=False)
    about_entity = serializers.UUIDField(
        required=False,
        help_text="only memories linked about this entity or one merged with it (an unknown one: none)",
    )
    dedupe_key = serializers.CharField(
        max_length=256,
        required=False,
        help_text="only the memories holding this dedupe_key (each still in the view the read policy allows)",
    )


class RecallContextInput(StrictSerializer):
    neighbours = serializers.IntegerField(
        min_value=0,
        max_value=3,
        help_text="memories before and after each hit in its episode",
        required=False,
        default=0,
    )
    links = serializers.IntegerField(
        min_value=0,
        max_value=MAX_LINKS_PER_HIT,
        required=False,
        default=0,
        help_text="memories linked to each hit (allowlisted links, one hop), each through the read policy",
    )


class RecallSearchInput(StrictSerializer):
    query = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    filters = RecallFiltersInput(required=False)
    include_inactive = serializers.BooleanField(required=False, default=False)
    expand_entities = serializers.BooleanField(
        required=False,
        default=False,
        help_text="add the canonical names and aliases of entities the query mentions (at most 20 terms)",
    )
    limit = serializers.IntegerField(min_value=1, max_value=50, required=False, default=10)
    cursor = serializers.UUIDField(required=False, allow_null=True, default=None)
    policy_context = PolicyContextInput(required=False)
    # DRF's metaclass moves declared fields off the class, so this does not hide Serializer.context.
    context = RecallContextInput(required=False)  # type: ignore[assignment]


class RecallSearchApi(APIView):
    """Recall memories: ranked, filtered, each item in the view the read policy allows."""

    @extend_schema(
        summary="Recall memories",
        request=RecallSearchInput,
        responses={
            200: OpenApiResponse(
                description=(
                    "recall_id (the access event; also the cursor and the handle for feedback), results "
                    "(memory, return_mode, rule, score, matched_terms, consumable_text, explanation: per "
                    "signal lexical, dense, recency, validity, corroboration, activation, feedback, "
                    "episode, coverage, subject its value, weight and contribution; dense also names its "
                    "embedder and, when it has no value, why (absent); episode names the hit it is "
                    "beside and, for the reply to a hit that asks, answers; context: before and after, "
                    "when context.neighbours > 0), next_cursor, weights_version (the ranking weights "
                    "versions the served items used, joined by +)"
                )
            )
        },
    )
    @reads_from_replica
    def post(self, request):
        data = RecallSearchInput(data=request.data)
        data.is_valid(raise_exception=True)
        body = data.validated_data
        filters = body.get("filters", {})
        text = body["query"].strip()
        if body["expand_entities"] and text:
            text = " ".join([text, *expansion_terms(tenant_id=request.user.tenant_id, text=text)])
        query = RecallQuery(
            text=text,
            subject=dict(filters["subject"]) if "subject" in filters else None,
            scope=filters.get("scope", ""),
            types=list(filters.get("types", [])),
            states=list(filters.get("states", [])),
            valid_at=filters.get("valid_at"),
            include_inactive=body["include_inactive"],
            about_entity=filters.get("about_entity"),
            dedupe_key=filters.get("dedupe_key", ""),
            about=tuple(entity_cluster(tenant_id=request.user.tenant_id, entity_id=filters["about_entity"]))
            if "about_entity" in filters
            else (),
        )
        context = bind_policy_context(request.user, _plain(body.get("policy_context", {})))
        result = recall(
            agent=request.user,
            query=query,
            context=context,
            limit=body["limit"],
            cursor=body["cursor"],
            neighbours=body.get("context", {}).get("neighbours", 0),
            links=body.get("context", {}).get("links", 0),
        )
        return Response(
            {
                "recall_id": str(result.recall_id),
                "results": [recall_item_json(item) for item in result.items],
                "next_cursor": str(result.next_cursor) if result.next_cursor else None,
                "weights_version": result.weights_version,
            }
        )


class RecallFeedbackInput(StrictSerializer):
    memory_id = serializers.UUIDField()
    revision = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    verdict = ChoiceField(choices=RecallFeedback.Verdict.choices)


class RecallFeedbackOutput(serializers.Serializer):
    feedback_id = serializers.IntegerField(source="id")
    recall_id = serializers.UUIDField()
    memory_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    verdict = serializers.CharField()
    created_at = serializers.DateTimeField()


class RecallFeedbackApi(APIView):
    """Vote that one item of your own recall (memory and revision, as served) was useful or not.

    Once per memory revision per agent; it weighs, bounded, on later rankings.
    """

    @extend_schema(
        summary="Rate a recalled item",
        request=RecallFeedbackInput,
        responses={
            201: RecallFeedbackOutput,
            404: OpenApiResponse(description="recall_not_found: not a search of this agent"),
            409: OpenApiResponse(description="feedback_already_given"),
            422: OpenApiResponse(description="item_not_served: the recall did not serve that revision"),
        },
    )
    def post(self, request, recall_id):
        data = RecallFeedbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        feedback = record_feedback(agent=request.user, recall_id=recall_id, **data.validated_data)
        return Response(RecallFeedbackOutput(feedback).data, status=201)


class MemoryReadInput(serializers.Serializer):
    acting_for = serializers.RegexField(r"^[a-z_]+:.{1,256}$", required=False)
    data_zone = ChoiceField(choices=["internal", "external"], required=False)
    correlation_id = serializers.CharField(max_length=200, required=False)


READ_CONTEXT_PARAMETERS = [
    OpenApiParameter("acting_for", str, description="kind:id of the subject the agent acts for"),
    OpenApiParameter("data_zone", enum=["internal", "external"]),
]


def read_context(request) -> dict:
    """Return the read policy's context for an agent's GET: ``?acting_for=kind:id`` and ``?data_zone=``.

    The subject is a claim: it must be the agent itself or covered by a live
    grant, else ``acting_for_not_granted`` (403). Every agent-facing read of
    memory content (memories, proposals, Dreaming runs) takes its context here.
    """
    params = MemoryReadInput(data=request.query_params)
    params.is_valid(raise_exception=True)
    context = dict(params.validated_data)
    if "acting_for" in context:
        kind, _, subject_id = context.pop("acting_for").partition(":")
        context["acting_for_subject"] = {"kind": kind, "id": subject_id}
    return bind_policy_context(request.user, context)


class MemoryDetailApi(APIView):
    """Get one memory in the view policy allows; denied, purged and unknown are all 404."""

    @extend_schema(
        summary="Get a memory",
        parameters=[*READ_CONTEXT_PARAMETERS, OpenApiParameter("correlation_id", str)],
        responses={200: OpenApiResponse(description="memory, return_mode, rule, consumable_text")},
    )
    @reads_from_replica
    def get(self, request, memory_id):
        context = read_context(request)
        view, mode, rule = read_memory(agent=request.user, memory_id=memory_id, context=context)
        return Response(
            {"memory": view, "return_mode": mode, "rule": rule, "consumable_text": view["consumable_text"]}
        )


def _plain(value):
    """Turn nested serializer output (OrderedDicts) into plain JSON values."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value
