"""Issue #19's "Done when", in one run: every cold path as a ratio to its floor.

For HellaSwag (``hub_validation.parquet``) at 100k and 1M rows and MMLU (``hub_all_test``)
at 140k and 1.4M rows, replicated into a temporary folder, each case is a fresh process
timed whole (wall time, start-up included), run alternately with the floor, a fresh process
running ``pq.write_table(pq.read_table(F), OUT)``, once a round before the cases;
medians of ``--repeats`` rounds:

- ``load``: ``write_parquet(load(NAME, data_files=F), OUT)`` (eager);
- ``stream``: ``write_parquet(stream(NAME, data_files=F), OUT)`` (batch by batch);
- ``convert``: ``sdvm-hf convert NAME --data-files F -o OUT`` (samples, rejects, summary);
- ``datasets``: ``datasets.load_dataset("parquet", data_files=F)["train"].to_parquet(OUT)``
  with a fresh cache, the library underneath, beside them (no target).

Each process also reports its peak RSS, printed against the floor's. Targets: <= 1.15x at 1M
rows and more, <= 1.5x at 100k. Then start-up (``startup.py``: import and ``--help`` against
the import floor), the summary's share of a conversion (``summary_share.py``), and the
round trip's effective concurrency (``service_concurrency.py``, run with Python 3.12 when
one is found, since the SDK needs it; otherwise said to be skipped).

    python benchmarks/floor.py [--realdata ../shared/realdata] [--repeats 5] [--quick]

Then issue #28's file layouts (``layouts.py``): the eager load and the command on Parquet of
one row group, of 10,042-row and of 1,000-row groups, HellaSwag's JSON Lines and MMLU's CSV,
against pyarrow's eager and streamed floors of the same file.

``--quick`` (a couple of minutes): 20k/100k HellaSwag and 28k/140k MMLU rows, one repeat,
fewer start-up rounds, the summary at 100k rows, one round of the round trip on 2,000 rows.
``--only SECTION`` runs one section (cold, startup, summary, round-trip, layouts).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import layouts
import pyarrow.parquet as pq
import startup
import summary_share
from _data import PEAK, REALDATA, replicated

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

DATASETS = {
    "hellaswag": "hellaswag/hub_validation.parquet",
    "mmlu": "mmlu/hub_all_test.parquet",
}
SIZES = {"hellaswag": (100_000, 1_000_000), "mmlu": (140_000, 1_400_000)}
QUICK_SIZES = {"hellaswag": (20_000, 100_000), "mmlu": (28_000, 140_000)}

_PEAK = PEAK + "\nimport json, sys\nprint(json.dumps({'peak': peak_bytes()}), file=sys.stderr)"
_CODE = {
    "floor": "import pyarrow.parquet as pq\npq.write_table(pq.read_table({f!r}), {out!r})",
    "load": (
        "from sdvm_hf import load, write_parquet\nwrite_parquet(load({name!r}, data_files={f!r}), "
        "{out!r})"
    ),
    "stream": (
        "from sdvm_hf import stream, write_parquet\n"
        "write_parquet(stream({name!r}, data_files={f!r}), {out!r})"
    ),
    "convert": (
        "import sys\nfrom sdvm_hf.cli import main\n"
        "code = main(['convert', {name!r}, '--data-files', {f!r}, '-o', {out!r}, '--quiet'])"
        "\nassert code == 0, code"
    ),
    "datasets": (
        "import datasets\n"
        "data = datasets.load_dataset('parquet', data_files={f!r}, cache_dir={cache!r})['train']"
        "\ndata.to_parquet({out!r})"
    ),
}
TARGETS = {"load", "stream", "convert"}
SECTIONS = ("cold", "startup", "summary", "round-trip", "layouts")


def _python() -> str:
    return sys.executable


def _timed(code: str) -> tuple[float, int]:
    """Wall seconds of a fresh process running ``code``, and its peak RSS in bytes."""
    start = time.perf_counter()
    done = subprocess.run(
        [_python(), "-c", code + _PEAK], check=True, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    peak = json.loads(done.stderr.strip().splitlines()[-1])["peak"]
    return seconds, int(peak)


def cold_paths(realdata: Path, sizes: dict[str, tuple[int, int]], repeats: int) -> None:
    """Every cold path against its floor, each size, medians of alternate fresh processes."""
    print(f"== cold paths: fresh processes, wall time with start-up, medians of {repeats}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, file in DATASETS.items():
            for rows in sizes[name]:
                source = folder / f"{name}-{rows}.parquet"
                pq.write_table(replicated(realdata, file, rows), source)
                target = 1.15 if rows >= 1_000_000 else 1.5
                floors: list[float] = []
                floor_peaks: list[float] = []
                times: dict[str, list[float]] = {case: [] for case in _CODE if case != "floor"}
                peaks: dict[str, list[float]] = {case: [] for case in times}
                floor_code = _CODE["floor"].format(f=str(source), out=str(folder / "f.parquet"))
                _timed(floor_code)  # warms the file cache
                for _ in range(repeats):  # each round: the floor, then every case
                    floor_s, floor_bytes = _timed(floor_code)
                    floors.append(floor_s)
                    floor_peaks.append(floor_bytes)
                    for case in times:
                        cache = folder / "hf-cache"
                        out = folder / f"{case}.parquet"
                        code = _CODE[case].format(
                            name=name, f=str(source), out=str(out), cache=str(cache)
                        )
                        seconds, peak = _timed(code)
                        shutil.rmtree(cache, ignore_errors=True)
                        for written in folder.glob(f"{case}.*"):
                            written.unlink()
                        times[case].append(seconds)
                        peaks[case].append(peak)
                floor = statistics.median(floors)
                floor_peak = statistics.median(floor_peaks)
                print(
                    f"{name} {rows:>9,} rows: floor {floor:6.2f} s, peak {floor_peak / 2**20:5.0f} "
                    f"MiB (load average {os.getloadavg()[0]:.1f})"
                )
                for case, seconds_list in times.items():
                    seconds = statistics.median(seconds_list)
                    ratio = seconds / floor
                    goal = ""
                    if case in TARGETS:
                        goal = f"  (target <= {target}x: {'met' if ratio <= target else 'MISSED'})"
                    memory = statistics.median(peaks[case]) / floor_peak
                    print(
                        f"  {case:<9} {seconds:6.2f} s  {ratio:5.2f}x  peak "
                        f"{statistics.median(peaks[case]) / 2**20:5.0f} MiB ({memory:4.2f}x){goal}"
                    )
                source.unlink()


def start_up(repeats: int) -> None:
    print(f"== start-up (benchmarks/startup.py, {repeats} rounds)")
    print("\n".join(startup.both(repeats)))


def summary(realdata: Path, rows: int, repeats: int) -> None:
    print(f"== the summary's share of a conversion (benchmarks/summary_share.py, {rows:,} rows)")
    base, shares = summary_share.measure(realdata, rows, repeats)
    seconds, ctx_a = shares["bounded"]
    print(
        f"conversion {base * 1000:.0f} ms, summary {seconds * 1000:.0f} ms: {seconds / base:.1%} "
        f"(ctx_a: {ctx_a}); every text hashed: {shares['exact'][0] / base:.1%}"
    )


def _python312() -> tuple[list[str], dict[str, str]] | None:
    """A Python 3.12 with the package's dependencies, for the SDK (or ``None``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    candidates = [
        ([str(ROOT / ".venv312" / "bin" / "python")], env),
        (["/work/main/.venv312/bin/python"], env),
        (["python3"], {**env, "PYENV_VERSION": "3.12.1"}),
    ]
    for argv, environment in candidates:
        if argv[0] != "python3" and not Path(argv[0]).exists():
            continue
        probe = "import sys, sdvm, pyarrow; assert sys.version_info >= (3, 12)"
        ok = subprocess.run([*argv, "-c", probe], env=environment, capture_output=True, check=False)
        if ok.returncode == 0:
            return argv, environment
    return None


def round_trip(repeats: int, rows: int | None = None) -> None:
    print("== the round trip's effective concurrency (benchmarks/service_concurrency.py)")
    found = _python312()
    if found is None:
        print("skipped: no Python 3.12 with the sdvm SDK found (.venv312, or pyenv 3.12.1)")
        return
    argv, env = found
    script = HERE / "service_concurrency.py"
    done = subprocess.run(
        [*argv, str(script), "--repeats", str(repeats), *(["--rows", str(rows)] if rows else [])],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    print(done.stdout.rstrip())
    if done.returncode:
        print(f"service_concurrency.py failed ({done.returncode}): {done.stderr.strip()[-500:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realdata", type=Path, default=REALDATA)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--only", choices=SECTIONS, help="run this section alone")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    started = time.perf_counter()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    run = {args.only} if args.only else set(SECTIONS)
    if "cold" in run:
        cold_paths(args.realdata, QUICK_SIZES if args.quick else SIZES, repeats)
    if "startup" in run:
        start_up(3 if args.quick else 11)
    if "summary" in run:
        summary(args.realdata, 100_000 if args.quick else 1_000_000, repeats)
    if "round-trip" in run:
        round_trip(1, 2_000) if args.quick else round_trip(3)
    if "layouts" in run:
        layouts.measure(args.realdata, repeats, args.quick)
    print(f"done in {time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
