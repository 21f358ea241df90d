"""The SDVM round trip with concurrent requests, against the local stand-in (Python >= 3.12).

2,000 samples are 20 requests; the stand-in (in its own process and keeping connections
alive, like the real service) answers each 0.2 s after it arrives. With ``concurrency`` N the
ideal is 20 x 0.2 s / N; the figure is the median wall time of ``run_stage`` over several
runs, as a ratio to that ideal (target <= 1.3). The same runs against an instant stand-in
give the round trip's own work (tagging, joining, hashing, writing parts) as the measured
floor. The machine's load average is printed too: on a busy machine every figure grows.
"""

from __future__ import annotations

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

ROWS = 2_000
DELAY = 0.2
REPEATS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
TARGET = 1.3
KEY = "sk-test-secret-key-123"
TESTS = Path(__file__).resolve().parent.parent / "tests"
SERVE = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from service_stub import StubService
with StubService(delay=float(sys.argv[1])) as stub:
    print(stub.url, flush=True)
    sys.stdin.read()
"""


def median_seconds(samples: SampleSequence, delay: float, concurrency: int) -> float:
    """Median wall time of ``run_stage`` against a stand-in answering after ``delay``."""
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    times = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "out.parquet"
            for _ in range(REPEATS + 1):  # the first is a warm-up
                start = time.perf_counter()
                run_stage(samples, "audit", out, api_key=KEY, base_url=url, concurrency=concurrency)
                times.append(time.perf_counter() - start)
                out.unlink()
    finally:
        server.stdin.close()
        server.wait()
    return statistics.median(times[1:])


def main() -> None:
    bundled = load_hellaswag(bundled=True).table
    samples = SampleSequence(pa.concat_tables([bundled] * 7).slice(0, ROWS))
    requests = -(-ROWS // 100)
    print(
        f"{ROWS:,} samples = {requests} requests, stand-in answering in {DELAY} s; medians of "
        f"{REPEATS} runs; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    for concurrency in (1, 2, 4, 8):
        floor = median_seconds(samples, 0.0, concurrency)
        seconds = median_seconds(samples, DELAY, concurrency)
        ideal = requests * DELAY / concurrency
        ratio = seconds / ideal
        verdict = "met" if ratio <= TARGET else "MISSED"
        print(
            f"concurrency {concurrency}: {seconds:6.3f} s vs ideal {ideal:5.3f} s  {ratio:5.2f}x "
            f"(target <= {TARGET}x: {verdict}); own work (instant answers) {floor:5.3f} s"
        )
    print(f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
