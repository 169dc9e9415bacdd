"""Which registration a tenant runs under, cached per tenant and invalidated on publish."""

import functools
import logging
from typing import Any

from django.core.cache import cache
from redis.exceptions import RedisError

from registrations.compiled import DEFAULT, ActiveRegistration
from registrations.models import Registration

logger = logging.getLogger(__name__)


def _key(tenant_id: Any) -> str:
    return f"registration:active:{tenant_id}"


def active_registration(*, tenant_id: Any) -> ActiveRegistration:
    """Return the tenant's active registration (the built-in default until one is published).

    The shared cache holds each tenant's active (version, fingerprint), so a
    warm lookup costs no query; the document of a version is read once per
    process (published documents never change). Publishing deletes the key.
    """
    pointer = _cached(tenant_id)
    if pointer is None:
        row = (
            Registration.objects.filter(tenant_id=tenant_id, status=Registration.Status.ACTIVE)
            .values_list("version", "fingerprint")
            .first()
        )
        pointer = tuple(row) if row else (DEFAULT.version, DEFAULT.fingerprint)
        try:
            cache.set(_key(tenant_id), pointer, timeout=300)  # a lost delete heals in minutes
        except RedisError:
            logger.warning("cache unavailable: registration pointer not cached", exc_info=True)
    version, fingerprint = pointer
    if version == DEFAULT.version:
        return DEFAULT
    return _published(str(tenant_id), version, fingerprint)


def _cached(tenant_id: Any) -> tuple | None:
    """The cached pointer, or None when the cache misses or is down (the database answers then)."""
    try:
        return cache.get(_key(tenant_id))
    except RedisError:
        logger.warning("cache unavailable: registration read from the database", exc_info=True)
        return None


@functools.lru_cache(maxsize=1024)
def _published(tenant_id: str, version: int, fingerprint: str) -> ActiveRegistration:
    document = Registration.objects.values_list("document", flat=True).get(
        tenant_id=tenant_id, version=version, fingerprint=fingerprint
    )
    return ActiveRegistration(version, fingerprint, document)


def forget_active(tenant_id: Any) -> None:
    """Drop the cached pointer (after a publish commits); a cache that is down heals by its timeout."""
    try:
        cache.delete(_key(tenant_id))
    except RedisError:
        logger.warning("cache unavailable: registration pointer left to expire", exc_info=True)


def registration_candidate(*, tenant_id: Any, candidate_id: Any) -> Registration:
    """Return a tenant's candidate or registration by id; another tenant's id is missing."""
    return Registration.objects.get(tenant_id=tenant_id, pk=candidate_id)
