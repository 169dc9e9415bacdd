"""The registration document: the built-in default says what the old serializers said; strictness."""

import copy

import pytest

from registrations import compiled
from registrations.compiled import DEFAULT
from registrations.document import DEFAULT_DOCUMENT, check_document
from registrations.errors import InvalidRegistration

ACCEPTED = [
    ("preference", {"statement": "Alice prefers weekly", "preference_key": "cadence", "preference_value": 7}),
    ("semantic_fact", {"statement": "IC unstable", "factor": "momentum_12_1", "value": 0.012}),
    ("episodic_event", {"statement": "ran", "occurred_at": "2026-11-30T10:00:00Z", "participants": ["a"]}),
    ("relationship", {"statement": "x", "valid_from": "2026-11-30"}),
    ("artifact_summary", {"statement": "report", "title": "Q3", "keywords": ["a", "b"]}),
]
REFUSED = [
    ("preference", {"preference_key": "cadence"}, "/content", "required"),
    ("preference", {"statement": "   "}, "/content/statement", "pattern"),
    ("preference", {"statement": 42}, "/content/statement", "type"),
    ("semantic_fact", {"statement": "x", "value": "high"}, "/content/value", "type"),
    ("semantic_fact", {"statement": "x" * 4001}, "/content/statement", "maxLength"),
    ("episodic_event", {"statement": "x", "occurred_at": "yesterday"}, "/content/occurred_at", "pattern"),
    ("episodic_event", {"statement": "x", "factor": "momentum"}, "/content/factor", "not_registered"),
    ("profile", {"statement": "x", "keywords": ["a", "a"]}, "/content/keywords", "uniqueItems"),
    ("profile", {"statement": "x", "keywords": ["k"] * 51}, "/content/keywords", "maxItems"),
]


@pytest.mark.parametrize(("memory_type", "content"), ACCEPTED)
def test_the_default_accepts_what_the_serializers_accepted(memory_type, content):
    assert DEFAULT.content_problems(memory_type, content) == []


@pytest.mark.parametrize(("memory_type", "content", "path", "kind"), REFUSED)
def test_the_default_refuses_what_the_serializers_refused_naming_the_path(memory_type, content, path, kind):
    assert (path, kind) in [(p["path"], p["kind"]) for p in DEFAULT.content_problems(memory_type, content)]


def test_the_default_is_a_valid_strict_registration():
    assert check_document(copy.deepcopy(DEFAULT_DOCUMENT))


def _broken(edit) -> list[str]:
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    edit(document["types"]["semantic_fact"])
    with pytest.raises(InvalidRegistration) as refusal:
        check_document(document)
    return [problem["path"] for problem in refusal.value.extra["problems"]]


STRICTNESS = {
    "an open content object": (
        lambda e: e["schema"].update(additionalProperties=True),
        "/types/semantic_fact/schema",
    ),
    "an open nested object": (
        lambda e: e["schema"]["properties"].update(source={"type": "object", "properties": {}}),
        "/types/semantic_fact/schema/properties/source",
    ),
    "a $ref": (
        lambda e: e["schema"]["properties"].update(source={"$ref": "#/x"}),
        "/types/semantic_fact/schema/properties/source",
    ),
    "a oneOf": (
        lambda e: e["schema"]["properties"].update(source={"oneOf": [{"type": "string"}]}),
        "/types/semantic_fact/schema/properties/source",
    ),
    "no statement": (
        lambda e: e["schema"].update(required=[]),
        "/types/semantic_fact/schema/properties/statement",
    ),
    "a label for no property": (lambda e: e["labels"].update(ghost="Ghost"), "/types/semantic_fact/labels"),
    "a decay out of range": (
        lambda e: e["activation"].update(decay=0),
        "/types/semantic_fact/activation/decay",
    ),
    "a zero capacity": (
        lambda e: e["capacity"].update(per_subject_scope=0),
        "/types/semantic_fact/capacity/per_subject_scope",
    ),
    "an unknown entry key": (lambda e: e.update(colour="blue"), "/types/semantic_fact"),
}


@pytest.mark.parametrize(("edit", "path"), STRICTNESS.values(), ids=STRICTNESS.keys())
def test_a_registration_that_is_not_strict_is_refused_naming_the_path(edit, path):
    assert path in _broken(edit)


def test_a_version_is_compiled_once():
    compiled._compiled.cache_clear()
    for _ in range(5):
        DEFAULT.content_problems("semantic_fact", {"statement": "x"})
    info = compiled._compiled.cache_info()
    assert (info.misses, info.hits) == (1, 4)


def test_an_observe_section_is_optional_bounded_and_only_on_key_value_types():
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    document["types"]["semantic_fact"]["observe"] = {"keys": ["sector", "desk"]}
    assert check_document(document) is document
    for memory_type, observe in [
        ("episodic_event", {"keys": ["x"]}),
        ("semantic_fact", {"keys": ["x", "x"]}),
        ("semantic_fact", {"keys": [""]}),
        ("semantic_fact", {"keys": ["x"], "extract": "llm"}),
        ("semantic_fact", {"keys": [f"k{i}" for i in range(201)]}),
    ]:
        bad = copy.deepcopy(DEFAULT_DOCUMENT)
        bad["types"][memory_type]["observe"] = observe
        with pytest.raises(InvalidRegistration):
            check_document(bad)
