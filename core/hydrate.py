"""Model instances from hand-written SELECTs, built as the ORM builds them.

For the few statements every request runs (the token, the policy's reads), compiling the
ORM query cost more CPU than the database took to answer it. Such a statement is written
once from the models' metadata; its rows become instances here, through the same converters
the ORM applies (``DatabaseOperations.get_db_converters`` and the fields' own) and the
model's ``from_db``, so a custom ``from_db`` still runs and absent fields stay deferred.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Field, Model
from django.db.models.expressions import Col


@dataclass(frozen=True)
class Selected:
    """One model's columns in a SELECT: their SQL, where they sit in the row, how to convert them."""

    model: type[Model]
    sql: str
    start: int
    attnames: list[str]
    converters: list[tuple[Col, list[Callable[..., Any]]]]

    @property
    def end(self) -> int:
        return self.start + len(self.attnames)

    def instance(self, row: Sequence[Any]) -> Model:
        db = connections[DEFAULT_DB_ALIAS]  # not the ``connection`` proxy, looked up per value
        values = list(row[self.start : self.end])
        for index, (column, converters) in enumerate(self.converters):
            for convert in converters:
                values[index] = convert(values[index], column, db)
        return self.model.from_db(db.alias, self.attnames, values)


def selected(model: type[Model], alias: str, *, names: Sequence[str] = (), start: int = 0) -> Selected:
    """``model``'s columns (those in ``names``, else all) as ``alias.column, …``, from row index ``start``."""
    fields = [
        cast("Field[Any, Any]", model._meta.get_field(name)) for name in names
    ] or model._meta.concrete_fields
    columns = [field.get_col(alias) for field in fields]  # a foreign key converts as its target
    quote = connection.ops.quote_name
    return Selected(
        model=model,
        sql=", ".join(f"{alias}.{quote(field.column)}" for field in fields),
        start=start,
        attnames=[field.attname for field in fields],
        converters=[
            (col, connection.ops.get_db_converters(col) + col.get_db_converters(connection))
            for col in columns
        ],
    )
