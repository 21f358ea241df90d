"""A local stand-in for the SDVM service: try the round trip offline, with no key and no cost.

It answers the ``/audit``, ``/fix`` and ``/refine`` JSON the SDK sends as the service does,
with deterministic verdicts (``grammar``: no double space; ``complete``: a continuation, or a
question ending in ``?``; ``answer_in_range``) and fixes (double spaces collapsed), and throws
faults on request. Start it with one command and point the round trip at it::

    sdvm-hf serve-stub --port 8377        # or: python -m sdvm_hf.service.stub --port 8377
    export SDVM_BASE_URL=http://127.0.0.1:8377 SDVM_API_KEY=sk-offline

It takes any key unless ``--key`` names one. The tests start it in-process
(:class:`StubService`) and count what arrived.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

RESULT_KEY = {"/audit": "audited_data", "/fix": "fixed_data", "/refine": "refined_data"}
STATUS: dict[str, tuple[int, Any]] = {
    "402": (402, {"detail": "Insufficient credits."}),
    "429": (429, {"detail": "slow down"}),
    "500": (500, {"detail": "internal error"}),
    "404": (404, {"detail": "Not Found"}),
    "malformed": (200, {"unexpected": []}),
    "drop": (0, None),
    "echo-key": (500, None),  # an error whose text echoes the Authorization header
    "big-error": (502, None),  # a 1.2 MB HTML error page
    "redirect": (307, None),  # to another host
}
FAULTS = (
    *("429", "500", "404", "401", "402", "drop", "malformed", "short", "duplicate"),
    *("extra-changed", "no-block", "bad-block", "context-changed", "answer-changed"),
    *("truncated", "swap", "trickle", "huge", "escape", "echo-key", "big-error", "redirect"),
    "late-<fault>",
)
"""Every fault the stand-in throws on request (see :class:`StubService`)."""


def verdict(sample: dict[str, Any]) -> dict[str, Any]:
    """The stand-in's audit of one wire sample: three checks, each true or false."""
    context = sample["context"]
    return {
        "grammar": "  " not in context,
        "complete": sample.get("style") == "continuation" or context.rstrip().endswith("?"),
        "answer_in_range": 0 <= sample["answer_index"] < len(sample["choices"]),
    }


def fixed(sample: dict[str, Any]) -> dict[str, Any]:
    """The stand-in's fix of one wire sample: double spaces in the context collapsed."""
    context = " ".join(part for part in sample["context"].split(" ") if part)
    changes = ["collapsed spaces"] if context != sample["context"] else []
    return {
        **sample,
        "context": context,
        "fix": {"changes": changes, "flagged": False, "attempts": 1},
    }


def _server(address: tuple[str, int], handler: Any) -> ThreadingHTTPServer:
    """A threading HTTP server (imported here: the command's parser imports this module)."""
    from http.server import ThreadingHTTPServer

    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # the default 5 drops connections under concurrent requests
        daemon_threads = True
        block_on_close = False  # a kept-alive connection a client left open must not hang

    return Server(address, handler)


class StubService:
    """Answers like the service, each request ``delay`` seconds after it arrived.

    ``faults`` is consumed one per request in the order they arrive; ``batch_faults`` maps a
    batch's first row to the faults its own requests meet, one per request (deterministic when
    requests run concurrently). A fault is "429", "500", "drop", "401", "402", or a malformed
    answer: "malformed" (no result list), "short" (one sample fewer), "duplicate" (the first
    sample twice), "extra-changed" (a key added to the first sample's extra), "no-block" (the
    first sample's own stage block left out), "bad-block" (the first sample's audit block a
    string), "context-changed" / "answer-changed" (the first
    sample's context or answer changed), "truncated" (the JSON body cut short); hostile:
    "swap" (the first two samples trade context, choices and answer, their ids and extras
    kept), "trickle" (the answer sent a byte every ``trickle`` seconds), "huge" (an answer
    padded to ``huge`` bytes), "escape" (a check named with a terminal escape sequence),
    "echo-key" (a 500 whose text echoes the Authorization header), "big-error" (a 1.2 MB HTML
    502), "redirect" (a 307 to another host); "late-" before a fault delays its answer.
    ``key=None`` takes any key. ``requests``
    records what arrived (with the whole JSON ``body``), ``answered_rows`` the rows answered,
    ``most_in_flight`` the most requests held at once, ``busy`` each answered request's
    (arrival, answer) times on ``time.monotonic`` (one clock for every process on the machine:
    a benchmark sums them into the service's busy time).
    """

    def __init__(
        self,
        key: str | None = "sk-test-secret-key-123",
        faults: list[str] | None = None,
        *,
        batch_faults: dict[int, list[str]] | None = None,
        delay: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        trickle: float = 0.5,
        huge: int = 5_000_000,
    ) -> None:
        self.key = key or "sk-offline"
        self.any_key = key is None
        self.faults = list(faults or [])
        self.batch_faults = {row: list(f) for row, f in (batch_faults or {}).items()}
        self.delay = delay
        self.trickle = trickle
        self.huge = huge
        self.requests: list[dict[str, Any]] = []
        self.answered_rows: list[Any] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.busy: list[tuple[float, float]] = []
        self.lock = threading.Lock()
        stub = self
        from http.server import BaseHTTPRequestHandler

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
                    raw, kind = json.dumps(payload).encode(), "application/json"
                    if fault == "truncated":
                        raw = raw[: len(raw) // 2]
                    elif fault in ("echo-key", "big-error", "redirect"):
                        raw, kind = self.hostile(fault)
                    time.sleep(max(0.0, stub.delay - (time.monotonic() - arrived)))
                    if status == 0:  # "drop": close the connection without an answer
                        self.close_connection = True
                        return
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(raw)))
                    if fault == "redirect":
                        self.send_header("Location", "http://elsewhere.invalid/audit")
                    self.end_headers()
                    if fault == "trickle":  # a byte at a time: every read is quick
                        for byte in raw:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(stub.trickle)
                    else:
                        self.wfile.write(raw)
                    with stub.lock:
                        stub.busy.append((arrived, time.monotonic()))
                finally:
                    with stub.lock:
                        stub.in_flight -= 1

            def hostile(self, fault: str) -> tuple[bytes, str]:
                if fault == "echo-key":
                    said = self.headers.get("Authorization")
                    text = f"upstream failed for request with Authorization: {said}"
                    return json.dumps({"detail": text}).encode(), "application/json"
                if fault == "big-error":
                    page = "<html><body>" + "<p>Bad gateway</p>\n" * 60_000 + "</body></html>"
                    return page.encode(), "text/html"
                return b"", "text/plain"

            def answer(self, data: list[dict[str, Any]], fault: str) -> tuple[int, Any]:
                given = self.headers.get("Authorization") or ""
                if stub.any_key and given.startswith("Bearer ") and len(given) > 7:
                    pass  # any key will do
                elif given != f"Bearer {stub.key}" or fault == "401":
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
                elif fault == "swap" and len(out) > 1:
                    core = ("context", "choices", "answer_index")
                    first, second = dict(out[0]), dict(out[1])
                    first.update({k: out[1][k] for k in core})
                    second.update({k: out[0][k] for k in core})
                    out = [first, second, *out[2:]]
                elif fault == "huge":
                    out = [{**out[0], "audit": {"note": "x" * stub.huge}}, *out[1:]]
                elif fault == "escape":
                    checks = {"\x1b[2J\x1b[31mgrammar": False, "complete": True}
                    out = [{**out[0], "audit": checks}, *out[1:]]
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
                        stub.answered_rows += [d.get("sdvm_hf_row") for d in data]
                return 200, {RESULT_KEY[self.path]: out}

        self.server = _server((host, port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """``http://host:port``, the address to give as ``base_url`` / ``SDVM_BASE_URL``."""
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    def __enter__(self) -> StubService:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sdvm_hf.service.stub``: serve the stand-in until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="python -m sdvm_hf.service.stub", description="a local stand-in for SDVM"
    )
    add_options(parser)
    return serve(parser.parse_args(argv))


def add_options(parser: argparse.ArgumentParser) -> None:
    """The stand-in's options (shared with ``sdvm-hf serve-stub``)."""
    parser.add_argument("--host", default="127.0.0.1", help="address (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8377, help="port (default: 8377; 0: any)")
    parser.add_argument("--key", help="the one API key taken (default: any)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        choices=FAULTS[:-1],
        help="answer the next request with this fault (repeat for more)",
    )
    parser.add_argument("--url-file", help="write the address here once listening")


def serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM; the address on stdout (and in ``--url-file``)."""
    stub = StubService(args.key, args.fault, delay=args.delay, host=args.host, port=args.port)
    print(f"SDVM stand-in at {stub.url} (key: {'any' if args.key is None else 'as given'})")
    print(f"  export SDVM_BASE_URL={stub.url} SDVM_API_KEY={args.key or 'sk-offline'}")
    sys.stdout.flush()
    if args.url_file:
        with open(args.url_file, "w", encoding="utf-8") as file:
            file.write(stub.url + "\n")
    try:
        stub.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stub.server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
