"""Model building blocks shared by the apps."""

from django.db import models


class AppendOnlyQuerySet(models.QuerySet):
    """Refuse bulk updates and deletes: rows of append-only models are never rewritten."""

    def update(self, **kwargs):
        raise TypeError(f"{self.model.__name__} rows are append-only")

    def delete(self):
        raise TypeError(f"{self.model.__name__} rows are append-only")


class AppendOnlyModel(models.Model):
    """A row that is inserted once and never changed or deleted through the ORM."""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise TypeError(f"{type(self).__name__} rows are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} rows are append-only")
