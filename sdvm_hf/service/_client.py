"""The SDK's async clients: the key and the address checked first, and what each error means."""

from __future__ import annotations

import unicodedata
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from sdvm_hf.service._base import MAX_ANSWER, ServiceError, Stage, install_hint, redact_url, scrub

Call = Callable[[list[dict[str, Any]]], Awaitable[Any]]
"""Send one batch of wire dicts; the service's answer (a list of wire dicts, if well formed)."""
DEFAULT_BASE_URL = "https://api.sdvm.ai"
"""The SDK's own default address (named in messages when no other is given)."""


def require_sdk() -> None:
    """Refuse, in one line, to start without the ``sdvm`` SDK (and its ``httpx``).

    On Python 3.11 the ``sdvm`` extra installs nothing: the line says which Python to use.
    """
    try:
        import httpx  # noqa: F401
        import sdvm  # noqa: F401
    except ImportError:
        raise ServiceError(install_hint()) from None


def check_key(api_key: str) -> None:
    r"""Refuse a key no HTTP header can carry, before any request; never echo the key.

    A key read from a ``.env`` file written on Windows ends in ``\r``; a key pasted from a
    document may hold a non-breaking space. Neither can be sent, and retrying does not help.
    """
    if not api_key:
        raise ServiceError("no API key: set SDVM_API_KEY")
    for position, char in enumerate(api_key, start=1):
        if not char.isascii():
            what = f"a non-ASCII character ({unicodedata.name(char, 'unnamed')})"
        elif not char.isprintable() or char == " ":
            what = f"a control character or space ({char!r})"
        else:
            continue
        raise ServiceError(
            f"the API key in SDVM_API_KEY has {what} at position {position} of "
            f"{len(api_key)}; an HTTP header cannot carry it (a key read from a file with "
            "Windows line endings ends in '\\r'): set SDVM_API_KEY to the key alone"
        )


def check_base_url(base_url: str | None, origin: str) -> None:
    """Refuse an address that is not ``http(s)://host[:port][/path]``, in one line.

    ``origin`` says where it came from (``--base-url``, ``SDVM_BASE_URL``).
    """
    if base_url is None:
        return
    shown = redact_url(base_url)
    expected = "expected http://HOST[:PORT] or https://HOST[:PORT], e.g. " + DEFAULT_BASE_URL
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError as error:
        raise ServiceError(
            f"the service address {shown!r} (from {origin}) is malformed "
            f"({redact_url(str(error))}); {expected}"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServiceError(f"the service address {shown!r} (from {origin}): {expected}")
    import httpx

    try:
        httpx.URL(base_url)
    except (httpx.InvalidURL, ValueError) as error:
        raise ServiceError(
            f"the service address {shown!r} (from {origin}) is malformed "
            f"({redact_url(str(error))}); {expected}"
        ) from None


class AnswerRefused(ServiceError):
    """An answer refused before it is read: a redirect, or more bytes than allowed."""


def _capped(inner: Any, cap: int, address: str) -> Any:
    """An httpx transport that refuses redirects and answers of more than ``cap`` bytes.

    The size is checked on the ``Content-Length`` and again as the body arrives, so a
    server that sends without a length cannot fill the memory either.
    """
    import httpx

    class Stream(httpx.AsyncByteStream):
        def __init__(self, stream: Any) -> None:
            self.stream = stream

        async def __aiter__(self) -> Any:
            seen = 0
            async for chunk in self.stream:
                seen += len(chunk)
                if seen > cap:
                    raise AnswerRefused(f"an answer from {address} larger than {cap:,} bytes")
                yield chunk

        async def aclose(self) -> None:
            await self.stream.aclose()

    class Capped(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await inner.handle_async_request(request)
            length = response.headers.get("content-length", "")
            if response.is_redirect or (length.isdigit() and int(length) > cap):
                await response.aclose()
                if response.is_redirect:
                    target = redact_url(response.headers.get("location", "(no Location)"))
                    raise AnswerRefused(
                        f"{address} answered HTTP {response.status_code}, a redirect to "
                        f"{scrub(target)}, which is not followed (the key would go with it): "
                        "give that address as --base-url if it is the service's"
                    )
                raise AnswerRefused(
                    f"an answer from {address} of {int(length):,} bytes, more than {cap:,}"
                )
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=Stream(response.stream),
                extensions=response.extensions,
            )

        async def aclose(self) -> None:
            await inner.aclose()

    return Capped()


def make_client(
    stage: Stage,
    api_key: str,
    base_url: str | None,
    conventions: str | None,
    timeout: float,
    cap: int = MAX_ANSWER,
) -> tuple[Call, Callable[[], Awaitable[None]]]:
    """How to send one batch of wire dicts with the SDK's async client, and how to close it.

    The SDK's low-level client (``sdvm.async_client.AsyncSDVMClient``) takes and returns the
    wire dicts themselves, so no sample object is built per row on either side; the request
    is the one ``AsyncAuditor`` / ``AsyncFixer`` / ``AsyncRefinery`` would send (their default
    configurations, from the SDK's own config types), and the answers are checked here
    (:mod:`sdvm_hf.service._join`) by rules that refuse everything the SDK's sample types do.
    """
    try:
        import sdvm
        from sdvm.async_client import AsyncSDVMClient
    except ImportError:
        raise ServiceError(install_hint()) from None
    client_args: dict[str, Any] = {"api_key": api_key, "timeout": timeout}
    if base_url:
        client_args["base_url"] = base_url
    client = AsyncSDVMClient(**client_args)
    import httpx

    # the SDK's own client, with its address, key and timeout, through a transport that
    # refuses redirects and answers too large to hold
    made = client._http
    address = redact_url(base_url or DEFAULT_BASE_URL)
    client._http = httpx.AsyncClient(
        base_url=made.base_url,
        headers=made.headers,
        timeout=made.timeout,
        transport=_capped(httpx.AsyncHTTPTransport(), cap, address),
    )
    audit = sdvm.AuditorConfig().to_dict()
    fix = sdvm.FixerConfig().to_dict()
    call: Call
    if stage == "audit":
        call = lambda batch: client.audit(batch, conventions=conventions, config=audit)  # noqa: E731
    elif stage == "fix":
        call = lambda batch: client.fix(batch, config=fix or None, conventions=conventions)  # noqa: E731
    else:  # what a Refinery sends: every stage's configuration the SDK writes
        stages = {"audit": audit, **({"fix": fix} if fix else {}), "reaudit": audit}
        call = lambda batch: client.refine(batch, config=stages, conventions=conventions)  # noqa: E731

    async def close() -> None:
        # The SDK (0.1.5) has no close(); its httpx.AsyncClient is closed here so that no
        # connection outlives the event loop (a request cancelled by Ctrl-C leaves one open).
        http = getattr(client, "_http", None)
        if http is not None:
            await http.aclose()

    return call, close


_NEVER_BETTER = frozenset({400, 404, 405, 413, 422, 501, 505})
"""Statuses a second try of the same request cannot change (stop at once)."""


def classify(
    error: BaseException, address: str, secrets: tuple[str, ...] = (), deadline: float = 0.0
) -> tuple[str, str]:
    """('retry-429' | 'retry' | 'stop', what to tell the user) for an error from the SDK.

    Only what can succeed on a second try is retried: a 429, a 5xx answer (but 501 and 505),
    a timeout, a refused or dropped connection. ``address`` is the service's, for messages;
    ``secrets`` never appear in them, nor does more than a line of what the server said.
    """
    kind, message = _classify(error, redact_url(address), deadline)
    return kind, scrub(message, secrets, limit=None)


def _classify(error: BaseException, address: str, deadline: float) -> tuple[str, str]:
    import httpx
    import sdvm

    if isinstance(error, ServiceError):  # refused by the transport: a redirect, a size
        return "stop", str(error)
    if isinstance(error, TimeoutError):
        return "retry", f"no complete answer from {address} within {deadline:g}s"
    if isinstance(error, sdvm.RateLimitError):
        return "retry-429", "rate limited (HTTP 429)"
    if isinstance(error, sdvm.AuthenticationError):
        return "stop", "the service refused the API key (HTTP 401); check SDVM_API_KEY"
    if isinstance(error, sdvm.InsufficientCreditsError):
        return "stop", "the account has no credits left (HTTP 402)"
    if isinstance(error, sdvm.APIError):
        retry = error.status_code >= 500 or error.status_code == 408
        kind = "stop" if error.status_code in _NEVER_BETTER or not retry else "retry"
        return kind, f"the service answered {scrub(str(error))}"
    if isinstance(error, httpx.ConnectError):
        return "retry", f"cannot connect to {address} ({_text(error)})"
    if isinstance(error, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError):
        name = type(error).__name__
        return "retry", f"the connection to {address} failed ({name}: {_text(error)})"
    if isinstance(error, httpx.HTTPError | httpx.InvalidURL):
        # a request that cannot be made (an unsupported scheme, a header that cannot be sent):
        # the same request fails the same way again
        return "stop", f"the request to {address} cannot be made ({type(error).__name__})"
    return "stop", f"malformed response ({type(error).__name__}: {scrub(str(error))})"


def _text(error: BaseException) -> str:
    return scrub(str(error)) or "no detail"
