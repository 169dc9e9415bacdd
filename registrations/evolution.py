"""The additive rule: what a new registration may change, as one pure function.

Consumers (agents, recall, the review UI, stored memories) were written
against the active schema; a new version must accept everything the old one
accepted and mean the same by it. So a candidate may add *optional*
properties (at any depth), add or reword labels, widen an enum and relax a
bound, and change the operational parameters (ranking weights version,
activation, capacity). It may not remove or rename a property, change a
type, make anything required, narrow an enum, open or close an object,
change a title or description (what a field *means*), or tighten a format,
pattern, const or bound; nor unbind a policy rule from a type.
"""

from dataclasses import dataclass
from typing import Any

_MIN_BOUNDS = ("minLength", "minimum", "exclusiveMinimum", "minItems")
_MAX_BOUNDS = ("maxLength", "maximum", "exclusiveMaximum", "maxItems")
_EXACT = ("format", "pattern", "const")
_MEANING = ("title", "description")
_MISSING = object()


@dataclass(frozen=True, order=True)
class Change:
    """One change the additive rule refuses: where (JSON pointer) and what kind."""

    path: str
    kind: str
    detail: str = ""

    def as_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "detail": self.detail}


def breaking_changes(active: dict, candidate: dict) -> list[Change]:
    """Return every change from ``active`` to ``candidate`` that is not additive (sorted; [] if none).

    Both are well-formed registration documents (``check_document``).
    """
    changes: list[Change] = []
    for memory_type, entry in active["types"].items():
        path = f"/types/{memory_type}"
        new = candidate["types"].get(memory_type)
        if new is None:
            changes.append(Change(path, "type_removed"))
            continue
        changes += _schema_changes(f"{path}/schema", entry["schema"], new["schema"])
        for rule in sorted(set(entry["rules"]) - set(new["rules"])):
            changes.append(Change(f"{path}/rules", "rule_unbound", rule))
    return sorted(changes)


def _schema_changes(path: str, old: dict, new: dict) -> list[Change]:
    changes: list[Change] = []
    if old.get("type") != new.get("type"):
        changes.append(Change(path, "type_changed", f"{old.get('type')!r} → {new.get('type')!r}"))
    for keyword in _MEANING:
        if old.get(keyword) != new.get(keyword):
            changes.append(Change(f"{path}/{keyword}", "meaning_changed"))
    for keyword in _EXACT:
        if old.get(keyword, _MISSING) != new.get(keyword, _MISSING):
            changes.append(Change(f"{path}/{keyword}", f"{keyword}_changed"))
    changes += _bound_changes(path, old, new)
    changes += _enum_changes(path, old, new)
    if not old.get("uniqueItems", False) and new.get("uniqueItems", False):
        changes.append(Change(f"{path}/uniqueItems", "unique_items_added"))
    old_extra, new_extra = old.get("additionalProperties", True), new.get("additionalProperties", True)
    if old_extra != new_extra:
        kind = "additional_properties_tightened" if new_extra is False else "additional_properties_loosened"
        changes.append(Change(f"{path}/additionalProperties", kind))
    changes += _property_changes(path, old, new)
    if "items" in old or "items" in new:
        if "items" not in old or "items" not in new:
            changes.append(Change(f"{path}/items", "items_changed"))
        else:
            changes += _schema_changes(f"{path}/items", old["items"], new["items"])
    return changes


def _bound_changes(path: str, old: dict, new: dict) -> list[Change]:
    changes = []
    for keyword in _MIN_BOUNDS:
        before, after = old.get(keyword), new.get(keyword)
        if after is not None and (before is None or after > before):
            changes.append(Change(f"{path}/{keyword}", "bound_tightened", f"{before} → {after}"))
    for keyword in _MAX_BOUNDS:
        before, after = old.get(keyword), new.get(keyword)
        if after is not None and (before is None or after < before):
            changes.append(Change(f"{path}/{keyword}", "bound_tightened", f"{before} → {after}"))
    return changes


def _enum_changes(path: str, old: dict, new: dict) -> list[Change]:
    if "enum" not in new:
        return []
    if "enum" not in old:
        return [Change(f"{path}/enum", "enum_narrowed", "an enum was added")]
    dropped = [value for value in old["enum"] if value not in new["enum"]]
    if dropped:
        return [Change(f"{path}/enum", "enum_narrowed", f"dropped {dropped!r}")]
    return []


def _property_changes(path: str, old: dict, new: dict) -> list[Change]:
    changes = []
    old_props: dict[str, Any] = old.get("properties") or {}
    new_props: dict[str, Any] = new.get("properties") or {}
    added = {name: schema for name, schema in new_props.items() if name not in old_props}
    for name, schema in old_props.items():
        where = f"{path}/properties/{name}"
        if name in new_props:
            changes += _schema_changes(where, schema, new_props[name])
            continue
        renamed_to = next((other for other, candidate in added.items() if candidate == schema), None)
        if renamed_to is not None:
            changes.append(Change(where, "property_renamed", f"to {renamed_to!r}"))
        else:
            changes.append(Change(where, "property_removed"))
    for name in sorted(set(new.get("required", [])) - set(old.get("required", []))):
        changes.append(Change(f"{path}/properties/{name}", "made_required"))
    return changes
