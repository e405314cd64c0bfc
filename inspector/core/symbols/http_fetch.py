"""One symbol file over HTTP(S), the way a crash-triage tool must fetch it from a real server.

`HttpFetcher.fetch(url, server, sink, cancel)` GETs `url` and streams the body
into `sink`, returning a `FetchResult`: FOUND, NOT_FOUND (404/410: the server
does not have it) or FAILED (with a reason for people). It handles:

* timeouts: `connect_timeout` per connection, `read_timeout` for a stalled
  read, and `total_timeout` for the whole download (retries included),
  checked between chunks;
* retries: up to `retries` more attempts, with exponential backoff, after a
  5xx or 429 answer or a connection error (refused, reset, timed out, body
  shorter than its Content-Length); never after another 4xx;
* redirects: followed by hand, at most `max_redirects`, only to http/https;
  the bearer token goes only to the server's own origin (scheme, host, port),
  so a redirect to a storage bucket on another host does not receive it;
* `user:password@` in the server URL: sent as Basic authentication (when there
  is no bearer token), to the server's own origin only, like the token;
* `Content-Encoding: gzip` (asked for, decoded while streaming);
* a size cap (`max_bytes`, on the decoded body: a gzip bomb stops there too);
* cancellation, checked between chunks and during backoff.

The HTTP client is urllib3 (imported when the first fetcher is built, so a
walk without servers never loads it): a thread-safe connection pool, streaming
reads that return as soon as data arrives (`read1`), gzip decoding, Content-Length
enforcement, and the system's certificate store by default.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, BinaryIO

from inspector import __version__
from inspector.core.cancel import NEVER, CancelToken
from inspector.core.enums import Enum
from inspector.core.logs import get_logger
from inspector.core.record import Record, field

if TYPE_CHECKING:
    import urllib3

log = get_logger(__name__)

CHUNK = 256 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})

#: `progress(received bytes, total bytes or None)`, called from the downloading thread
_ProgressCallback = Callable[[int, "int | None"], None]


class SymbolServer(Record):
    """A symbol server's base URL and the bearer token it wants (never shown in reprs or logs)."""

    url: str
    token: str | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        # the URL may hold user:password@
        return f"SymbolServer(url={redacted(self.url)!r})"

    @property
    def origin(self) -> tuple[str, str, int]:
        return url_origin(self.url)

    @property
    def credentials(self) -> str | None:
        """`user:password` from the URL (percent-decoded), or None when it names no user."""
        parts = urllib.parse.urlsplit(self.url)
        if parts.username is None:
            return None
        password = urllib.parse.unquote(parts.password or "")
        return f"{urllib.parse.unquote(parts.username)}:{password}"

    def problem(self) -> str | None:
        """Why this URL cannot be used as a symbol server, or None."""
        return url_problem(self.url)


def url_problem(url: str) -> str | None:
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:
        return f"not a URL: {exc}"
    if parts.scheme.lower() not in ("http", "https"):
        return f"only http and https URLs are supported, not {parts.scheme or 'a relative URL'!r}"
    if not parts.hostname:
        return "the URL names no host"
    try:
        _ = parts.port
    except ValueError:
        return "the URL's port is not a number"
    return None


def url_origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) with the scheme's default port filled in."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port


def token_variable(url: str) -> str:
    """The environment variable that may hold this server's token: `CRASH_INSPECTOR_TOKEN_<HOST>[_<PORT>]`."""
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").upper()
    try:
        port = parts.port
    except ValueError:
        port = None
    name = host if port is None else f"{host}_{port}"
    return "CRASH_INSPECTOR_TOKEN_" + re.sub(r"[^A-Z0-9]", "_", name)


def token_from_environment(url: str, environ: Mapping[str, str]) -> str | None:
    """The server's token from `environ[token_variable(url)]`, if set and not blank."""
    value = environ.get(token_variable(url), "").strip()
    return value or None


def server_url(base: str, components: tuple[str, ...], query: dict[str, str] | None = None) -> str:
    """`base` + `/`-joined, percent-encoded components (a `?` or `#` in a name stays a name)."""
    path = "/".join(urllib.parse.quote(part, safe="") for part in components)
    url = base.rstrip("/") + "/" + path
    if query:
        url += "?" + urllib.parse.urlencode(query)
    return url


def redacted(url: str) -> str:
    """The URL without user:password@ (for logs and statuses)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit(parts._replace(netloc=host))


class FetchPolicy(Record):
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    #: rust-minidump's `--symbols-download-timeout-secs` default
    total_timeout: float = 1000.0
    retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 10.0
    max_bytes: int = 2 * 1024**3
    max_redirects: int = 5


class FetchOutcome(Enum):
    FOUND = "found"
    NOT_FOUND = "not found"
    FAILED = "failed"


class FetchResult(Record):
    outcome: FetchOutcome
    reason: str | None = None
    size: int = 0


class _Retryable(Exception):
    """A failure worth another attempt (5xx, 429, connection trouble)."""


class _Final(Exception):
    """A failure no retry will fix."""


_DEFAULT_POLICY = FetchPolicy()


class HttpFetcher:
    """Thread-safe: one pool of connections shared by every download of a run."""

    def __init__(self, policy: FetchPolicy = _DEFAULT_POLICY, *, max_connections: int = 4) -> None:
        import urllib3

        self.policy = policy
        self._urllib3 = urllib3
        self._pool = urllib3.PoolManager(num_pools=16, maxsize=max(1, max_connections), retries=False)
        self._headers = {"User-Agent": f"crash-inspector/{__version__}", "Accept-Encoding": "gzip"}

    def close(self) -> None:
        self._pool.clear()

    def fetch(
        self,
        url: str,
        server: SymbolServer,
        sink: BinaryIO,
        *,
        cancel: CancelToken = NEVER,
        progress: _ProgressCallback | None = None,
    ) -> FetchResult:
        """GET `url` into `sink` (rewound and truncated before each attempt)."""
        policy = self.policy
        deadline = time.monotonic() + policy.total_timeout
        attempt = 0
        while True:
            attempt += 1
            cancel.check()
            sink.seek(0)
            sink.truncate()
            try:
                size = self._attempt(url, server, sink, cancel=cancel, deadline=deadline, progress=progress)
            except _NotFound as nf:
                return FetchResult(FetchOutcome.NOT_FOUND, nf.reason)
            except _Final as exc:
                return FetchResult(FetchOutcome.FAILED, str(exc))
            except _Retryable as exc:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    reason = f"{exc} (gave up after {policy.total_timeout:g} s)"
                    return FetchResult(FetchOutcome.FAILED, reason)
                if attempt > policy.retries:
                    tries = f"{attempt} attempt{'s' if attempt != 1 else ''}"
                    return FetchResult(FetchOutcome.FAILED, f"{exc} ({tries})")
                delay = min(policy.max_backoff, policy.backoff * 2 ** (attempt - 1), remaining)
                log.info("%s: %s; retrying in %.2f s", redacted(url), exc, delay)
                if cancel.wait(delay):
                    cancel.check()
                continue
            return FetchResult(FetchOutcome.FOUND, size=size)

    def _attempt(
        self,
        url: str,
        server: SymbolServer,
        sink: BinaryIO,
        *,
        cancel: CancelToken,
        deadline: float,
        progress: _ProgressCallback | None,
    ) -> int:
        """Bytes written to `sink` (the body of the answer, after any redirects)."""
        u3 = self._urllib3
        policy = self.policy
        current = url
        origin = server.origin
        credentials = server.credentials
        for _hop in range(policy.max_redirects + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Final(f"timed out after {policy.total_timeout:g} s")
            headers = dict(self._headers)
            if url_origin(current) == origin:
                # urllib3 ignores user:password@ in a URL: send it as Basic auth ourselves
                if server.token:
                    headers["Authorization"] = f"Bearer {server.token}"
                elif credentials is not None:
                    headers["Authorization"] = u3.util.make_headers(basic_auth=credentials)["authorization"]
            timeout = u3.Timeout(
                connect=min(policy.connect_timeout, remaining), read=min(policy.read_timeout, remaining)
            )
            log.debug("GET %s", redacted(current))
            try:
                response = self._pool.request(
                    "GET",
                    current,
                    headers=headers,
                    redirect=False,
                    retries=False,
                    preload_content=False,
                    decode_content=True,
                    timeout=timeout,
                )
            except u3.exceptions.HTTPError as exc:
                raise _Retryable(_describe(exc)) from None
            complete = False
            try:
                status = response.status
                if status in _REDIRECTS:
                    location = response.headers.get("Location")
                    if not location:
                        raise _Final(f"HTTP {status} redirect without a Location")
                    target = urllib.parse.urljoin(current, location)
                    problem = url_problem(target)
                    if problem is not None:
                        raise _Final(f"redirect to {redacted(target)[:200]!r} refused: {problem}")
                    log.debug("%s redirects to %s", redacted(current), redacted(target))
                    current = target
                    continue
                if status in (404, 410):
                    raise _NotFound(f"HTTP {status}")
                if status >= 500 or status == 429:
                    raise _Retryable(f"HTTP {status} {response.reason or ''}".rstrip())
                if status != 200:
                    raise _Final(f"HTTP {status} {response.reason or ''}".rstrip())
                size = self._stream(response, sink, cancel, deadline, progress)
                complete = True
                return size
            finally:
                if complete:
                    response.release_conn()
                else:
                    response.close()
                    response.release_conn()
        raise _Final(f"more than {policy.max_redirects} redirects")

    def _stream(
        self,
        response: urllib3.BaseHTTPResponse,
        sink: BinaryIO,
        cancel: CancelToken,
        deadline: float,
        progress: _ProgressCallback | None,
    ) -> int:
        u3 = self._urllib3
        cap = self.policy.max_bytes
        length = _content_length(response.headers.get("Content-Length"))
        encoded = response.headers.get("Content-Encoding", "identity").lower() not in ("", "identity")
        if length is not None and not encoded and length > cap:
            raise _Final(f"the file is {length:,} bytes, over the {cap:,}-byte limit")
        total = None if encoded else length
        written = 0
        while True:
            cancel.check()
            if time.monotonic() > deadline:
                raise _Final(f"timed out after {self.policy.total_timeout:g} s ({written:,} bytes received)")
            try:
                chunk = response.read1(CHUNK)
            except u3.exceptions.DecodeError as exc:
                raise _Final(f"the compressed body cannot be decoded: {exc}") from None
            except (u3.exceptions.HTTPError, OSError) as exc:
                raise _Retryable(_describe(exc)) from None
            if not chunk:
                return written
            written += len(chunk)
            if written > cap:
                raise _Final(f"the file is larger than the {cap:,}-byte limit")
            sink.write(chunk)
            if progress is not None:
                progress(written, total)


class _NotFound(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _content_length(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        length = int(value.strip())
    except ValueError:
        return None
    return length if length >= 0 else None


def _describe(exc: BaseException) -> str:
    """A short reason for people: urllib3 nests the real cause a few levels deep."""
    text = type(exc).__name__
    reason = getattr(exc, "reason", None)
    inner = reason if isinstance(reason, BaseException) else exc.__context__
    msg = str(inner if inner is not None else exc)
    # urllib3 messages repeat the pool and the URL; the last clause says what happened
    msg = msg.rsplit(": ", 1)[-1].strip("()' ") or msg
    name = type(inner).__name__ if inner is not None else text
    if "timed out" in msg.lower() or "Timeout" in name:
        return "timed out"
    if "IncompleteRead" in str(exc) or "IncompleteRead" in name:
        return "the connection closed before the whole file arrived"
    return f"connection error ({msg[:160]})" if msg else f"connection error ({name})"
