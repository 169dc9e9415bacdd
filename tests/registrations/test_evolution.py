"""The additive rule, as a table: each change a candidate may make, and each it may not (path + kind)."""

import copy

import pytest

from registrations.document import DEFAULT_DOCUMENT, check_document
from registrations.evolution import breaking_changes

FACT = "/types/semantic_fact/schema"


def _candidate(edit) -> dict:
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    edit(document["types"]["semantic_fact"])
    return document


def _props(entry) -> dict:
    return entry["schema"]["properties"]


def _nested(entry) -> dict:
    """Give the active document an object-valued property, to narrow inside it."""
    _props(entry)["source"] = {
        "type": "object",
        "properties": {
            "system": {"type": "string", "enum": ["bloomberg", "wind"]},
            "note": {"type": "string"},
        },
        "additionalProperties": False,
    }
    return entry


_NESTED = _candidate(_nested)

ALLOWED = {
    "add an optional property": lambda e: _props(e).update(sector={"type": "string", "maxLength": 100}),
    "add an optional nested object": lambda e: _props(e).update(
        extra={"type": "object", "properties": {"a": {"type": "number"}}, "additionalProperties": False}
    ),
    "reword a label": lambda e: e["labels"].update(factor="Factor name"),
    "add a label": lambda e: e["labels"].update(universe="Stock universe"),
    "relax a maximum": lambda e: _props(e)["factor"].update(maxLength=400),
    "relax a minimum": lambda e: _props(e)["factor"].update(minLength=0),
    "change the decay": lambda e: e["activation"].update(decay=0.3),
    "set a capacity": lambda e: e["capacity"].update(per_subject_scope=500),
    "pin ranking weights": lambda e: e.update(ranking_weights="2026-12-01.1"),
    "bind one more rule": lambda e: e["rules"].append("review-high-risk"),
}

REFUSED = {
    "remove a property": (
        lambda e: _props(e).pop("horizon"),
        f"{FACT}/properties/horizon",
        "property_removed",
    ),
    "rename a property": (
        lambda e: _props(e).update(period=_props(e).pop("horizon")),
        f"{FACT}/properties/horizon",
        "property_renamed",
    ),
    "change a type": (
        lambda e: _props(e).update(value={"type": "string"}),
        f"{FACT}/properties/value",
        "type_changed",
    ),
    "make a property required": (
        lambda e: e["schema"]["required"].append("factor"),
        f"{FACT}/properties/factor",
        "made_required",
    ),
    "add a required property": (
        lambda e: (_props(e).update(sector={"type": "string"}), e["schema"]["required"].append("sector")),
        f"{FACT}/properties/sector",
        "made_required",
    ),
    "tighten a maximum": (
        lambda e: _props(e)["factor"].update(maxLength=50),
        f"{FACT}/properties/factor/maxLength",
        "bound_tightened",
    ),
    "add a minimum": (
        lambda e: _props(e)["value"].update(minimum=0),
        f"{FACT}/properties/value/minimum",
        "bound_tightened",
    ),
    "tighten maxItems": (
        lambda e: _props(e)["keywords"].update(maxItems=5),
        f"{FACT}/properties/keywords/maxItems",
        "bound_tightened",
    ),
    "add a pattern": (
        lambda e: _props(e)["factor"].update(pattern="^[a-z_0-9]+$"),
        f"{FACT}/properties/factor/pattern",
        "pattern_changed",
    ),
    "add a format": (
        lambda e: _props(e)["factor"].update(format="email"),
        f"{FACT}/properties/factor/format",
        "format_changed",
    ),
    "add an enum (narrowing)": (
        lambda e: _props(e)["metric"].update(enum=["rank_ic", "ic"]),
        f"{FACT}/properties/metric/enum",
        "enum_narrowed",
    ),
    "change a description (meaning)": (
        lambda e: _props(e)["conclusion"].update(description="the verdict of the PM"),
        f"{FACT}/properties/conclusion/description",
        "meaning_changed",
    ),
    "change a title (meaning)": (
        lambda e: _props(e)["value"].update(title="IC"),
        f"{FACT}/properties/value/title",
        "meaning_changed",
    ),
    "open the content object": (
        lambda e: e["schema"].update(additionalProperties=True),
        f"{FACT}/additionalProperties",
        "additional_properties_loosened",
    ),
    "tighten an item bound inside an array": (
        lambda e: _props(e)["keywords"]["items"].update(maxLength=10),
        f"{FACT}/properties/keywords/items/maxLength",
        "bound_tightened",
    ),
    "unbind a policy rule": (lambda e: e["rules"].clear(), "/types/semantic_fact/rules", "rule_unbound"),
}


@pytest.mark.parametrize("edit", ALLOWED.values(), ids=ALLOWED.keys())
def test_an_additive_candidate_has_no_breaking_changes(edit):
    candidate = check_document(_candidate(edit))
    assert breaking_changes(DEFAULT_DOCUMENT, candidate) == []


@pytest.mark.parametrize(("edit", "path", "kind"), REFUSED.values(), ids=REFUSED.keys())
def test_each_non_additive_change_is_named_by_path_and_kind(edit, path, kind):
    candidate = _candidate(edit)
    changes = breaking_changes(DEFAULT_DOCUMENT, candidate)
    assert (path, kind) in [(change.path, change.kind) for change in changes]


NESTED = "/types/semantic_fact/schema/properties/source"
NESTED_REFUSED = {
    "narrow an enum inside a nested object": (
        lambda s: s["properties"]["system"].update(enum=["bloomberg"]),
        f"{NESTED}/properties/system/enum",
        "enum_narrowed",
    ),
    "remove a nested property": (
        lambda s: s["properties"].pop("note"),
        f"{NESTED}/properties/note",
        "property_removed",
    ),
    "open a nested object": (
        lambda s: s.update(additionalProperties=True),
        f"{NESTED}/additionalProperties",
        "additional_properties_loosened",
    ),
    "require a nested property": (
        lambda s: s.update(required=["note"]),
        f"{NESTED}/properties/note",
        "made_required",
    ),
}


@pytest.mark.parametrize(("edit", "path", "kind"), NESTED_REFUSED.values(), ids=NESTED_REFUSED.keys())
def test_a_narrowing_hidden_inside_a_nested_object_is_found(edit, path, kind):
    candidate = copy.deepcopy(_NESTED)
    edit(candidate["types"]["semantic_fact"]["schema"]["properties"]["source"])
    changes = breaking_changes(_NESTED, candidate)
    assert (path, kind) in [(change.path, change.kind) for change in changes]


def test_widening_a_nested_enum_is_additive():
    candidate = copy.deepcopy(_NESTED)
    candidate["types"]["semantic_fact"]["schema"]["properties"]["source"]["properties"]["system"][
        "enum"
    ].append("refinitiv")
    assert breaking_changes(_NESTED, candidate) == []


def test_every_change_is_reported_not_only_the_first():
    def edit(entry):
        _props(entry).pop("horizon")
        _props(entry)["value"] = {"type": "string"}

    kinds = {change.kind for change in breaking_changes(DEFAULT_DOCUMENT, _candidate(edit))}
    assert {"property_removed", "type_changed"} <= kinds


def test_removing_a_type_is_refused():
    candidate = copy.deepcopy(DEFAULT_DOCUMENT)
    del candidate["types"]["relationship"]
    assert [(c.path, c.kind) for c in breaking_changes(DEFAULT_DOCUMENT, candidate)] == [
        ("/types/relationship", "type_removed")
    ]
