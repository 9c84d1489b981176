"""Scale check: list-by-status and lookup-by-external_ref latency with 10 000 and with 1 000 000
referrals in the table; it passes when each one's p50 at the larger size is within 1.5x of its
p50 at the smaller.

For each size: a fresh PostgreSQL database migrated with the real schema, the benchmark's
partner and three others onboarded, ``referrals`` filled with COPY (Shape V1 rows with
time-ordered ids as ``rehabref.ids`` makes them, spread over a year and evenly over the eight
V1 statuses, distinct external_refs; 40% in the benchmark partner's test environment, whose
key is used, 10% in its live one, half for the other partners), checked, VACUUM ANALYZEd and
checkpointed; then a real server on it (as ``bench.run`` starts one). With every database
seeded and every server up, wrk measures, in rounds that alternate the order of the sizes:

- list: ``GET /api/v1/partners/referrals?status=S&limit=20``, S one of the eight statuses,
  random per request;
- lookup: ``GET /api/v1/partners/referrals?external_ref=R``, R random per request among up to
  10 000 existing refs of the benchmark partner's test environment, sampled over all ages.

Medians over the rounds; ratio = p50 at the largest size / p50 at the smallest; PASS when at
most 1.5. Before that, each statement on each database alone, as the server runs it (prepared,
generic plan): EXPLAIN (ANALYZE, BUFFERS), buffers per execution and latency from asyncpg.
Results: ``bench/results/scale.json`` and ``scale-explain-<size>.txt``; exit status 1 when a
scenario fails. docs/performance.md ("Scale check") describes it and its figures.

Usage: ``python -m bench.scale [--sizes 10000,1000000] [--seconds 5] [--rounds 3]
[--connections 32]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg import sql

from bench.environment import free_port, fresh_database, onboard
from bench.run import RESULTS, Measurement, app_server, serve, settle, wrk
from rehabref.ids import new_id
from rehabref.referrals.commission import NOT_ELIGIBLE
from rehabref.referrals.status import STATUSES

THRESHOLD = 1.5
REFS_SAMPLED = 10_000
YEAR_MS = 365 * 24 * 3600 * 1000
SCENARIOS = {
    "list": ("list by status", "scale_list.lua"),
    "lookup": ("lookup by external_ref", "scale_lookup.lua"),
}

COLUMNS = (
    "id",
    "partner_id",
    "environment",
    "shape",
    "status",
    "external_ref",
    "patient_first_name",
    "patient_phone",
    "patient_city",
    "reason",
    "care_mode",
    "preferred_contact",
    "route",
    "consent_accepted",
    "consent_accepted_at",
    "consent_version",
    "consent_source",
    "partner_metadata",
    "appointment_status",
    "appointment_scheduled_at",
    "appointment_care_mode",
    "payment_currency",
    "payment_amount_minor",
    "commission_minor",
    "commission_status",
    "created_at",
    "updated_at",
)
NULL = "\\N"
FIRST_NAMES = ("Amaka", "Tunde", "Ngozi", "Emeka", "Aisha", "Bola", "Chidi", "Funke")
CITIES = ("Lagos", "Abuja", "Ibadan", "Kano", "Enugu", "Port Harcourt")
REASONS = ("Lower back pain", "Knee pain", "Neck pain", "Shoulder stiffness", "Post-op rehab")
ROUTES = ("contact", "assistant")
CARE_MODES = ("remote", "face_to_face", "either")
CONTACTS = ("messaging", "sms", "email")
BOOKED = frozenset({"booked", "attended", "paid", "closed"})
PAID = frozenset({"paid", "closed"})


_days: dict[int, str] = {}


def _timestamp(ms: int) -> str:
    """``ms`` since the epoch as PostgreSQL timestamptz text (UTC, to the millisecond); the
    date part is made once per day (datetime for each took most of a row's time)."""
    day, ms = divmod(ms, 86_400_000)
    date = _days.get(day)
    if date is None:
        date = _days[day] = datetime.fromtimestamp(day * 86_400, UTC).date().isoformat()
    seconds, ms = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{date} {hours:02d}:{minutes:02d}:{seconds:02d}.{ms:03d}+00"


def referral_rows(
    count: int, owners: list[tuple[str, str]], *, end_ms: int, own: list[int], seed: int = 1
) -> Iterator[str]:
    """``count`` lines of COPY text in id (= creation) order; the row numbers of those owned
    by ``owners[0]`` are added to ``own``. ``owners`` weighs each (partner_id, environment) by
    how often it is listed. Ids are ``new_id("ref", now_ms=...)`` of strictly increasing
    milliseconds over the year before ``end_ms``, so ordering by id is ordering by created_at,
    as in production."""
    rng = random.Random(seed)
    step = max(YEAR_MS // max(count, 1), 1)
    start_ms = end_ms - step * count
    main_owner = owners[0]
    for n in range(count):
        # One draw of random bits per row, cut into each choice (rng.choice eight times
        # took a third of the seeding's time).
        bits = rng.getrandbits(64)
        bits, jitter = divmod(bits, step)
        bits, phone = divmod(bits, 10**8)
        bits, pick = divmod(bits, len(owners))
        owner = owners[pick]
        if owner == main_owner:
            own.append(n)
        bits, pick = divmod(bits, len(STATUSES))
        status = STATUSES[n % len(STATUSES)] if count < 64 else STATUSES[pick]
        bits, route_bit = divmod(bits, 2)
        if status == "contact_pending":
            route = "contact"
        elif status == "assistant_started":
            route = "assistant"
        else:
            route = ROUTES[route_bit]
        bits, pick = divmod(bits, len(CARE_MODES))
        care_mode = CARE_MODES[pick]
        ms = start_ms + n * step + jitter
        created = _timestamp(ms)
        appointment: tuple[str, ...] = (NULL, NULL, NULL)
        if status in BOOKED:
            appointment = (
                "booked" if status == "booked" else "attended",
                _timestamp(ms + 3 * 86_400_000),
                care_mode if care_mode != "either" else "remote",
            )
        payment: tuple[str, ...] = (NULL, NULL, NULL, NULL)
        if status in PAID:
            payment = ("NGN", f"{bits % 40 + 10}00000", "0", NOT_ELIGIBLE)
        yield "\t".join(
            (
                new_id("ref", now_ms=ms),
                owner[0],
                owner[1],
                "v1",
                status,
                f"HOSP-{n:08d}",
                FIRST_NAMES[n % len(FIRST_NAMES)],
                f"+23480{phone:08d}",
                CITIES[n % len(CITIES)],
                REASONS[n % len(REASONS)],
                care_mode,
                CONTACTS[n % len(CONTACTS)],
                route,
                "t",
                created,  # consent accepted_at
                "2026-01",
                "scale",
                '{"campaign": "scale"}' if n % 2 else NULL,
                *appointment,
                *payment,
                created,
                created if status == "received" else _timestamp(min(ms + 86_400_000, end_ms)),
            )
        )


def seed(url: str, count: int) -> dict[str, Any]:
    """Partners onboarded, ``count`` referrals copied in and checked, statistics fresh."""
    partner = onboard(url)
    others = [onboard(url, f"Other Clinic {n}")["partner_id"] for n in range(3)]
    main_owner = (partner["partner_id"], "test")
    owners = [main_owner] * 8 + [(partner["partner_id"], "live")] * 2
    owners += [(others[0], "test")] * 4 + [(others[1], "test")] * 3
    owners += [(others[2], "test")] * 2 + [(others[2], "live")]
    started = time.monotonic()
    own: list[int] = []
    end_ms = time.time_ns() // 1_000_000 - 60_000
    # Sent in batches as they are made: PostgreSQL stores one while the next is generated.
    statement = f"COPY referrals ({', '.join(COLUMNS)}) FROM STDIN"
    with psycopg.connect(url) as conn, conn.cursor().copy(statement) as copy:
        batch: list[str] = []
        for line in referral_rows(count, owners, end_ms=end_ms, own=own):
            batch.append(line)
            if len(batch) == 10_000:
                copy.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            copy.write("\n".join(batch) + "\n")
    copied = time.monotonic()
    with psycopg.connect(url) as conn:
        check = conn.execute(
            """
            SELECT count(*),
                   count(*) FILTER (WHERE id !~ '^ref_[0-9a-z]{26}$'),
                   count(DISTINCT external_ref),
                   (SELECT count(*) FROM (
                       SELECT created_at < lag(created_at) OVER (ORDER BY id) AS back
                       FROM referrals) t WHERE back)
            FROM referrals
            """
        ).fetchone()
    assert check is not None
    rows, bad_ids, refs, out_of_order = check
    if (rows, bad_ids, refs, out_of_order) != (count, 0, count, 0):
        raise RuntimeError(
            f"seeded rows wrong: {rows} rows, {bad_ids} bad ids, {refs} distinct refs, "
            f"{out_of_order} out of id order"
        )
    settle(url)
    settled = time.monotonic()
    sample = random.Random(2).sample(own, min(REFS_SAMPLED, len(own)))
    refs_file = RESULTS / f"scale-refs-{count}.txt"
    refs_file.write_text("".join(f"HOSP-{n:08d}\n" for n in sample))
    return {
        "key": partner["keys"]["sk_test"],
        "partner_id": partner["partner_id"],
        "refs_file": str(refs_file),
        "partner_rows": len(own),
        "copy_s": round(copied - started, 1),
        "vacuum_analyze_checkpoint_s": round(settled - copied, 1),
        "table_bytes": _table_bytes(url),
    }


def _table_bytes(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_total_relation_size('referrals')").fetchone()
    return int(row[0]) if row else 0


def _statements() -> dict[str, tuple[str, tuple[str, ...]]]:
    """SQL text and parameter names of the list-by-status and lookup-by-external_ref
    statements of ``rehabref.referrals.store``, as the hot path compiles them."""
    from sqlalchemy.dialects.postgresql.asyncpg import dialect

    from rehabref.referrals import store

    found = {}
    for name, statement in (
        ("list", store._list_statement((True, False, False, False))),
        ("lookup", store._BY_EXTERNAL_REF),
    ):
        compiled = statement.compiled(dialect())  # type: ignore[no-untyped-call]
        found[name] = (compiled.sql, compiled.names)
    return found


def _values(name: str, rng: random.Random, refs: list[str]) -> dict[str, Any]:
    if name == "list":
        return {"status": rng.choice(STATUSES), "page_size": 21}
    return {"external_ref": rng.choice(refs)}


def _explain(
    name: str, names: tuple[str, ...], params: dict[str, Any], options: str
) -> sql.Composed:
    literals = sql.SQL(", ").join(sql.Literal(params[n]) for n in names)
    return sql.SQL("EXPLAIN ({}) EXECUTE {}({})").format(
        sql.SQL(options), sql.Identifier(f"scale_{name}"), literals
    )


def examine(url: str, partner_id: str, refs: list[str]) -> tuple[str, dict[str, Any]]:
    """Both statements on the database alone, prepared with a generic plan as on the hot-path
    connections (``plan_cache_mode=force_generic_plan``): EXPLAIN (ANALYZE, BUFFERS) of one
    execution (text), the mean buffers of 200 executions with random values, and the latency
    of 2 000 executions one after another from asyncpg (after 300 unmeasured)."""
    statements = _statements()
    scope = {"partner_id": partner_id, "environment": "test"}
    rng = random.Random(3)
    report: list[str] = []
    found: dict[str, Any] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET plan_cache_mode = force_generic_plan")
        for name, (text, names) in statements.items():
            conn.execute(f"PREPARE scale_{name} AS {text}")
            params = {**scope, **_values(name, rng, refs)}
            query = _explain(name, names, params, "ANALYZE, BUFFERS")
            for _ in range(2):
                plan = [row[0] for row in conn.execute(query)]
            report += [f"-- {name}: {params}", *plan, ""]
            nodes = [line.strip().removeprefix("->  ") for line in plan if "cost=" in line]
            hit = read = 0
            for _ in range(200):
                params = {**scope, **_values(name, rng, refs)}
                query = _explain(name, names, params, "ANALYZE, BUFFERS, FORMAT JSON")
                row = conn.execute(query).fetchone()
                top = row[0][0]["Plan"] if row else {}
                hit += top.get("Shared Hit Blocks", 0)
                read += top.get("Shared Read Blocks", 0)
            found[name] = {
                "plan": " / ".join(node.split("  (")[0] for node in nodes),
                "shared_hit_per_call": round(hit / 200, 1),
                "shared_read_per_call": round(read / 200, 2),
            }
    for name, timing in asyncio.run(_latencies(url, statements, scope, refs)).items():
        found[name].update(timing)
    return "\n".join(report), found


async def _latencies(
    url: str,
    statements: dict[str, tuple[str, tuple[str, ...]]],
    scope: dict[str, str],
    refs: list[str],
) -> dict[str, dict[str, float]]:
    import asyncpg

    rng = random.Random(4)
    conn = await asyncpg.connect(url, server_settings={"plan_cache_mode": "force_generic_plan"})
    timings: dict[str, dict[str, float]] = {}
    try:
        for name, (text, names) in statements.items():
            prepared = await conn.prepare(text)
            spent = []
            for n in range(2_300):
                params = {**scope, **_values(name, rng, refs)}
                started = time.perf_counter()
                await prepared.fetch(*(params[key] for key in names))
                if n >= 300:
                    spent.append((time.perf_counter() - started) * 1e6)
            spent.sort()
            timings[name] = {
                "statement_p50_us": round(spent[len(spent) // 2]),
                "statement_p90_us": round(spent[len(spent) * 9 // 10]),
            }
    finally:
        await conn.close()
    return timings


def _first_line(path: str) -> str:
    with open(path) as lines:
        return lines.readline().strip()


def check_answers(base: str, key: str, refs_file: str) -> None:
    """Both requests answer 200 with what they should, before anything is measured."""
    ref = _first_line(refs_file)
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        page = client.get("/api/v1/partners/referrals", params={"status": "received", "limit": 20})
        page.raise_for_status()
        if not page.json()["data"] or any(r["status"] != "received" for r in page.json()["data"]):
            raise RuntimeError(f"list by status answered {page.text[:300]}")
        found = client.get("/api/v1/partners/referrals", params={"external_ref": ref})
        found.raise_for_status()
        if [r["external_ref"] for r in found.json()["data"]] != [ref]:
            raise RuntimeError(f"lookup of {ref} answered {found.text[:300]}")


def summarise(measurements: dict[tuple[str, int], list[Measurement]]) -> dict[str, Any]:
    sizes = sorted({size for _, size in measurements})
    rows: list[dict[str, Any]] = []
    for (scenario, size), runs in sorted(measurements.items()):
        rows.append(
            {
                "scenario": scenario,
                "rows": size,
                "runs": len(runs),
                "requests_per_s": statistics.median(m.requests_per_s for m in runs),
                "p50_ms": statistics.median(m.p50_ms for m in runs),
                "p99_ms": statistics.median(m.p99_ms for m in runs),
                "errors": sum(m.errors for m in runs),
                "p50_ms_each": [round(m.p50_ms, 2) for m in runs],
            }
        )
    verdicts: dict[str, dict[str, Any]] = {}
    for scenario in SCENARIOS:
        small = next(r for r in rows if r["scenario"] == scenario and r["rows"] == sizes[0])
        large = next(r for r in rows if r["scenario"] == scenario and r["rows"] == sizes[-1])
        ratio = large["p50_ms"] / small["p50_ms"]
        errors = small["errors"] + large["errors"]
        # Each round's own ratio too (its two runs were back to back): a drift of the shared
        # machine's speed between rounds shows here.
        paired = [
            round(b.p50_ms / a.p50_ms, 2)
            for a, b in zip(
                measurements[(scenario, sizes[0])],
                measurements[(scenario, sizes[-1])],
                strict=True,
            )
        ]
        verdicts[scenario] = {
            "p50_ratio": round(ratio, 3),
            "p50_ratio_each_round": paired,
            "pass": ratio <= THRESHOLD and errors == 0,
        }
    return {"rows": rows, "verdicts": verdicts, "sizes": sizes}


def print_table(summary: dict[str, Any], connections: int) -> None:
    print(
        f"{'scale check':32} {'rows':>9} {'conns':>5} {'req/s':>8} {'p50 ms':>8} "
        f"{'p99 ms':>8} {'errors':>6}"
    )
    for row in summary["rows"]:
        print(
            f"{SCENARIOS[row['scenario']][0]:32} {row['rows']:>9} {connections:>5} "
            f"{row['requests_per_s']:>8.0f} {row['p50_ms']:>8.2f} {row['p99_ms']:>8.2f} "
            f"{row['errors']:>6}"
        )
    small, large = summary["sizes"][0], summary["sizes"][-1]
    for scenario, verdict in summary["verdicts"].items():
        each = ", ".join(f"{r:.2f}" for r in verdict["p50_ratio_each_round"])
        print(
            f"{SCENARIOS[scenario][0]}: p50({large}) / p50({small}) = {verdict['p50_ratio']:.2f}"
            f" (limit {THRESHOLD}) {'PASS' if verdict['pass'] else 'FAIL'}; each round: {each}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,1000000", help="row counts, comma-separated")
    parser.add_argument("--seconds", type=int, default=5, help="measured seconds per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each scenario and size")
    parser.add_argument("--connections", type=int, default=32)
    options = parser.parse_args()
    sizes = sorted({int(size) for size in options.sizes.split(",")})
    if len(sizes) < 2:
        parser.error("--sizes needs two sizes or more")
    RESULTS.mkdir(exist_ok=True)
    workers = os.cpu_count() or 1
    measurements: dict[tuple[str, int], list[Measurement]] = {}
    seeded: dict[int, dict[str, Any]] = {}
    with ExitStack() as stack:
        servers: dict[int, str] = {}
        for size in sizes:
            url = stack.enter_context(fresh_database("postgres", RESULTS))
            seeded[size] = seed(url, size)
            info = seeded[size]
            print(
                f"seeded {size} rows ({info['partner_rows']} the partner's): made and copied in "
                f"{info['copy_s']} s, VACUUM ANALYZE + CHECKPOINT "
                f"{info['vacuum_analyze_checkpoint_s']} s; table and indexes "
                f"{info['table_bytes'] / 2**20:.0f} MiB",
                file=sys.stderr,
            )
            refs = Path(info["refs_file"]).read_text().split()
            plans, info["database_only"] = examine(url, info["partner_id"], refs)
            (RESULTS / f"scale-explain-{size}.txt").write_text(plans)
            port = free_port()
            argv, env = app_server(url, port, workers)
            servers[size] = stack.enter_context(serve(argv, env, "/readyz", port))
            check_answers(servers[size], info["key"], info["refs_file"])
        for round_number in range(options.rounds):
            order = sizes if round_number % 2 == 0 else sizes[::-1]
            for scenario, (label, script) in SCENARIOS.items():
                for size in order:
                    info = seeded[size]
                    extra = ",".join(STATUSES) if scenario == "list" else info["refs_file"]
                    measured = wrk(
                        f"{label}, {size} rows",
                        servers[size],
                        script,
                        [info["key"], extra],
                        options.connections,
                        options.seconds,
                    )
                    measurements.setdefault((scenario, size), []).append(measured)
                    print(
                        f"round {round_number + 1}: {measured.name}: p50 {measured.p50_ms:.2f} ms,"
                        f" {measured.requests_per_s:.0f} req/s",
                        file=sys.stderr,
                    )
    summary = summarise(measurements)
    print_table(summary, options.connections)
    print(
        "the statement alone (asyncpg, one connection, random values; generic plan):",
        "plan, p50 / p90 latency, shared buffers hit / read per execution",
    )
    for size in sizes:
        for name, found in seeded[size]["database_only"].items():
            print(
                f"  {SCENARIOS[name][0]}, {size} rows: {found['plan']}; "
                f"{found['statement_p50_us']:.0f} / {found['statement_p90_us']:.0f} us; "
                f"{found['shared_hit_per_call']} / {found['shared_read_per_call']}"
            )
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "connections": options.connections,
        "seconds": options.seconds,
        "rounds": options.rounds,
        "threshold": THRESHOLD,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "seeding": {
            str(size): {k: v for k, v in info.items() if k != "key"}
            for size, info in seeded.items()
        },
        **summary,
        "runs": [
            {"scenario": scenario, "rows": size, **m.__dict__}
            for (scenario, size), runs in measurements.items()
            for m in runs
        ],
    }
    (RESULTS / "scale.json").write_text(json.dumps(result, indent=2))
    if not all(verdict["pass"] for verdict in summary["verdicts"].values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
