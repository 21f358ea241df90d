"""Peak memory of a count-only pass over a large HellaSwag sample file.

Builds ROWS HellaSwag samples (the bundled slice repeated, default 1,000,000), writes them to
Parquet, then in fresh processes measures the peak RSS of:

- floor: ``pyarrow.parquet.read_table`` of the file (memory-mapped), nothing decoded;
- ours: ``read_parquet(path)`` (rows checked), then ``sum(1 for _ in samples)``: samples are
  decoded one batch at a time and dropped;
- eager: ``list(read_parquet(path))``, every sample held at once (what a lazy pass avoids);
- stream: ``iter_parquet(path)``, one checked batch at a time, no table held;
- inspect, validate: ``inspect_file`` / ``validate_file`` (what ``sdvm-hf inspect`` and
  ``validate`` run), a batch at a time.

Run: ``.venv/bin/python benchmarks/iterate_memory.py [ROWS]``.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _data import PEAK

from sdvm_hf import load_hellaswag, write_parquet

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1_000_000

PASSES = {
    "floor": "import pyarrow.parquet as pq; n = pq.read_table(PATH, memory_map=True).num_rows",
    "ours": "from sdvm_hf import read_parquet; n = sum(1 for _ in read_parquet(PATH))",
    "eager": "from sdvm_hf import read_parquet; n = len(list(read_parquet(PATH)))",
    "stream": "from sdvm_hf import iter_parquet; n = sum(1 for _ in iter_parquet(PATH))",
    "inspect": "from sdvm_hf import inspect_file; n = inspect_file(PATH).samples",
    "validate": "from sdvm_hf import validate_file; n = validate_file(PATH).rows",
}


def measure(code: str, path: Path) -> tuple[int, float]:
    """Rows counted and peak RSS in MiB of ``code`` run in a fresh interpreter."""
    script = f"{PEAK}\nPATH = {str(path)!r}\n{code}\nprint(n, peak_bytes())"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    rows, peak = out.stdout.split()
    return int(rows), int(peak) / 2**20


def build(path: Path) -> None:
    """Write ROWS HellaSwag samples to ``path`` (run in its own process: Linux children
    inherit their parent's peak RSS, so the parent of the measured passes stays small)."""
    bundled = load_hellaswag(bundled=True)
    write_parquet(bundled[np.arange(ROWS) % len(bundled)], path)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hellaswag.parquet"
        here = Path(__file__).resolve()
        subprocess.run([sys.executable, str(here), str(ROWS), "--build", str(path)], check=True)
        size = path.stat().st_size / 2**20
        print(f"{ROWS:,} samples, file {size:.0f} MiB")
        for name, code in PASSES.items():
            rows, peak = measure(code, path)
            assert rows == ROWS, (name, rows)
            print(f"{name:>8}: peak RSS {peak:,.0f} MiB")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(the parent process: {own:,.0f} MiB)")


if __name__ == "__main__":
    if "--build" in sys.argv:
        build(Path(sys.argv[sys.argv.index("--build") + 1]))
    else:
        main()
