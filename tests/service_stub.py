"""A local stand-in for the SDVM service on 127.0.0.1: the /audit, /fix and /refine JSON the
SDK sends, deterministic verdicts, faults on demand, an answer delay, and a count of the
requests in flight."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RESULT_KEY = {"/audit": "audited_data", "/fix": "fixed_data", "/refine": "refined_data"}
STATUS: dict[str, tuple[int, Any]] = {
    "402": (402, {"detail": "Insufficient credits."}),
    "429": (429, {"detail": "slow down"}),
    "500": (500, {"detail": "internal error"}),
    "404": (404, {"detail": "Not Found"}),
    "malformed": (200, {"unexpected": []}),
    "drop": (0, None),
}


def verdict(sample: dict[str, Any]) -> dict[str, Any]:
    context = sample["context"]
    return {
        "grammar": "  " not in context,
        "complete": sample.get("style") == "continuation" or context.rstrip().endswith("?"),
        "answer_in_range": 0 <= sample["answer_index"] < len(sample["choices"]),
    }


def fixed(sample: dict[str, Any]) -> dict[str, Any]:
    context = " ".join(part for part in sample["context"].split(" ") if part)
    changes = ["collapsed spaces"] if context != sample["context"] else []
    return {
        **sample,
        "context": context,
        "fix": {"changes": changes, "flagged": False, "attempts": 1},
    }


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops connections under concurrent requests
    daemon_threads = True
    block_on_close = False  # a kept-alive connection a client left open must not hang close()


class StubService:
    """Answers like the service, each request ``delay`` seconds after it arrived.

    ``faults`` is consumed one per request in the order they arrive; ``batch_faults`` maps a
    batch's first row to the faults its own requests meet, one per request (deterministic when
    requests run concurrently). A fault is "429", "500", "drop", "401", "402", or a malformed
    answer: "malformed" (no result list), "short" (one sample fewer), "duplicate" (the first
    sample twice), "extra-changed" (a key added to the first sample's extra), "no-block" (the
    first sample's own stage block left out), "bad-block" (the first sample's audit block a
    string), "context-changed" / "answer-changed" (the first
    sample's context or answer changed), "truncated" (the JSON body cut short). ``requests``
    records what arrived (with the whole JSON ``body``), ``answered_rows`` the rows answered,
    ``most_in_flight`` the most requests held at once, ``busy`` each answered request's
    (arrival, answer) times on ``time.monotonic`` (one clock for every process on the machine:
    a benchmark sums them into the service's busy time).
    """

    def __init__(
        self,
        key: str = "sk-test-secret-key-123",
        faults: list[str] | None = None,
        *,
        batch_faults: dict[int, list[str]] | None = None,
        delay: float = 0.0,
    ) -> None:
        self.key = key
        self.faults = list(faults or [])
        self.batch_faults = {row: list(f) for row, f in (batch_faults or {}).items()}
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.answered_rows: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.busy: list[tuple[float, float]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            # Like a real HTTP server: connections are kept alive (HTTP/1.0 would make the
            # client open a connection per request) and answers are not held back by Nagle.
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                arrived = time.monotonic()
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                data = body["data"]
                rows = [d.get("sdvm_hf_row") for d in data]
                with stub.lock:
                    stub.requests.append(
                        {
                            "path": self.path,
                            "rows": rows,
                            "conventions": body.get("conventions"),
                            "config": body.get("config"),
                            "size": len(data),
                            "body": body,
                        }
                    )
                    own = stub.batch_faults.get(rows[0]) if rows else None
                    queue = own or stub.faults
                    fault = queue.pop(0) if queue else "ok"
                    stub.in_flight += 1
                    stub.most_in_flight = max(stub.most_in_flight, stub.in_flight)
                try:
                    if fault.startswith("late-"):  # this answer comes 0.3 s after the others
                        time.sleep(0.3)
                        fault = fault.removeprefix("late-")
                    status, payload = self.answer(data, fault)
                    raw = json.dumps(payload).encode()
                    if fault == "truncated":
                        raw = raw[: len(raw) // 2]
                    time.sleep(max(0.0, stub.delay - (time.monotonic() - arrived)))
                    if status == 0:  # "drop": close the connection without an answer
                        self.close_connection = True
                        return
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                    with stub.lock:
                        stub.busy.append((arrived, time.monotonic()))
                finally:
                    with stub.lock:
                        stub.in_flight -= 1

            def answer(self, data: list[dict[str, Any]], fault: str) -> tuple[int, Any]:
                if self.headers.get("Authorization") != f"Bearer {stub.key}" or fault == "401":
                    return 401, {"detail": "Invalid or revoked API key."}
                if fault in STATUS:
                    return STATUS[fault]
                if self.path == "/audit":
                    out = [{**d, "audit": verdict(d)} for d in data]
                elif self.path == "/fix":
                    out = [fixed(d) for d in data]
                else:
                    out = [
                        {**fixed(d), "audit": verdict(d), "reaudit": verdict(fixed(d))}
                        for d in data
                    ]
                if fault == "short":
                    out = out[:-1]
                elif fault == "duplicate":
                    out = [out[0], *out[:-1]]
                elif fault == "extra-changed":
                    out = [{**out[0], "stub_added": True}, *out[1:]]  # extra is flat on the wire
                elif fault == "context-changed":
                    out = [{**out[0], "context": out[0]["context"] + " Edited."}, *out[1:]]
                elif fault == "answer-changed":
                    n = len(out[0]["choices"])
                    out = [{**out[0], "answer_index": (out[0]["answer_index"] + 1) % n}, *out[1:]]
                elif fault == "truncated":
                    pass
                elif fault == "no-block":  # the stage's own block left out
                    block = "audit" if self.path == "/audit" else "fix"
                    out = [{k: v for k, v in out[0].items() if k != block}, *out[1:]]
                elif fault == "bad-block":
                    out = [{**out[0], "audit": "passed"}, *out[1:]]  # a block must be an object
                else:
                    with stub.lock:
                        stub.answered_rows += [d["sdvm_hf_row"] for d in data]
                return 200, {RESULT_KEY[self.path]: out}

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    def __enter__(self) -> StubService:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def stub_stage(
    samples: Any, stage: str, out: Any, conventions: str | None = None, **options: Any
) -> None:
    """Run ``stage`` on ``samples`` into ``out`` against a fresh stand-in, retrying fast."""
    from sdvm_hf.service import Retry, run_stage

    with StubService(**options) as stub:
        run_stage(
            samples,
            stage,  # type: ignore[arg-type]
            out,
            api_key=stub.key,
            base_url=stub.url,
            conventions=conventions,
            retry=Retry(rate_limited=1, transient=1, backoff=0.01),
        )
