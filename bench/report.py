"""Turn results into pass/fail targets, a markdown table and PNG plots."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on a server
import matplotlib.pyplot as plt


def _largest(sizes: dict) -> str:
    return max(sizes, key=int)


def _smallest(sizes: dict) -> str:
    return min(sizes, key=int)


def evaluate(results: dict) -> list[dict]:
    """Every target the issue sets, with the measured value; parts that did not run are left out."""
    targets = []

    def target(name: str, value, goal: str, passed: bool) -> None:
        targets.append({"target": name, "value": value, "goal": goal, "pass": bool(passed)})

    if "submit" in results:
        one, eight = results["submit"]["clients_1"], results["submit"]["clients_8"]
        target("submit p95, 1 client (ms)", one["p95_ms"], "≤ 50", one["p95_ms"] <= 50)
        target("submit rate, 8 clients (/s)", eight["per_second"], "≥ 250", eight["per_second"] >= 250)
        if results["submit"].get("batch"):
            rate = min(run["proposals_per_second"] for run in results["submit"]["batch"])
            target("batch submit (proposals/s, slowest run)", rate, "≥ 1000", rate >= 1000)
    if "gateway" in results and "ratio" in results["gateway"]:
        ratio = results["gateway"]["ratio"].get("connections_8", 0)
        target("governed submit ÷ MGP reference gateway, 8 connections", ratio, "≥ 2.5", ratio >= 2.5)
        mean = results["gateway"]["custodian"]["connections_1"]["mean_ms"]
        target("governed submit mean latency, 1 connection, wrk (ms)", mean, "≤ 10", mean <= 10)
    if "conversation" in results:
        conversation = results["conversation"]
        seconds = conversation["submitted_to_all_applied_seconds"]
        name = f"{conversation['turns']:,}-turn conversation in batches, submitted → applied (s)"
        target(name, seconds, "≤ 30", seconds <= 30 and conversation["applied"] == conversation["turns"])
    if "e2e" in results:
        e2e = results["e2e"]
        target("submit → receipt p50 (ms)", e2e["p50_ms"], "≤ 100", e2e["p50_ms"] <= 100)
    if "drain" in results:
        rate = results["drain"]["workers_1"]["applies_per_second"]
        target("executor, 1 worker (applies/s)", rate, "≥ 400", rate >= 400)
    if "recall" in results:
        sizes = results["recall"]["sizes"]
        big, small = _largest(sizes), _smallest(sizes)
        p95_big, p95_small = sizes[big]["search"]["p95_ms"], sizes[small]["search"]["p95_ms"]
        target(f"recall p95 at {int(big):,} memories (ms)", p95_big, "≤ 50", p95_big <= 50)
        if "search_valid_at" in sizes[big]:  # point-in-time recall: the same budget
            p95_at = sizes[big]["search_valid_at"]["p95_ms"]
            target(f"recall valid_at p95 at {int(big):,} memories (ms)", p95_at, "≤ 50", p95_at <= 50)
        if big != small:
            growth = round(p95_big / p95_small, 2) if p95_small else 0
            target(f"recall p95 growth {int(small):,} → {int(big):,}", growth, "≤ 2×", growth <= 2)
        verify = sizes[big]["verify_receipts"]
        target(
            f"verify_receipts s/100k (at {verify['receipts']:,})",
            verify["seconds_per_100k"],
            "≤ 5",
            verify["seconds_per_100k"] <= 5,
        )
    if "review" in results:
        sizes = results["review"]["sizes"]
        big = _largest(sizes)
        for name in ("queue", "proposal"):
            page = sizes[big][name]
            target(
                f"/review/ {name} p95 at {int(big):,} pending (ms)",
                page["p95_ms"],
                "≤ 150",
                page["p95_ms"] <= 150,
            )
        target(
            "review pages: queries constant in queue size",
            " / ".join(
                f"{s}: {sizes[s]['queue']['queries']}+{sizes[s]['proposal']['queries']}" for s in sizes
            ),
            "equal",
            results["review"]["constant_queries"],
        )
    if "quality" in results:
        targets += _quality_targets(results["quality"]["sets"])
    if "startup" in results:
        check = results["startup"]["commands"]["embedded check"]["p50_ms"]
        target("manage.py check, embedded default (ms)", check, "≤ 2000", check <= 2000)
    return targets + _observability_targets(results)


def _quality_targets(sets: dict) -> list[dict]:
    """recall@10 on the templated set (the goal), and no question kind behind BM25 on each set."""
    targets = []
    if "templated" in sets:
        recall = sets["templated"]["custodian"]["all"]["recall@10"]
        targets.append(
            {
                "target": "quality recall@10, all questions",
                "value": recall,
                "goal": "≥ 0.70",
                "pass": recall >= 0.70,
            }
        )
    for name, quality in sets.items():
        ours, bm25 = quality["custodian"], quality["bm25"]
        behind = [c for c in ours if c != "all" and ours[c]["recall@10"] < bm25[c]["recall@10"]]
        label = "quality recall@10 ≥ BM25 in every category" + ("" if name == "templated" else f" ({name})")
        value = ", ".join(behind) or "none behind"
        targets.append({"target": label, "value": value, "goal": "none behind", "pass": not behind})
    return targets


def _observability_targets(results: dict) -> list[dict]:
    if "observability" not in results:
        return []
    overhead = results["observability"]["overhead_percent"]
    name = "observability: web CPU per submit, full over bare (+%)"
    return [{"target": name, "value": overhead, "goal": "≤ 5", "pass": overhead <= 5}]


def markdown(document: dict) -> str:
    meta, results = document["meta"], document["results"]
    lines = [
        f"# Benchmark ({meta['scale']}) — commit {meta['commit']}, {meta['started']}",
        "",
        f"{meta['cpus']} CPUs, Python {meta['python']}, gunicorn ×{meta['web_workers']}"
        f" ×{meta.get('web_threads', 1)} threads; "
        f"total {meta['seconds']} s.",
        "",
        "| target | measured | goal | |",
        "|---|---|---|---|",
    ]
    for row in document["targets"]:
        lines.append(
            f"| {row['target']} | {row['value']} | {row['goal']} | {'✅' if row['pass'] else '❌'} |"
        )
    lines += ["", "| measurement | p50 ms | p95 ms | per s | errors |", "|---|---|---|---|---|"]
    for label, summary in _measurements(results):
        rate = summary.get("per_second", summary.get("applies_per_second", ""))
        lines.append(
            f"| {label} | {summary.get('p50_ms', '')} | {summary.get('p95_ms', '')} | {rate} | "
            f"{summary.get('errors', '')} |"
        )
    lines += _postgres_memory(results)
    if "gateway" in results:
        lines += ["", *gateway_table(results["gateway"])]
    if "observability" in results:
        lines += ["", *observability_table(results["observability"])]
    if "startup" in results:
        lines += ["", "| top-level import of `manage.py check` | ms |", "|---|---|"]
        lines += [f"| `{row['module']}` | {row['ms']} |" for row in results["startup"]["top_imports"]]
    if "quality" in results:
        for name, quality in results["quality"]["sets"].items():
            lines += ["", *quality_table(quality, name)]
    if "maintenance" in results:
        lines += ["", *maintenance_table(results["maintenance"])]
    if "dreaming" in results:
        lines += ["", *dreaming_table(results["dreaming"])]
    if "floor" in results:
        lines += [
            "",
            "| write path (applied memories' rows) | memories/s | share of COPY | share of executemany |",
            "|---|---|---|---|",
        ]
        for row in floor_ratios(results):
            lines.append(
                f"| {row['path']} | {row['per_second']} | {row['of_copy']} | {row['of_executemany']} |"
            )
    return "\n".join(lines) + "\n"


def observability_table(observability: dict) -> list[str]:
    """Web CPU per submit with every request observer removed (bare) and as shipped (full)."""
    lines = [
        "Web CPU per submit (gunicorn workers' user + system CPU, "
        f"{observability['submits_per_run']:,} submits a run)",
        "",
        "| configuration | CPU ms per submit (median) | runs | errors | /metrics answers |",
        "|---|---|---|---|---|",
    ]
    for name in ("bare", "full"):
        runs = observability["runs"][name]
        each = ", ".join(str(run["cpu_ms_per_submit"]) for run in runs)
        lines.append(
            f"| {name} | {observability[f'{name}_cpu_ms_per_submit']} | {each} | "
            f"{sum(run['errors'] for run in runs)} | {any(run['metrics_recorded'] for run in runs)} |"
        )
    lines.append(f"| full ÷ bare | {observability['overhead_percent']:+}% | | | |")
    if "recording_us_per_submit" in observability:
        lines += [
            "",
            f"The metrics calls of one submit alone (multiprocess mode, own process): "
            f"{observability['recording_us_per_submit']} µs of CPU, "
            f"{observability['recording_percent_of_bare']}% of a bare submit.",
        ]
    return lines


def gateway_table(gateway: dict) -> list[str]:
    """MGP's reference gateway and Custodian's submit under wrk: rate, latency and the ratio."""
    lines = [
        f"wrk, keep-alive, {gateway['seconds_per_cell']} s per cell ({gateway['load_generator']})",
        "",
        "| server | connections | per s | mean ms | p50 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for server in ("gateway", "custodian"):
        if "error" in gateway[server]:
            lines.append(f"| {server} | | not measured: {gateway[server]['error'][:200]} | | | | |")
            continue
        for key, cell in gateway[server].items():
            lines.append(
                f"| {server} | {key.split('_')[1]} | {cell['per_second']} | {cell['mean_ms']} | "
                f"{cell['p50_ms']} | {cell['p99_ms']} | {cell['errors']} |"
            )
    for key, ratio in gateway.get("ratio", {}).items():
        lines.append(f"| Custodian ÷ gateway | {key.split('_')[1]} | {ratio}× | | | | |")
    return lines


QUALITY_COLUMNS = ("recall@5", "recall@10", "mrr", "zero_results", "superseded_as_current")


def quality_table(quality: dict, name: str = "templated") -> list[str]:
    """Custodian's recall against plain BM25 over the same turns, per question category."""
    lines = [
        f"Retrieval quality, {name} set: {quality['turns']} turns in {quality['conversations']} "
        f"conversations, {quality['questions']} questions (Custodian / BM25).",
        "",
        "| category | questions | " + " | ".join(QUALITY_COLUMNS) + " |",
        "|---|---" + "|---" * len(QUALITY_COLUMNS) + "|",
    ]
    for category, ours in quality["custodian"].items():
        theirs = quality["bm25"][category]
        cells = [f"{ours[c]:.2f} / {theirs[c]:.2f}" if c in ours else "" for c in QUALITY_COLUMNS]
        lines.append(f"| {category} | {ours['questions']} | " + " | ".join(cells) + " |")
    if "neighbours" in quality:
        near = quality["neighbours"]
        lines += [
            "",
            f"Neighbours (context.neighbours 1) of {near['served']} served turns: {near['neighbours']} "
            f"shown, {near['adjacent']:.1%} the true adjacent turn, {near['missing']:.1%} of true "
            "neighbours not shown.",
        ]
    return lines


def maintenance_table(maintenance: dict) -> list[str]:
    """The dormancy sweep over the recall tenant, as if run ``ahead_days`` later."""
    lines = [
        f"Dormancy sweep over {maintenance['memories']:,} memories, {maintenance['ahead_days']} days ahead "
        f"(scan ≤ {maintenance['scan']} per type):",
        "",
        "| step | rows | seconds | peak KiB |",
        "|---|---|---|---|",
    ]
    for memory_type, row in maintenance["selection"].items():
        lines.append(
            f"| select `{memory_type}` | {row['candidates']} | {row['seconds']} | {row['peak_kib']} |"
        )
    made = maintenance["proposals"]
    lines.append(
        f"| propose (`bench-maintenance`) | {made['proposed']} | {made['seconds']} | {made['peak_kib']} |"
    )
    if "compaction" in maintenance:
        lines += ["", *_compaction_table(maintenance["compaction"])]
    return lines


def _compaction_table(compaction: dict) -> list[str]:
    """The compaction selection over the recall tenant and a real sweep on the small one."""
    lines = [
        f"Compaction selection (capacity {compaction['capacity']} per subject+scope, "
        f"at most {compaction['groups']} groups planned per type):",
        "",
        "| step | groups over | members planned | seconds | peak KiB |",
        "|---|---|---|---|---|",
    ]
    for memory_type, row in compaction["selection"].items():
        lines.append(
            f"| select `{memory_type}` | {row['groups_over']} | {row['members']} | {row['seconds']} "
            f"| {row['peak_kib']} |"
        )
    sweep = compaction["sweep"]
    lines.append(
        f"| sweep (`bench-compaction`, capacity {sweep['capacity']}) | {sweep['proposed']} proposed, "
        f"{sweep['applied']} applied | | {sweep['seconds']} | {sweep['peak_kib']} |"
    )
    return lines


def dreaming_table(dreaming: dict) -> list[str]:
    """Bounded Dreaming over the seeded tenant, and observation ingest for a conversation batch."""
    chosen, made, seen = dreaming["selection"], dreaming["pass"], dreaming["observations"]
    return [
        f"Bounded Dreaming over {dreaming['memories']:,} memories:",
        "",
        "| step | windows | proposals | seconds | per s |",
        "|---|---|---|---|---|",
        f"| select windows (read-only) | {chosen['windows']} | | {chosen['seconds']} | "
        f"{chosen['memories_per_second']} memories |",
        f"| pass (freeze, plan, propose) | {made['windows']} | {made['proposals']} | {made['seconds']} | "
        f"{made['windows_per_second']} windows |",
        f"| observations/batch ({seen['batch']} per request) | | {seen['proposals']} | {seen['seconds']} | "
        f"{seen['observations_per_second']} observations |",
    ]


def floor_ratios(results: dict) -> list[dict]:
    """Each write figure as a fraction of what bare PostgreSQL does with the same rows."""
    floor = results["floor"]
    paths = [
        ("PostgreSQL COPY (floor)", floor["copy"]["memories_per_second"]),
        ("PostgreSQL executemany (floor)", floor["executemany"]["memories_per_second"]),
    ]
    if "recall" in results:
        sizes = results["recall"]["sizes"]
        paths.append(
            ("bench seeding (COPY of model-built rows)", sizes[_largest(sizes)]["seed_memories_per_second"])
        )
    if "drain" in results:
        for key, value in results["drain"].items():
            if key.startswith("workers_"):
                paths.append((f"executor, {key.split('_')[1]} worker(s)", value["applies_per_second"]))
    if "submit" in results:
        paths.append(
            ("submit API, 8 clients (proposals, not memories)", results["submit"]["clients_8"]["per_second"])
        )
    return [
        {
            "path": path,
            "per_second": rate,
            "of_copy": f"{rate / floor['copy']['memories_per_second']:.1%}",
            "of_executemany": f"{rate / floor['executemany']['memories_per_second']:.1%}",
        }
        for path, rate in paths
    ]


def _postgres_memory(results: dict) -> list[str]:
    """Say whether the recall tenant fit in PostgreSQL's own cache per size (docs/operations.md)."""
    rows = [
        (int(size), row["postgres_memory"])
        for size, row in results.get("recall", {}).get("sizes", {}).items()
        if "postgres_memory" in row
    ]
    if not rows:
        return []
    lines = ["", "| recall tenant | memories + indexes | shared_buffers | fits |", "|---|---|---|---|"]
    for size, memory in rows:
        fits = memory["shared_buffers_mib"] >= memory["memories_with_indexes_mib"]
        lines.append(
            f"| {size:,} | {memory['memories_with_indexes_mib']} MiB | {memory['shared_buffers']} | "
            f"{'yes' if fits else 'no: pages come from the OS, recall is slower'} |"
        )
    return lines


def _measurements(results: dict):
    """Every latency row of the parts that ran, in the report's order."""
    for part, rows in _MEASURED.items():
        if part in results:
            yield from rows(results[part])


def _submit_rows(submit: dict):
    yield "submit, 1 client", submit["clients_1"]
    yield "submit, 8 clients", submit["clients_8"]


def _drain_rows(drain: dict):
    for key, value in drain.items():
        if key.startswith("workers_"):
            yield f"executor drain, {key.split('_')[1]} worker(s)", value
        elif key.startswith("tenants_"):
            for workers, row in value.items():
                yield f"executor drain, {workers.split('_')[1]} worker(s), {key.split('_')[1]} tenants", row


def _recall_rows(recall: dict):
    for size, row in recall["sizes"].items():
        at = f"{int(size):,}"
        yield f"recall search at {at}", row["search"]
        if "search_valid_at" in row:
            yield f"recall search valid_at at {at}", row["search_valid_at"]
        yield f"get by id at {at}", row["get"]
        admin = row["receipts_admin"]
        yield f"admin receipts changelist at {at} ({admin['queries']} queries)", admin
        if "memory_timeline" in row:
            timeline = row["memory_timeline"]
            yield f"admin memory timeline at {at} ({timeline['queries']} queries)", timeline


def _review_rows(review: dict):
    for size, row in review["sizes"].items():
        for name in ("queue", "proposal"):
            yield f"/review/ {name} at {int(size):,} pending ({row[name]['queries']} queries)", row[name]


_MEASURED = {
    "submit": _submit_rows,
    "e2e": lambda e2e: [("submit → receipt visible", e2e)],
    "drain": _drain_rows,
    "recall": _recall_rows,
    "review": _review_rows,
    "startup": lambda startup: ((f"manage.py {key}", value) for key, value in startup["commands"].items()),
    "quality": lambda quality: [
        (f"recall search, quality questions ({name})", row["search"]) for name, row in quality["sets"].items()
    ],
}


def plots(document: dict, out: Path) -> None:
    """One PNG per part that ran."""
    results = document["results"]
    if "recall" in results:
        sizes = results["recall"]["sizes"]
        xs = sorted(sizes, key=int)
        figure, axis = plt.subplots(figsize=(6, 4))
        for kind in ("search", "get"):
            for stat, style in (("p50_ms", "-o"), ("p95_ms", "--o")):
                axis.plot(
                    [int(x) for x in xs],
                    [sizes[x][kind][stat] for x in xs],
                    style,
                    label=f"{kind} {stat[:3]}",
                )
        axis.axhline(50, color="grey", linewidth=0.8, linestyle=":", label="target p95")
        axis.set(xscale="log", xlabel="memories in the tenant", ylabel="ms", title="Recall latency vs size")
        axis.legend()
        _save(figure, out / "recall_latency.png")
    if "submit" in results:
        figure, axis = plt.subplots(figsize=(6, 4))
        labels = ["1 client", "8 clients"]
        data = [results["submit"]["clients_1"], results["submit"]["clients_8"]]
        axis.bar([0, 1], [d["p50_ms"] for d in data], width=0.35, label="p50")
        axis.bar([0.35, 1.35], [d["p95_ms"] for d in data], width=0.35, label="p95")
        ticks = [f"{label}\n{d['per_second']}/s" for label, d in zip(labels, data, strict=True)]
        axis.set_xticks([0.175, 1.175], ticks)
        axis.set(ylabel="ms", title="Submit latency (auto-apply, 2 evidence bindings)")
        axis.legend()
        _save(figure, out / "submit_latency.png")
    if "drain" in results:
        figure, axis = plt.subplots(figsize=(5, 4))
        keys = [k for k in results["drain"] if k.startswith("workers_")]
        axis.bar([k.split("_")[1] for k in keys], [results["drain"][k]["applies_per_second"] for k in keys])
        axis.axhline(400, color="grey", linestyle=":", label="target (1 worker)")
        axis.set(xlabel="executor workers", ylabel="applies/s", title="Executor drain")
        axis.legend()
        _save(figure, out / "executor_drain.png")
    if "review" in results:
        sizes = results["review"]["sizes"]
        xs = sorted(sizes, key=int)
        figure, axis = plt.subplots(figsize=(6, 4))
        for name in ("queue", "proposal"):
            axis.plot([int(x) for x in xs], [sizes[x][name]["p95_ms"] for x in xs], "-o", label=f"{name} p95")
        axis.axhline(150, color="grey", linestyle=":", label="target")
        axis.set(xscale="log", xlabel="pending proposals", ylabel="ms", title="Review pages vs queue size")
        axis.legend()
        _save(figure, out / "review_pages.png")


def _save(figure, path: Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
