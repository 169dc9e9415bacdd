"""Discovery and initialize: what this binding serves and how a runtime negotiates with it."""

from typing import Any

from mgp.validation import MgpError, validate

VERSION = "0.1.1"
PROFILES = ["core-memory", "lifecycle", "interop"]
RETURN_MODES = ["raw", "summary", "masked", "metadata_only"]
TRANSPORT = "stateless_http"


def protocol_capabilities() -> dict[str, Any]:
    return {
        "supports_discovery": True,
        "supports_initialize": True,
        "supports_runtime_capability_negotiation": True,
        "supports_negotiated_capabilities": True,
        "requires_initialize": False,
        "supports_stateless_http": True,
        "supports_streamable_http": False,
        "supports_sessions": False,
        "supports_async_operations": True,
        "supports_notifications": False,
        "supports_subscriptions": False,
        "supports_ping": False,
        "transport_profiles": [TRANSPORT],
        "supported_profiles": PROFILES,
        "default_profile": "core-memory",
        "session_mode": "stateless",
    }


def manifest() -> dict[str, Any]:
    return {
        "adapter_name": "custodian",
        "backend_kind": "governed_memory",
        "mgp_version": VERSION,
        "supported_memory_types": [
            "profile",
            "preference",
            "episodic_event",
            "semantic_fact",
            "procedural_rule",
            "relationship",
            "checkpoint_pointer",
            "artifact_summary",
        ],
        "supported_scopes": ["user", "session", "task", "agent", "org", "shared_team"],
        "supported_candidate_kinds": ["assertion", "confirmation", "correction", "derived"],
        "capabilities": {
            "supports_write": True,
            "supports_update": True,
            "supports_delete": True,
            "supports_purge": True,
            "supports_search": True,
            "supports_native_ttl": True,
            "supports_graph_relations": False,
            "supports_checkpoint_pointer": True,
            "supports_lineage_native": False,
            "supports_partial_redaction": True,
            "supports_conflict_detection_native": True,
            "supports_dedupe_native": True,
            "supports_merge_native": False,
            "supports_retrieval_explanations": True,
            "supports_prompt_view": True,
            "search_modes": ["lexical", "hybrid"],
            "score_kind": "backend_local",
        },
        "default_prompt_view": "raw",
        "extension_namespaces": ["custodian"],
    }


def capabilities() -> dict[str, Any]:
    return {"manifest": manifest(), "protocol_capabilities": protocol_capabilities()}


def initialize(body: dict[str, Any]) -> dict[str, Any]:
    validate(body, "initialize.request.schema.json")
    requested = body.get("supported_versions") or [body["protocol_version"]]
    preferred = body.get("preferred_version")
    if preferred and preferred not in requested:
        raise MgpError("MGP_INVALID_OBJECT", "preferred_version must appear in supported_versions")
    if VERSION not in requested:
        raise MgpError(
            "MGP_UNSUPPORTED_VERSION",
            "No mutually supported protocol version",
            requested_versions=requested,
            supported_versions=[VERSION],
        )
    if body.get("transport_profile", TRANSPORT) != TRANSPORT:
        raise MgpError("MGP_UNSUPPORTED_CAPABILITY", "Only stateless_http is served", supported=[TRANSPORT])
    runtime = body.get("runtime_capabilities")
    accepted = (runtime or {}).get("accepted_transport_profiles")
    if accepted is not None and TRANSPORT not in accepted:
        raise MgpError("MGP_UNSUPPORTED_CAPABILITY", "The runtime does not accept stateless_http")
    wanted = body.get("requested_profiles") or (runtime or {}).get("supported_profiles") or PROFILES
    unsupported = [profile for profile in wanted if profile not in PROFILES]
    if unsupported:
        raise MgpError("MGP_UNSUPPORTED_CAPABILITY", "Unsupported profiles", unsupported_profiles=unsupported)
    runtime_profiles = (runtime or {}).get("supported_profiles")
    profiles = [p for p in wanted if runtime_profiles is None or p in runtime_profiles]

    def both(server: bool, name: str) -> bool:
        value = (runtime or {}).get(name)
        return server if value is None else server and bool(value)

    preferred_modes = (runtime or {}).get("preferred_return_modes")
    backend = manifest()["capabilities"]
    return {
        "chosen_version": VERSION,
        "supported_versions": [VERSION],
        "minimum_supported_version": VERSION,
        "lifecycle_phase": "ready",
        "session_mode": "stateless",
        "transport_profile": TRANSPORT,
        "protocol_capabilities": protocol_capabilities(),
        "negotiated_capabilities": {
            "runtime_capabilities_received": runtime is not None,
            "supports_consumable_text": both(True, "supports_consumable_text"),
            "supports_redaction_info": both(True, "supports_redaction_info"),
            "supports_mixed_return_modes": both(True, "supports_mixed_return_modes"),
            "supports_partial_failure": both(True, "supports_partial_failure"),
            "supports_search_explanations": both(True, "supports_search_explanations"),
            "supports_prompt_view": both(True, "supports_prompt_view"),
            "supports_delete": backend["supports_delete"],
            "supports_purge": backend["supports_purge"],
            "supports_async_operations": both(True, "supports_async_operations"),
            "supports_subscriptions": False,
            "effective_return_modes": [m for m in RETURN_MODES if m in preferred_modes]
            if preferred_modes
            else RETURN_MODES,
        },
        "negotiated_profiles": profiles,
        "server_info": {
            "name": "custodian",
            "title": "Custodian",
            "version": VERSION,
            "description": "Governed memory: every MGP write is a proposal that policy and people decide.",
        },
        "discovery": {"capabilities_uri": "/mgp/capabilities"},
        "deprecation_warnings": [],
    }
