"""The fleet tier's speed: shipping against the local append of the same rows, and shipping's cost on ingest.

(a) The same N rows, appended to a fresh store in 1,000-row transactions (the
    baseline: the local store's append rate), then shipped from that store to a
    fresh fleet database with `Shipper.run(follow=False)` at 1,000 rows per call
    (append first in every round: shipping needs the rows); the figure is the
    median of the per-round ratios shipping / append. Aim: >= 0.5.
(b) The daemon's pipelined ingest (benchmark (a) of test_bench_daemon.py) with
    `--ship-url` set and without, in alternating order, a fresh daemon and
    store per arm; the figure is the median of the per-round ratios. Aim: >= 0.95
    (shipping costs ingest < 5 %). The PostgreSQL server runs at nice 19 here,
    standing in for a server on another machine: on this 2-core box its CPU
    would otherwise be taken from the daemon it measures.

Run with `make bench`. Knobs: AGENTWATCH_BENCH_FLEET_ROWS (20,000),
AGENTWATCH_BENCH_FLEET_ROUNDS (5), AGENTWATCH_BENCH_EVENTS (20,000 per ingest arm).
"""

from __future__ import annotations

import os
import statistics
import time

import pytest
from support import postgres
from support.daemon import Daemon, wait_for
from test_bench_daemon import _lines, pipelined
from test_bench_store import PAYLOAD as SMALL
from test_bench_store import _tool_event_document

from agentwatch.fleet.ship import Shipper
from agentwatch.record.ids import new_record_id
from agentwatch.store.append import Append, Store

pytestmark = pytest.mark.bench

ROWS = int(os.environ.get("AGENTWATCH_BENCH_FLEET_ROWS", "20000"))
ROUNDS = int(os.environ.get("AGENTWATCH_BENCH_FLEET_ROUNDS", "5"))
EVENTS = int(os.environ.get("AGENTWATCH_BENCH_EVENTS", "20000"))


@pytest.fixture(autouse=True)
def _only_with_benchmarks(request):
    config = request.config
    if config.getoption("benchmark_disable", False) and not config.getoption("benchmark_enable", False):
        pytest.skip("benchmark: run with `make bench`")


@pytest.fixture(scope="module")
def pg_server():
    """A server that fsyncs, as a deployment does (the suite's shared one does not: tests/support/postgres.py)."""
    server = postgres.Server(postgres.require_binaries(), durable=True)
    yield server
    server.destroy()


def _load() -> str:
    return f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"


def _append(path, payload: bytes) -> float:
    batches = [[Append(new_record_id(), "event", payload) for _ in range(min(1000, ROWS - b))]
               for b in range(0, ROWS, 1000)]
    with Store(path) as store:
        began = time.perf_counter()
        for batch in batches:
            store.append(batch)
        return ROWS / (time.perf_counter() - began)


def _ship(fleet, path) -> float:
    shipper = Shipper(path, fleet.ship_url, host="bench", batch_rows=1000)
    began = time.perf_counter()
    status = shipper.run(follow=False)
    elapsed = time.perf_counter() - began
    assert (status.rows_shipped, status.refused, status.last_error) == (ROWS, None, None)
    return ROWS / elapsed


@pytest.mark.parametrize("document", ["small", "tool event"])
def test_shipping_against_the_local_append_of_the_same_rows(pg_server, tmp_path, monkeypatch, document):
    payload = SMALL if document == "small" else _tool_event_document()
    ratios, appends, ships = [], [], []
    for r in range(ROUNDS):
        store = tmp_path / f"r{r}.db"
        (tmp_path / f"f{r}").mkdir()
        fleet = postgres.Fleet.create(pg_server, tmp_path / f"f{r}", monkeypatch)  # a fresh database per round
        a = _append(store, payload)
        s = _ship(fleet, store)
        appends.append(a)
        ships.append(s)
        ratios.append(s / a)
    print(f"\nfleet (a) shipping vs local append, {document} document ({len(payload):,} B), {ROWS:,} rows, "
          f"1,000 per transaction / per ingest call, {ROUNDS} rounds ({_load()}):")
    print(f"  append {statistics.median(appends):>9,.0f} rows/s (rounds {', '.join(f'{x:,.0f}' for x in appends)})")
    print(f"  ship   {statistics.median(ships):>9,.0f} rows/s (rounds {', '.join(f'{x:,.0f}' for x in ships)})")
    print(f"  ratio ship/append, median of rounds: {statistics.median(ratios):.2f} "
          f"(rounds {', '.join(f'{x:.2f}' for x in ratios)}); aim >= 0.5")


def test_shipping_cost_on_daemon_ingest(tmp_path, monkeypatch):
    server = postgres.Server(postgres.require_binaries(), nice=19, durable=True)
    try:
        fleet = postgres.Fleet.create(server, tmp_path, monkeypatch)
        ratios, with_ship, without = [], [], []
        for r in range(ROUNDS):
            order = ("off", "on") if r % 2 == 0 else ("on", "off")
            rates = {}
            for arm in order:
                extra = ["--ship-url", fleet.ship_url] if arm == "on" else []
                d = Daemon(tmp_path / f"r{r}-{arm}", verify_interval=5.0, extra_args=extra).start()
                try:
                    rates[arm] = pipelined(d.socket, _lines(EVENTS))
                    if arm == "on":
                        wait_for(lambda d=d: d.health()["ship"].get("lag_rows") == 0, "shipping to catch up", 300)
                finally:
                    assert d.stop() == 0, d.output()
            with_ship.append(rates["on"])
            without.append(rates["off"])
            ratios.append(rates["on"] / rates["off"])
    finally:
        server.destroy()
    print(f"\nfleet (b) daemon ingest with shipping on vs off, {EVENTS:,} events per arm, pipelined over 4 "
          f"connections, PostgreSQL at nice 19, {ROUNDS} rounds in alternating order ({_load()}):")
    print(f"  shipping on  {statistics.median(with_ship):>8,.0f} events/s (rounds {', '.join(f'{x:,.0f}' for x in with_ship)})")
    print(f"  shipping off {statistics.median(without):>8,.0f} events/s (rounds {', '.join(f'{x:,.0f}' for x in without)})")
    print(f"  ratio on/off, median of rounds: {statistics.median(ratios):.2f} "
          f"(rounds {', '.join(f'{x:.2f}' for x in ratios)}); aim >= 0.95")


def _rows(path) -> list[tuple]:
    from agentwatch.store import db
    from agentwatch.store.packing import Dictionaries

    reader = db.open_reader(path)
    try:
        document = Dictionaries.of(reader).document
        return [(*r[:4], document(r[4], r[7], r[8]), r[5], r[6]) for r in reader.execute(
            "SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash, payload_dict,"
            " payload_z FROM records ORDER BY seq")]
    finally:
        reader.close()


def test_where_the_server_spends_its_time(pg_server, tmp_path, monkeypatch):
    """(c) The server side of (a), by parts: per row, in µs, each part run on its own over the same
    1,000-row batches the shipper sends (parse to jsonb, chain hash, the verdict query, the insert)."""
    payload = _tool_event_document()
    store = tmp_path / "s.db"
    _append(store, payload)
    rows = _rows(store)
    fleet = postgres.Fleet.create(pg_server, tmp_path, monkeypatch)
    batches = [rows[i:i + 1000] for i in range(0, len(rows), 1000)]
    from agentwatch.store import db

    reader = db.open_reader(store)
    sid = db.store_id(reader)
    reader.close()
    parts = {
        "jsonb parse (agentwatch._doc)": "SELECT count(agentwatch._doc(p)) FROM unnest(%b::bytea[]) AS p",
        "sha256 of the payload": "SELECT count(sha256(p)) FROM unnest(%b::bytea[]) AS p",
        "chain v1 hash (framing + 2 x sha256)": (
            "SELECT count(agentwatch.chain_v1_hash(%b, s, 1, 'event', 'r', decode(repeat('00', 32), 'hex'), p))"
            " FROM unnest(%b::bytea[]) WITH ORDINALITY AS b(p, s)"),
    }
    timings: dict[str, float] = {}
    with fleet.admin() as conn:
        for name, query in parts.items():
            began = time.perf_counter()
            for batch in batches:
                payloads = [r[4] for r in batch]
                args = (sid, payloads) if query.count("%b") == 2 else (payloads,)
                conn.execute(query, args).fetchone()
            timings[name] = (time.perf_counter() - began) / len(rows) * 1e6
    ingest = ("SELECT accepted FROM agentwatch.ingest_rows(%b, 'bench', %b, 1, %b::bigint[], %b::text[], %b::text[],"
              " %b::bigint[], %b::bytea[], %b::bytea[], %b::bytea[], NULL, NULL)")
    with fleet.shipper() as conn:
        began = time.perf_counter()
        for batch in batches:
            columns = [list(c) for c in zip(*batch)]
            assert conn.execute(ingest, (sid.hex(), len(rows), *columns)).fetchone() == (len(batch),)
        timings["ingest_rows, whole (verdict, insert, indexes, TOAST, commit)"] = (
            (time.perf_counter() - began) / len(rows) * 1e6)
    print(f"\nfleet (c) server time per row, tool-event document ({len(payload):,} B), {len(rows):,} rows in "
          f"1,000-row calls ({_load()}):")
    for name, us in timings.items():
        print(f"  {name:<62} {us:>7.1f} µs/row")
