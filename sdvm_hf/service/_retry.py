"""Sending one batch: the retry policy, the shared HTTP 429 gate; no new request once stopping."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sdvm_hf.service._base import RESUME, ServiceError
from sdvm_hf.service._client import Call, classify

log = logging.getLogger("sdvm_hf.service.roundtrip")
T = TypeVar("T")


@dataclass(frozen=True)
class Retry:
    """How often and how patiently to retry."""

    rate_limited: int = 8
    """Attempts per batch after an HTTP 429."""
    transient: int = 3
    """Attempts per batch after a 5xx answer or a dropped connection."""
    backoff: float = 1.0
    """Seconds before the first retry; doubled each time."""
    sleep: Callable[[float], Awaitable[None] | None] = field(
        default=asyncio.sleep, compare=False, repr=False
    )
    """How to wait: a function or a coroutine function (tests pass one that records)."""

    async def wait(self, seconds: float) -> None:
        """Wait ``seconds`` with :attr:`sleep`."""
        waited = self.sleep(seconds)
        if inspect.isawaitable(waited):
            await waited


class NotSent(Exception):
    """A batch left unsent (or unanswered) because the run is stopping."""


class Flight:
    """Whether the run is stopping, and which batches have a request on the wire now."""

    def __init__(self) -> None:
        self.stopping = False
        self.sending: set[int] = set()


class Gate:
    """The shared HTTP 429 backoff: while one worker waits out a rate limit, none sends."""

    def __init__(self, retry: Retry) -> None:
        self.retry = retry
        self.open = asyncio.Event()
        self.open.set()
        self.delay = retry.backoff

    async def back_off(self, label: str) -> None:
        if not self.open.is_set():  # another worker is already waiting it out
            await self.open.wait()
            return
        self.open.clear()
        log.warning("%s: rate limited (HTTP 429); every request waits %.1fs", label, self.delay)
        try:
            await self.retry.wait(self.delay)
            self.delay *= 2
        finally:
            self.open.set()

    def passed(self) -> None:
        self.delay = self.retry.backoff


async def send(
    call: Call,
    sent: list[dict[str, Any]],
    number: int,
    label: str,
    address: str,
    gate: Gate,
    slots: asyncio.Semaphore,
    flight: Flight,
    check: Callable[[Any], T],
    deadline: float | None = None,
    secrets: tuple[str, ...] = (),
) -> T:
    """``check`` of the service's answer to batch ``number``; a request holds one of ``slots``.

    Once ``flight`` is stopping, no request leaves and none is retried (:class:`NotSent`).
    ``check`` looks at an answer's shape before the slot is let go: a ``ServiceError`` it
    raises stops the run before another request can leave. ``deadline`` bounds each request
    whole (a server that trickles its answer a byte at a time cannot keep it alive past it);
    ``secrets`` never appear in a message.
    """
    retry = gate.retry
    attempts = {"retry-429": 0, "retry": 0}
    limits = {"retry-429": retry.rate_limited, "retry": retry.transient}
    delay = retry.backoff
    while True:
        async with slots:
            await gate.open.wait()  # holding a slot: no request leaves while the gate is shut
            if flight.stopping:
                raise NotSent(label)
            flight.sending.add(number)
            try:
                returned = await asyncio.wait_for(call(sent), deadline)
            except Exception as error:  # the SDK's errors, httpx's, and a malformed body
                failure: Exception | None = error
                kind, message = classify(error, address, secrets, deadline or 0.0)
                if kind == "stop":  # before the slot is let go: no other request leaves
                    flight.stopping = True
            else:
                failure = None
                gate.passed()
                try:
                    checked = check(returned)
                except ServiceError:
                    flight.stopping = True
                    raise
            finally:
                flight.sending.discard(number)
        if failure is None:
            return checked
        if kind == "stop":
            raise ServiceError(f"{label}: {message}; {RESUME}") from None
        if flight.stopping:
            raise NotSent(f"{label}: {message}")
        attempts[kind] += 1
        if attempts[kind] > limits[kind]:
            raise ServiceError(f"{label}: {message}, {attempts[kind]} times; {RESUME}") from None
        if kind == "retry-429":
            await gate.back_off(label)
        else:
            log.warning("%s: %s; retrying in %.1fs", label, message, delay)
            await retry.wait(delay)
            delay *= 2
