"""What every part of the round trip shares: the stages, the limits and the one error type."""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Literal
from urllib.parse import unquote, urlsplit

from sdvm_hf.errors import SdvmHfError, printable

Stage = Literal["audit", "fix", "refine"]
STAGES: tuple[Stage, ...] = ("audit", "fix", "refine")
MAX_BATCH = 100
"""The service's limit of samples per request."""
ROW_ID = "sdvm_hf_row"
"""The extra key that carries each sample's row number on the wire (removed on return).

A source whose ``extra`` already has this key gets ``sdvm_hf_row_1`` (or the next free one)."""
RESUME = "finished batches are kept; rerun the same command to resume"


class ServiceError(SdvmHfError, RuntimeError):
    """The round trip stopped: a refused key, no credits, a malformed answer, retries spent.

    Every batch finished before it is kept; rerun the same command to resume.
    """


def install_hint() -> str:
    """What to do when the ``sdvm`` SDK is missing, for the Python that is running."""
    if sys.version_info < (3, 12):
        running = ".".join(map(str, sys.version_info[:3]))
        return (
            "the SDVM round trip needs the sdvm SDK, which needs Python >= 3.12; this is "
            f"Python {running}, where the 'sdvm' extra installs nothing. Make a 3.12 "
            "environment: python3.12 -m venv .venv312 && .venv312/bin/pip install "
            "'sdvm-hf[sdvm]' (from a checkout: .venv312/bin/pip install -e '.[sdvm]')"
        )
    return "the SDVM round trip needs the sdvm SDK: pip install 'sdvm-hf[sdvm]'"


BLOCK_COLUMNS = frozenset({"context", "choices", "answer_index", "audit", "fix", "reaudit"})
"""The columns a stage may change (see :func:`sdvm_hf.arrow._codec.changeable_columns`)."""


MAX_ANSWER = 64 << 20
"""Bytes an answer may have (a request carries at most 100 samples): a larger one is refused
before it is read whole."""
MAX_SAID = 300
"""Characters of a server's text a message quotes; the rest is counted, not printed."""
_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+")
_TAGS = re.compile(r"<[^>]{0,200}>")


def secrets_of(api_key: str, base_url: str | None) -> tuple[str, ...]:
    """What no message may show: the key, and the user and password of the address."""
    found = [api_key]
    if base_url:
        try:
            parts = urlsplit(base_url)
            found += [parts.username or "", parts.password or ""]
        except ValueError:
            pass
    found += [unquote(secret) for secret in found]
    return tuple(secret for secret in found if len(secret) >= 3)


def redact_url(url: str) -> str:
    """``url`` without its credentials (``https://***@host``)."""
    return _CREDENTIALS.sub(r"\1***@", url)


def scrub(text: str, secrets: Iterable[str] = (), limit: int | None = MAX_SAID) -> str:
    """A message safe to print: no secret, one line, at most ``limit`` characters.

    Secrets and URL credentials are replaced by ``***``, control characters escaped, HTML
    tags dropped; ``limit`` is for what a server said.
    """
    for secret in secrets:
        text = text.replace(secret, "***")
    text = _BEARER.sub(r"\1***", redact_url(text))
    if "<" in text and ">" in text:
        text = _TAGS.sub(" ", text)
    text = printable(" ".join(text.split()), one_line=True)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}... ({len(text):,} characters)"
    return text


@contextlib.contextmanager
def scrubbed(secrets: tuple[str, ...]) -> Iterator[None]:
    """Every log line of the round trip and ``ServiceError`` leaving the block, scrubbed.

    Through :func:`scrub`: no secret, no control character (the length is kept).
    """
    logger = logging.getLogger("sdvm_hf.service.roundtrip")

    def clean(record: logging.LogRecord) -> bool:
        record.msg, record.args = scrub(record.getMessage(), secrets, limit=None), None
        return True

    logger.addFilter(clean)
    try:
        yield
    except ServiceError as error:
        raise ServiceError(scrub(str(error), secrets, limit=None)) from None
    finally:
        logger.removeFilter(clean)
