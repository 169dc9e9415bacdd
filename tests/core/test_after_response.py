"""Deferred work: after the response inside a request, at once outside one, never lost to one failure."""

import pytest
from django.http import HttpResponse

from core.after_response import AfterResponseMiddleware, after_response, run_pending


def test_outside_a_request_work_runs_at_once():
    done = []
    after_response(lambda: done.append(1))
    assert done == [1]


def test_inside_a_request_work_waits_for_the_response_to_close():
    done: list[str] = []

    def view(request):
        after_response(lambda: done.append("nudge"))
        done.append("view")
        return HttpResponse("ok")

    response = AfterResponseMiddleware(view)(object())
    assert done == ["view"]
    response.close()
    assert done == ["view", "nudge"]


def test_a_failing_piece_of_work_does_not_keep_the_others_from_running():
    done: list[str] = []

    def view(request):
        after_response(lambda: 1 / 0)
        after_response(lambda: done.append("second"))
        return HttpResponse("ok")

    AfterResponseMiddleware(view)(object()).close()
    assert done == ["second"]


def test_a_request_that_waits_on_its_work_can_run_it_now():
    done: list[str] = []

    def view(request):
        after_response(lambda: done.append("nudge"))
        run_pending()
        assert done == ["nudge"]
        return HttpResponse("ok")

    AfterResponseMiddleware(view)(object()).close()
    assert done == ["nudge"]  # ran once


def test_work_deferred_by_a_view_that_raised_still_runs():
    done: list[str] = []

    def view(request):
        after_response(lambda: done.append("nudge"))
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        AfterResponseMiddleware(view)(object())
    assert done == ["nudge"]
