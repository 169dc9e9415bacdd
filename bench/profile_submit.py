"""In-process cost of a submission: CPU ms, SQL statements and Redis round trips per proposal.

It also prints the admission firewall's share of that CPU (``firewall_cost``): the scan of one
proposal of ordinary size, its target at most 1 ms.

Wall-clock throughput on a shared machine measures the neighbours; this counts the web process's
own CPU (``time.process_time``), its statements and its Redis round trips (throttle counter,
broker publishes), through the real URL, auth, throttle and services (Django's test client, no
sockets). ``wall_ms_to_response`` is the time until the response exists, before the test client
closes it (what runs after that, such as a deferred nudge, delays the next request on this
worker but not this caller). Run against a scratch database:

    DATABASE_URL=postgres://…/scratch REDIS_URL=redis://…/N python -m bench.profile_submit [--profile]
"""

import argparse
import cProfile
import os
import pstats
import time

import django
import redis.connection

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from bench.world import make_world, preference_payload  # noqa: E402


class RedisRoundTrips:
    """Count Redis round trips in this process: one per command sent, one per pipeline sent."""

    count = 0

    def __enter__(self):
        self._send = redis.connection.AbstractConnection.send_packed_command
        counter = self

        def send(connection, command, check_health=True):
            counter.count += 1
            return counter._send(connection, command, check_health)

        redis.connection.AbstractConnection.send_packed_command = send  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc):
        redis.connection.AbstractConnection.send_packed_command = self._send  # type: ignore[method-assign]


class ResponseClock:
    """Record when each response exists, before the client closes it (closing runs after-response work)."""

    def __init__(self):
        self.until_response = 0.0
        self._started = 0.0

    def start(self):
        self._started = time.perf_counter()

    def __call__(self, get_response):
        def middleware(request):
            response = get_response(request)
            self.until_response += time.perf_counter() - self._started
            return response

        return middleware


CLOCK = ResponseClock()  # installed first in MIDDLEWARE by main()


def _clock() -> ResponseClock:
    from bench import profile_submit  # the instance Django imported, not __main__'s when run with -m

    return profile_submit.CLOCK


def measure(client: APIClient, world, *, proposals: int, batch: int, start: int, profiler=None) -> dict:
    """Submit ``proposals`` (one per request when ``batch`` is 0); return CPU ms and statements each."""
    requests = []
    numbers = iter(range(start, start + proposals))
    while True:
        chunk = [next(numbers, None) for _ in range(batch or 1)]
        chunk = [n for n in chunk if n is not None]
        if not chunk:
            break
        requests.append(chunk)
    cpu = 0.0
    clock = _clock()
    clock.until_response = 0.0
    with CaptureQueriesContext(connection) as queries, RedisRoundTrips() as trips:
        for chunk in requests:
            started = time.process_time()
            clock.start()
            if profiler:
                profiler.enable()
            if batch:
                items = [
                    {"idempotency_key": f"p{n}", "proposal": preference_payload(world, n)} for n in chunk
                ]
                response = client.post("/api/v1/proposals/batch", {"items": items}, format="json")
                assert response.status_code == 200 and response.json()["created"] == len(chunk), (
                    response.content
                )
            else:
                response = client.post(
                    "/api/v1/proposals/",
                    preference_payload(world, chunk[0]),
                    format="json",
                    HTTP_IDEMPOTENCY_KEY=f"p{chunk[0]}",
                )
                assert response.status_code == 201, response.content
            if profiler:
                profiler.disable()
            cpu += time.process_time() - started
    return {
        "cpu_ms_per_proposal": round(cpu * 1000 / proposals, 2),
        "statements_per_proposal": round(len(queries.captured_queries) / proposals, 2),
        "redis_round_trips_per_proposal": round(trips.count / proposals, 2),
        "wall_ms_to_response_per_proposal": round(clock.until_response * 1000 / proposals, 2),
    }


def firewall_cost(world, *, proposals: int, start: int) -> dict:
    """CPU the admission firewall adds to one submission: scanning what it carries, folding in its evidence.

    The same payloads as the submit path (``proposals.firewall.screen`` is what freezing calls),
    so the figure is the firewall's share of ``cpu_ms_per_proposal``, not a synthetic string.
    """
    from proposals.firewall import screen

    payloads = [preference_payload(world, n) for n in range(start, start + proposals)]
    revisions = list(world.evidence)
    for payload in payloads[:20]:  # warm the compiled patterns and the plugins' imports
        screen(payload, revisions)
    started = time.process_time()
    for payload in payloads:
        screen(payload, revisions)
    cpu = time.process_time() - started
    return {"cpu_ms_per_proposal": round(cpu * 1000 / proposals, 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--proposals", type=int, default=300)
    parser.add_argument("--profile", choices=["single", "batch"], help="print a cProfile of this path")
    args = parser.parse_args()
    settings.DEBUG = False
    settings.CUSTODIAN_API_RATE = "1000000/min"
    settings.MIDDLEWARE = ["bench.profile_submit.CLOCK", *settings.MIDDLEWARE]
    call_command("migrate", verbosity=0)
    world = make_world(f"profile-{time.time_ns()}")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {world.token}")
    base = time.time_ns() % 10**12
    measure(client, world, proposals=20, batch=0, start=base)  # warm caches and imports
    profilers = {
        name: cProfile.Profile(time.process_time) if args.profile == name else None
        for name in ("single", "batch")
    }
    single = measure(
        client, world, proposals=args.proposals, batch=0, start=base + 10**6, profiler=profilers["single"]
    )
    batched = measure(
        client,
        world,
        proposals=args.proposals,
        batch=100,
        start=base + 2 * 10**6,
        profiler=profilers["batch"],
    )
    firewall = firewall_cost(world, proposals=args.proposals * 10, start=base + 3 * 10**6)
    print(f"single submit: {single}")
    print(f"batch of 100:  {batched}")
    print(f"admission firewall (included above): {firewall}")
    for profiler in profilers.values():
        if profiler:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)
            profiler.dump_stats(os.environ.get("PROFILE_OUT", "/tmp/submit.prof"))


if __name__ == "__main__":
    main()
