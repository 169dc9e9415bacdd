"""What a receipt binds of the memory graph: the link or entity row it wrote, hashed.

Links and entities are written by the executor only, each by one receipt
(an entity's ``receipt_id`` names its last change). The receipt's chained
``effects`` carry the row's hash, so ``verify_receipts`` can show a row was
not altered, added or removed behind the executor's back:

- every link and entity row hashes to what the receipt it names recorded;
- every receipt that wrote one still has its row, unless the row was
  rightly removed (a link goes with a purged memory end) or superseded (an
  entity's later change is its newer receipt).

Receipts written before row hashes existed prove only that the row has a
receipt. Both streams are small next to memories (links and entities, not
every write), and the receipts come from one partial index.
"""

from datetime import datetime
from typing import Any
from uuid import UUID

from django.db.models import Q

from core.canonical import digest
from executor.models import Receipt
from memory_core.models import Entity, Memory, MemoryLink

LINK_COLUMNS = (
    "id",
    "tenant_id",
    "source_id",
    "target_id",
    "target_entity_id",
    "relation",
    "scope",
    "evidence",
    "receipt_id",
    "created_at",
)
ENTITY_COLUMNS = (
    "id",
    "tenant_id",
    "kind",
    "name",
    "aliases",
    "redirect_to_id",
    "receipt_id",
    "created_at",
    "updated_at",
)
# Receipts whose effects name a graph row: receipt_graph_idx (``Receipt.Meta``) has this condition.
GRAPH_RECEIPTS = (Q(effects__has_key="linked") | Q(effects__has_key="entity")) & Q(outcome="applied")


def row_hash(row: dict[str, Any], columns: tuple[str, ...]) -> str:
    return digest({column: _plain(row[column]) for column in columns})


def link_hash(link: MemoryLink) -> str:
    return row_hash({column: getattr(link, column) for column in LINK_COLUMNS}, LINK_COLUMNS)


def entity_hash(entity: Entity) -> str:
    return row_hash({column: getattr(entity, column) for column in ENTITY_COLUMNS}, ENTITY_COLUMNS)


def _plain(value: Any) -> Any:
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def graph_problems(tenant_id: Any, *, limit: int = 20) -> list[str]:
    """Describe up to ``limit`` link or entity rows no receipt accounts for, and receipts lacking a row."""
    receipts = {
        str(receipt_id): effects
        for receipt_id, effects in Receipt.objects.filter(GRAPH_RECEIPTS, tenant_id=tenant_id).values_list(
            "id", "effects"
        )
    }
    problems: list[str] = []
    seen: set[str] = set()
    rows = [
        (f"link {row['id']}", "linked", row, LINK_COLUMNS)
        for row in MemoryLink.objects.filter(tenant_id=tenant_id).values(*LINK_COLUMNS)
    ] + [
        (f"entity {row['id']}", "entity", row, ENTITY_COLUMNS)
        for row in Entity.objects.filter(tenant_id=tenant_id).values(*ENTITY_COLUMNS)
    ]
    for name, kind, row, columns in rows:
        effects = receipts.get(str(row["receipt_id"]), {}).get(kind)
        seen.add(str(row["receipt_id"]))
        if effects is None:
            problems.append(f"{name}: no applied receipt {row['receipt_id']} wrote it")
        elif "row_hash" in effects and effects["row_hash"] != row_hash(row, columns):
            problems.append(f"{name}: differs from what receipt {row['receipt_id']} wrote")
    problems += _missing_rows(tenant_id, receipts, seen)
    return problems[:limit]


def _missing_rows(tenant_id: Any, receipts: dict[str, dict[str, Any]], seen: set[str]) -> list[str]:
    """Receipts whose link row is gone while both memory ends remain, or whose entity is gone."""
    gone = {receipt_id: effects for receipt_id, effects in receipts.items() if receipt_id not in seen}
    links = {receipt_id: effects["linked"] for receipt_id, effects in gone.items() if "linked" in effects}
    entities = {receipt_id: effects["entity"] for receipt_id, effects in gone.items() if "entity" in effects}
    problems = []
    ends = {
        end
        for linked in links.values()
        for end in (linked.get("source_id"), linked.get("to_memory_id"))
        if end is not None
    }
    present = {
        str(pk) for pk in Memory.objects.filter(tenant_id=tenant_id, pk__in=ends).values_list("pk", flat=True)
    }
    for receipt_id, linked in links.items():
        memory_ends = [end for end in (linked.get("source_id"), linked.get("to_memory_id")) if end]
        if "source_id" in linked and all(end in present for end in memory_ends):
            problems.append(f"link {linked['link_id']}: written by receipt {receipt_id}, now missing")
    names = {str(pk) for pk in Entity.objects.filter(tenant_id=tenant_id).values_list("pk", flat=True)}
    for receipt_id, entity in entities.items():
        entity_id = entity.get("created") or entity.get("redirected")
        if entity_id not in names:
            problems.append(f"entity {entity_id}: written by receipt {receipt_id}, now missing")
    return problems
