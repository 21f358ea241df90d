"""The SDVM round trip's effective concurrency against the local stand-in (Python >= 3.12).

10,042 real HellaSwag rows (the Hub's validation split; the bundled slice replicated to that
size when the real file is absent) are 101 requests. The stand-in (in its own process, keeping
connections alive like the real service) answers each 0.2 s after it arrives and records when
each request arrived and when its answer left. The effective concurrency of a run is the
service's summed busy time over the wall time of the whole ``run_stage`` call (set-up, parts
and the final write included): N when the client is never the bottleneck, less by as much as
the client makes the service wait. Targets: at least 6 at N=8 and 10 at N=16. The same runs
against an instant stand-in give the round trip's own work (tagging, checking, joining,
hashing, writing parts) as the measured floor; the client's CPU time per run is printed too.
Figures are medians; the load average is printed before and after (a busy machine slows all).

    python benchmarks/service_concurrency.py [--repeats 5] [--rows 10042]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from sdvm_hf import SampleSequence, load_hellaswag
from sdvm_hf.service import run_stage

REAL = Path("/work/shared/realdata/hellaswag/hub_validation.parquet")
DELAY = 0.2
TARGETS = {8: 6.0, 16: 10.0}
KEY = "sk-test-secret-key-123"
TESTS = Path(__file__).resolve().parent.parent / "tests"
SERVE = f"""
import json, sys
sys.path.insert(0, {str(TESTS)!r})
from service_stub import StubService
with StubService(delay=float(sys.argv[1])) as stub:
    print(stub.url, flush=True)
    for _ in sys.stdin:  # each line asks for the busy spans recorded since the last one
        with stub.lock:
            busy, stub.busy, stub.requests = stub.busy, [], []
        print(json.dumps(busy), flush=True)
"""


def runs(
    samples: SampleSequence, delay: float, concurrency: int, repeats: int
) -> list[tuple[float, float, float]]:
    """(wall seconds, service busy seconds, client CPU seconds) of each run after a warm-up."""
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    measured = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "out.parquet"
            for _ in range(repeats + 1):  # the first is a warm-up
                start, cpu = time.perf_counter(), time.process_time()
                run_stage(samples, "audit", out, api_key=KEY, base_url=url, concurrency=concurrency)
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
                out.unlink()
                server.stdin.write("\n")
                server.stdin.flush()
                busy = sum(end - arrived for arrived, end in json.loads(server.stdout.readline()))
                measured.append((wall, busy, cpu))
    finally:
        server.stdin.close()
        server.wait()
    return measured[1:]


def rows(count: int) -> tuple[SampleSequence, str]:
    """``count`` HellaSwag samples, and where they came from."""
    if REAL.exists():
        real = load_hellaswag("validation", data_files=str(REAL))
        table = pa.concat_tables([real.table] * -(-count // len(real))).slice(0, count)
        return SampleSequence(table), f"real HellaSwag validation rows ({REAL.name})"
    bundled = load_hellaswag(bundled=True).table
    table = pa.concat_tables([bundled] * -(-count // bundled.num_rows)).slice(0, count)
    return SampleSequence(table), "the bundled HellaSwag slice, replicated (no real file)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_042)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 16])
    args = parser.parse_args()
    samples, origin = rows(args.rows)
    requests = -(-len(samples) // 100)
    print(
        f"{len(samples):,} samples from {origin} = {requests} requests, stand-in answering in "
        f"{DELAY} s; medians of {args.repeats} runs; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    print("the round trip's effective concurrency (service busy time / wall time of the run):")
    for concurrency in args.concurrency:
        floor = statistics.median(w for w, _, _ in runs(samples, 0.0, concurrency, args.repeats))
        measured = runs(samples, DELAY, concurrency, args.repeats)
        wall = statistics.median(w for w, _, _ in measured)
        effective = statistics.median(busy / w for w, busy, _ in measured)
        cpu = statistics.median(c for _, _, c in measured)
        ideal = -(-requests // concurrency) * DELAY  # the slot with the most requests
        target = TARGETS.get(concurrency)
        goal = (
            ""
            if target is None
            else f"  (target >= {target:g}: {'met' if effective >= target else 'MISSED'})"
        )
        print(
            f"N = {concurrency:2d}: effective concurrency {effective:5.2f}{goal}; "
            f"{wall:6.3f} s vs ideal {ideal:6.3f} s ({wall / ideal:4.2f}x); "
            f"client CPU {cpu:5.3f} s; own work (instant answers) {floor:5.3f} s"
        )
    print(f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
