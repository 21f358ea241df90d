"""Build the bundled slices (sdvm_hf/data) and the test fixtures (tests/fixtures).

Run from the repository root with ../shared/realdata present:

    python tools/make_data.py

Real rows come from ../shared/realdata (HellaSwag and MMLU, MIT-licensed). Layouts that
have no copy there (lukaemon, MMMLU, Global-MMLU, MMLU-Redux, auxiliary_train) are real MMLU
dev rows reshaped into those layouts' published column names and types.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

REAL = Path("../shared/realdata")
DATA = Path("sdvm_hf/data")
FIX = Path("tests/fixtures")


def bundled() -> None:
    hellaswag = pq.read_table(REAL / "hellaswag/hub_validation.parquet")
    rows = pa.array(range(0, hellaswag.num_rows, 34), pa.int64())  # ~300 rows, both sources
    pq.write_table(hellaswag.take(rows), DATA / "hellaswag_validation.parquet")
    mmlu = pq.read_table(REAL / "mmlu/hub_all_test.parquet")
    subjects = mmlu.column("subject").to_pylist()
    first: dict[str, int] = {}
    keep = [i for i, s in enumerate(subjects) if first.setdefault(s, i) > i - 5]
    pq.write_table(mmlu.take(pa.array(keep, pa.int64())), DATA / "mmlu_test.parquet")


def hellaswag_fixtures() -> None:
    out = FIX / "hellaswag"
    out.mkdir(parents=True, exist_ok=True)
    hub = pq.read_table(REAL / "hellaswag/hub_validation.parquet").slice(0, 12)
    pq.write_table(hub, out / "validation.parquet")
    with gzip.open(REAL / "hellaswag/rowanz_val.jsonl.gz", "rt", encoding="utf-8") as lines:
        original = [next(lines) for _ in range(12)]
    (out / "validation.jsonl").write_text("".join(original), encoding="utf-8")
    shutil.copy(REAL / "hellaswag/hellaswag_test_head2.jsonl", out / "test.jsonl")
    test_rows = [json.loads(line) for line in (out / "test.jsonl").read_text().splitlines()]
    schema = hub.schema
    test = pa.Table.from_pylist(
        [{**row, "source_id": row.get("source_id", ""), "label": ""} for row in test_rows],
        schema=schema,
    )
    pq.write_table(test, out / "test.parquet")


def mmlu_fixtures() -> None:
    out = FIX / "mmlu"
    out.mkdir(parents=True, exist_ok=True)
    test = pq.read_table(REAL / "mmlu/hub_all_test.parquet")
    parts = [
        test.filter(pc.equal(test.column("subject"), s)).slice(0, 6)
        for s in ("astronomy", "virology")
    ]
    pq.write_table(pa.concat_tables(parts), out / "cais_test.parquet")
    hub_dev = pq.read_table(REAL / "mmlu/hub_all_dev.parquet").slice(0, 6)
    csv_dir = out / "hendrycks"
    csv_dir.mkdir(exist_ok=True)
    shutil.copy(REAL / "mmlu/hendrycks_csv/dev/abstract_algebra_dev.csv", csv_dir)
    shutil.copy(REAL / "mmlu/hendrycks_csv/val/college_medicine_val.csv", csv_dir)
    pro = pq.read_table(REAL / "mmlu_pro/test.parquet")
    lengths = pc.list_value_length(pro.column("options")).to_pylist()
    picks = [*range(6), lengths.index(1), lengths.index(2)]
    pq.write_table(pro.take(pa.array(picks, pa.int64())), out / "mmlu_pro.parquet")

    dev = hub_dev.to_pylist()
    letters = "ABCD"
    pq.write_table(
        pa.table(
            {
                "train": pa.array(
                    [
                        {
                            "answer": r["answer"],
                            "choices": r["choices"],
                            "question": r["question"],
                            "subject": "",
                        }
                        for r in dev
                    ],
                    pa.struct(
                        [
                            ("answer", pa.int64()),
                            ("choices", pa.list_(pa.string())),
                            ("question", pa.string()),
                            ("subject", pa.string()),
                        ]
                    ),
                )
            }
        ),
        out / "auxiliary_train.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "input": [r["question"] for r in dev],
                **{letter: [r["choices"][i] for r in dev] for i, letter in enumerate(letters)},
                "target": [letters[r["answer"]] for r in dev],
            }
        ),
        out / "lukaemon.parquet",
    )
    with (out / "mmmlu.csv").open("w", encoding="utf-8", newline="") as csv_file:
        import csv

        writer = csv.writer(csv_file)
        writer.writerow(["", "Question", "A", "B", "C", "D", "Answer", "Subject"])
        for i, r in enumerate(dev):
            writer.writerow([i, r["question"], *r["choices"], letters[r["answer"]], r["subject"]])
    pq.write_table(
        pa.table(
            {
                "sample_id": [f"{r['subject']}/dev/{i}" for i, r in enumerate(dev)],
                "subject": [r["subject"] for r in dev],
                "subject_category": ["STEM"] * len(dev),
                "question": [r["question"] for r in dev],
                **{
                    f"option_{letter.lower()}": [r["choices"][i] for r in dev]
                    for i, letter in enumerate(letters)
                },
                "answer": [letters[r["answer"]] for r in dev],
                "required_knowledge": ["[]"] * len(dev),
                "time_sensitive": ["[]"] * len(dev),
                "reference": ["[]"] * len(dev),
                "culture": ["[]"] * len(dev),
                "region": ["[]"] * len(dev),
                "country": ["[]"] * len(dev),
                "cultural_sensitivity_label": ["CA"] * len(dev),
                "is_annotated": [True, False] * (len(dev) // 2),
            }
        ),
        out / "global_mmlu.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "question": [r["question"] for r in dev],
                "choices": pa.array([r["choices"] for r in dev], pa.list_(pa.string())),
                "answer": pa.array([r["answer"] for r in dev], pa.int64()),
                "error_type": ["ok", "ok", "wrong_groundtruth", "ok", "ok", "ok"],
                "source": [None] * len(dev),
                "correct_answer": [None, None, "A", None, None, None],
                "potential_reason": [None] * len(dev),
            },
            schema=pa.schema(
                [
                    ("question", pa.string()),
                    ("choices", pa.list_(pa.string())),
                    ("answer", pa.int64()),
                    ("error_type", pa.string()),
                    ("source", pa.string()),
                    ("correct_answer", pa.string()),
                    ("potential_reason", pa.string()),
                ]
            ),
        ),
        out / "mmlu_redux.parquet",
    )


if __name__ == "__main__":
    bundled()
    hellaswag_fixtures()
    mmlu_fixtures()
