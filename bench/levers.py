"""Ranking levers, measured in process on the quality sets a ``--only quality`` run left loaded.

    python -m bench --only quality --database-url postgres://…/custodian_bench   # load once
    DATABASE_URL=postgres://…/custodian_bench python -m bench.levers [--set long_chats] [--lever NAME]

Every question goes to ``memory_core.recall.recall`` exactly as the search API
calls it (the tenant's agent, its bound policy context, ``limit`` 10), each in
a transaction rolled back afterwards, so no read of one question moves the
ranking of the next. A lever is a named override of the ranking weights or of a
first-stage constant (``LEVERS``); the report is recall@10 per question kind
and the questions answered with nothing, for each, beside the default. This
measures what a lever gains on sets we may tune on; the hidden
real-conversation sets judge it.
"""

import argparse
import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Callable, Iterator

from bench.long_chats import ADVERSARIAL

LeverPatch = Callable[[], contextlib.AbstractContextManager]
QUALITY_SETS = ("long_chats", "long_chats_unnamed")  # and "templated": bench.parts.quality.SETS


def _weights(**changes) -> LeverPatch:
    """Rank with the default weights changed by ``changes`` (a version of its own)."""

    @contextlib.contextmanager
    def patch() -> Iterator[None]:
        from memory_core import ranking

        default = ranking.WEIGHTS[ranking.DEFAULT_VERSION]
        trial = dataclasses.replace(default, version="trial", **changes)
        ranking.WEIGHTS["trial"] = trial
        saved = ranking.DEFAULT_VERSION
        ranking.DEFAULT_VERSION = "trial"
        try:
            yield
        finally:
            ranking.DEFAULT_VERSION = saved
            del ranking.WEIGHTS["trial"]

    return patch


def _constant(module: str, name: str, value) -> LeverPatch:
    @contextlib.contextmanager
    def patch() -> Iterator[None]:
        import importlib

        target = importlib.import_module(module)
        saved = getattr(target, name)
        setattr(target, name, value)
        try:
            yield
        finally:
            setattr(target, name, saved)

    return patch


def _version(version: str) -> LeverPatch:
    """Rank with the weights of ``version`` (``memory_core.ranking.WEIGHTS``)."""

    @contextlib.contextmanager
    def patch() -> Iterator[None]:
        from memory_core import ranking

        saved = ranking.DEFAULT_VERSION
        ranking.DEFAULT_VERSION = version
        try:
            yield
        finally:
            ranking.DEFAULT_VERSION = saved

    return patch


def _pool(size: int) -> LeverPatch:
    """Reorder ``size`` lexical candidates in the first stage (recall's windows read the same constant)."""

    @contextlib.contextmanager
    def patch() -> Iterator[None]:
        with (
            _constant("memory_core.first_stage", "POOL", size)(),
            _constant("memory_core.recall", "POOL", size)(),
        ):
            yield

    return patch


LEVERS: dict[str, LeverPatch] = {
    "default": contextlib.nullcontext,
    "2026-12-22.1": _version("2026-12-22.1"),
    "2026-12-29.1": _version("2026-12-29.1"),
    "2027-01-05.1": _version("2027-01-05.1"),
    "2027-01-12.1": _version("2027-01-12.1"),
    "2027-01-19.1": _version("2027-01-19.1"),
    "2027-01-26.1": _version("2027-01-26.1"),
    "2027-02-02.1": _version("2027-02-02.1"),
    "2027-02-09.1": _version("2027-02-09.1"),
    "2027-02-16.1": _version("2027-02-16.1"),
    "2027-02-23.1": _version("2027-02-23.1"),
    "2027-03-02.1": _version("2027-03-02.1"),
    "2027-03-09.1": _version("2027-03-09.1"),
    "2027-03-16.1": _version("2027-03-16.1"),
    "2027-03-23.1": _version("2027-03-23.1"),
    "2027-03-30.1": _version("2027-03-30.1"),
    "answer-0.6": _weights(answer=0.6),
    "answer-1.0": _weights(answer=1.0),
    "spread-40": _constant("memory_core.first_stage", "SPREAD_HITS", 40),
    "pool-500": _pool(500),
    "window-20": _constant("memory_core.recall", "WINDOW", 20),
    "window-25": _constant("memory_core.recall", "WINDOW", 25),
    "coverage-0.25": _weights(coverage=0.25),
    "coverage-0.75": _weights(coverage=0.75),
    "coverage-1.0": _weights(coverage=1.0),
    "subject-0.5": _weights(subject=0.5),
    "subject-1.5": _weights(subject=1.5),
    "dense-0": _weights(dense=0.0, dense_by_embedder=()),
    "dense-0.5": _weights(dense=0.5, dense_by_embedder=()),
    "dense-0.75": _weights(dense=0.75, dense_by_embedder=()),
    "dense-1.0": _weights(dense=1.0, dense_by_embedder=()),
    "dense-1.5": _weights(dense=1.5, dense_by_embedder=()),
    "dense-2.0": _weights(dense=2.0, dense_by_embedder=()),
    "dense-0.5-answer-1.0": _weights(dense=0.5, answer=1.0, dense_by_embedder=()),
    "bm25-b-0.5": _constant("memory_core.search", "B", 0.5),
    "bm25-b-0.3": _constant("memory_core.search", "B", 0.3),
    "bm25-b-0": _constant("memory_core.search", "B", 0.0),
    "when-0.25": _weights(when=0.25),
    "when-0.35": _weights(when=0.35),
    "when-0.5": _weights(when=0.5),
    "when-1.0": _weights(when=1.0),
    "follow-up-0.5": _weights(follow_up=0.5),
    "follow-up-0.75": _weights(follow_up=0.75),
    "answer-follow-up-0.25": _weights(answer_follow_up=0.25),
    "when-always": _constant("memory_core.when", "asks_when", lambda query: True),
    "happening-0": _weights(happening=0.0),
    "happening-0.25": _weights(happening=0.25),
    "happening-0.35": _weights(happening=0.35),
    "happening-0.5": _weights(happening=0.5),
    "narrating-0.15": _weights(narrating=0.15),
    "narrating-0.5": _weights(narrating=0.5),
    "person-0.25": _weights(person=0.25),
    "person-0.5": _weights(person=0.5),
    "person-1.0": _weights(person=1.0),
    "person-2.0": _weights(person=2.0),
    "frame-nouns-kept": _constant("memory_core.search", "FRAME_NOUNS", frozenset()),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.levers", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--set", dest="sets", action="append", choices=["templated", "long_chats", "long_chats_unnamed"]
    )
    parser.add_argument("--lever", dest="levers", action="append", help=f"one of {sorted(LEVERS)}")
    parser.add_argument("--questions", type=int, default=0, help="ask only every n-th question")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    levers = args.levers or list(LEVERS)
    for name in args.sets or [*QUALITY_SETS, "templated"]:
        _measure_set(name, levers, args.questions)
    return 0


def _measure_set(name: str, levers: list[str], every: int) -> None:
    from bench.context import SCALES
    from bench.parts.quality import SETS, _turn_keys
    from bench.quality import evaluate
    from tenancy.models import Tenant

    tenant_name, make = SETS[name]
    dataset = make(SCALES["full"])
    tenant = Tenant.objects.get(name=tenant_name)
    keys = _turn_keys(tenant, dataset)
    questions = dataset.questions[:: every or 1]
    kinds = sorted({question.category for question in questions})
    print(f"\n{name}: {len(questions)} questions, {len(keys)} memories")
    print(
        f"{'lever':<24} {'all':>6} {'no adv.':>7} "
        + " ".join(f"{kind[:11]:>11}" for kind in kinds)
        + "   zero   p50 / p95 ms"
    )
    for lever in levers:
        with LEVERS[lever]():
            answers, seconds = _ask(tenant, questions, keys)
        table = evaluate(questions, answers)
        seconds.sort()
        cells = " ".join(f"{table[kind]['recall@10']:>11.3f}" for kind in kinds)
        p50, p95 = (seconds[int(len(seconds) * share)] * 1000 for share in (0.5, 0.95))
        zero = sum(not served for served in answers)
        print(
            f"{lever:<24} {table['all']['recall@10']:>6.3f} {_answerable(table):>7.3f} {cells}"
            f"   {zero:>4}   {p50:.0f} / {p95:.0f}"
        )
        sys.stdout.flush()


def _answerable(table: dict) -> float:
    """Recall@10 over every question but the adversarial ones (asked of the wrong person), which
    real-conversation sets often leave out."""
    kinds = [kind for kind in table if kind not in ("all", ADVERSARIAL)]
    asked = sum(table[kind]["questions"] for kind in kinds)
    return sum(table[kind]["recall@10"] * table[kind]["questions"] for kind in kinds) / (asked or 1)


def _ask(tenant, questions, keys: dict[str, str]) -> tuple[list[list[str]], list[float]]:
    from django.db import transaction

    from memory_core.recall import RecallQuery, recall
    from tenancy.models import Agent
    from tenancy.services import bind_policy_context

    agent = Agent.objects.filter(tenant=tenant).order_by("created_at").first()
    context = bind_policy_context(agent, {})
    answers, seconds = [], []
    for question in questions:
        started = time.perf_counter()
        with transaction.atomic():
            result = recall(
                agent=agent, query=RecallQuery(text=question.text), context=context, limit=10, cursor=None
            )
            transaction.set_rollback(True)
        seconds.append(time.perf_counter() - started)
        answers.append([keys[item.memory["memory_id"]] for item in result.items])
    return answers, seconds


if __name__ == "__main__":
    sys.exit(main())
