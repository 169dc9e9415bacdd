"""Side effects the caller need not wait for, run once the response has been sent.

A request's executor nudges (a broker publish each) used to run at commit, inside the request,
so every submit answered a publish later. ``after_response`` queues such work while a request
is being answered (``AfterResponseMiddleware``) and runs it when the server closes the response,
after the bytes went out; outside a request (tasks, commands) it runs at once. Only work whose
loss is harmless belongs here: the server may die between answering and closing.
"""

import logging
from collections.abc import Callable
from contextvars import ContextVar
from functools import partial

from django.http import HttpRequest, HttpResponseBase

logger = logging.getLogger(__name__)

_pending: ContextVar[list[Callable[[], None]] | None] = ContextVar("after_response", default=None)


def after_response(work: Callable[[], None]) -> None:
    """Run ``work`` once the current response is sent; at once when no request is being answered."""
    pending = _pending.get()
    if pending is None:
        work()
    else:
        pending.append(work)


def run_pending() -> None:
    """Run what this request deferred so far, now (for a request that waits on that work itself)."""
    pending = _pending.get()
    if pending:
        _run(pending)


def _run(pending: list[Callable[[], None]]) -> None:
    while pending:
        work = pending.pop(0)
        try:
            work()
        except Exception:  # one failure must not keep the rest from running
            logger.exception("deferred work failed")


class AfterResponseMiddleware:
    """Collect a request's deferred work and run it when the WSGI server closes the response.

    First in ``MIDDLEWARE``, so everything the request does, views and middleware alike, can
    defer. WSGI servers call ``close()`` after sending the body (PEP 3333), and Django's test
    client does too; ``_resource_closers`` is where Django itself hooks work onto that call.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        pending: list[Callable[[], None]] = []
        token = _pending.set(pending)
        try:
            response = self.get_response(request)
        except BaseException:
            _pending.reset(token)
            _run(pending)  # no response to hook onto: do not lose it
            raise
        _pending.reset(token)
        if pending:
            response._resource_closers.append(partial(_run, pending))  # type: ignore[attr-defined]  # not in the stubs
        return response
