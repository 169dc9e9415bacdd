"""Model building blocks shared by the apps."""

from typing import Any, NoReturn, TypeVar

from django.db import models

from core.pseudonyms import is_pseudonym

_M = TypeVar("_M", bound=models.Model)


class AppendOnlyQuerySet(models.QuerySet[_M]):
    """Refuse bulk updates and deletes: rows of append-only models are never rewritten."""

    def update(self, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{self.model.__name__} rows are append-only")

    def delete(self) -> NoReturn:
        raise TypeError(f"{self.model.__name__} rows are append-only")

    def pseudonymise(self, **columns: str) -> int:
        """Replace a person's id by its pseudonym in these rows; the one change an erasure makes.

        Every value must be a pseudonym (``core.pseudonyms``), as PostgreSQL's triggers require too.
        """
        if not all(is_pseudonym(value) for value in columns.values()):
            raise TypeError(f"{self.model.__name__} rows take only pseudonyms")
        return models.QuerySet.update(self, **columns)


class AppendOnlyModel(models.Model):
    """A row that is inserted once and never changed or deleted through the ORM."""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise TypeError(f"{type(self).__name__} rows are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} rows are append-only")
