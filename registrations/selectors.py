"""Which registration a tenant runs under, cached per tenant and invalidated on publish."""

import functools
from typing import Any

from django.core.cache import cache

from registrations.compiled import DEFAULT, ActiveRegistration
from registrations.models import Registration


def _key(tenant_id: Any) -> str:
    return f"registration:active:{tenant_id}"


def active_registration(*, tenant_id: Any) -> ActiveRegistration:
    """Return the tenant's active registration (the built-in default until one is published).

    The shared cache holds each tenant's active (version, fingerprint), so a
    warm lookup costs no query; the document of a version is read once per
    process (published documents never change). Publishing deletes the key.
    """
    pointer = cache.get(_key(tenant_id))
    if pointer is None:
        row = (
            Registration.objects.filter(tenant_id=tenant_id, status=Registration.Status.ACTIVE)
            .values_list("version", "fingerprint")
            .first()
        )
        pointer = tuple(row) if row else (DEFAULT.version, DEFAULT.fingerprint)
        cache.set(_key(tenant_id), pointer, timeout=300)  # a lost delete heals in minutes
    version, fingerprint = pointer
    if version == DEFAULT.version:
        return DEFAULT
    return _published(str(tenant_id), version, fingerprint)


@functools.lru_cache(maxsize=1024)
def _published(tenant_id: str, version: int, fingerprint: str) -> ActiveRegistration:
    document = Registration.objects.values_list("document", flat=True).get(
        tenant_id=tenant_id, version=version, fingerprint=fingerprint
    )
    return ActiveRegistration(version, fingerprint, document)


def forget_active(tenant_id: Any) -> None:
    """Drop the cached pointer (after a publish commits)."""
    cache.delete(_key(tenant_id))


def registration_candidate(*, tenant_id: Any, candidate_id: Any) -> Registration:
    """Return a tenant's candidate or registration by id; another tenant's id is missing."""
    return Registration.objects.get(tenant_id=tenant_id, pk=candidate_id)
