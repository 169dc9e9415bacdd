"""The floor: the rows of N applied memories written by bare psycopg (COPY and executemany).

Every write figure in the report is also given as a fraction of what
PostgreSQL alone achieves here for the same rows (a memory, its history
row, evidence links, its proposal, evidence citations, outbox entry and
receipt); the floor writes are rolled back, so they leave nothing behind.
"""

from bench.context import Context
from bench.seed import floor_copy, floor_executemany, floor_rows
from bench.textgen import TextGenerator
from bench.world import make_world


def run(ctx: Context) -> dict:
    world = make_world("bench-floor")
    rows = floor_rows(
        tenant=world.tenant,
        agent=world.agent,
        evidence=world.evidence,
        count=ctx.scale.floor_rows,
        text=TextGenerator(seed=11),
    )
    results = {}
    for name, write in (("copy", floor_copy), ("executemany", floor_executemany)):
        best = min((write(table_rows=rows) for _ in range(ctx.scale.repeats)), key=lambda r: r.seconds)
        results[name] = {
            "memories": best.memories,
            "rows": best.rows,
            "seconds": round(best.seconds, 3),
            "memories_per_second": round(best.memories_per_second, 1),
            "rows_per_second": round(best.rows_per_second, 1),
        }
    return results
