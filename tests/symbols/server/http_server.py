"""A real HTTP symbol server on 127.0.0.1 for the download tests, with switches for bad behaviour.

`SymbolHttpServer` serves a Breakpad symbol tree (`BASE/<debug file>/<id>/<name>.sym`) from
one or more folders, over a threaded `http.server` on a free loopback port. Per path (the URL
path without its query) a test can make it answer 404, fail with 500 a number of times, stall,
cut the body short of its Content-Length, redirect, or send the body gzip-encoded. Every request
is recorded (path, query, headers), and the number of requests in progress at once is tracked.
"""

from __future__ import annotations

import gzip
import http.server
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.symbols import FetchPolicy, SymbolServer, SymbolServerOptions
from tests.symbols.stand_ins import Module

REPO = Path(__file__).resolve().parents[3]
SAMPLE_DUMP = REPO / "resources" / "examples" / "sample.dmp"
SYMBOL_TREES = (
    REPO / "resources" / "examples" / "symbols",
    *sorted((REPO / "tests" / "fixtures" / "crashes").glob("*/symbols")),
    REPO / "tests" / "fixtures" / "crashes" / "system-symbols",
)
RENDER_FARM = "render_farm/C45AC8E94E82B725B3C5363770E51DB30/render_farm.sym"
LIBC = "libc.so.6/EC61AC938E5A39B16F9FBD350E3169A50/libc.so.6.sym"

#: fast retries and short timeouts, so that the failure tests take milliseconds
FAST = FetchPolicy(connect_timeout=2.0, read_timeout=2.0, total_timeout=5.0, retries=2, backoff=0.01)


RENDER_FARM_MODULE = Module(
    "/opt/render_farm", "e9c85ac4", "render_farm", "C45AC8E94E82B725B3C5363770E51DB30"
)
LIBC_MODULE = Module(
    "/lib/x86_64-linux-gnu/libc.so.6", "93ac61ec", "libc.so.6", "EC61AC938E5A39B16F9FBD350E3169A50"
)


@dataclass(frozen=True)
class Request:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class Behaviour:
    """Switches; keys are URL paths (`/render_farm/…/render_farm.sym`), or None for every path."""

    not_found: set[str] = field(default_factory=set)
    fail: dict[str, int] = field(default_factory=dict)  # path → how many 500s before success
    truncate: set[str] = field(default_factory=set)
    redirect: dict[str, str] = field(default_factory=dict)  # path → Location
    status: dict[str, int] = field(default_factory=dict)  # path → this status, always
    stall: float = 0.0  # seconds before the status line
    delay: float = 0.0  # seconds before answering each request (for the concurrency test)
    delays: dict[str, float] = field(default_factory=dict)  # path → seconds before answering it
    gzip: bool = False
    body: bytes | None = None  # serve this for every path that is not in the tree


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hangs up (a cancelled download) is part of the tests


class SymbolHttpServer:
    def __init__(self, roots: tuple[Path, ...] = SYMBOL_TREES) -> None:
        self.roots = roots
        self.behaviour = Behaviour()
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.active = 0
        self.max_active = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                outer._handle(self)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.origin}/symbols"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def paths(self) -> list[str]:
        with self.lock:
            return [r.path for r in self.requests]

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.max_active = 0

    def _find(self, relative: str) -> Path | None:
        parts = relative.split("/")
        if any(p in ("", ".", "..") for p in parts):
            return None
        for root in self.roots:
            candidate = root.joinpath(*parts)
            if candidate.is_file():
                return candidate
        return None

    def _handle(self, h: http.server.BaseHTTPRequestHandler) -> None:
        split = urllib.parse.urlsplit(h.path)
        path = urllib.parse.unquote(split.path)
        b = self.behaviour
        with self.lock:
            self.requests.append(Request(path, urllib.parse.parse_qs(split.query), dict(h.headers.items())))
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            if b.delay:
                time.sleep(b.delay)
            if path in b.delays:
                time.sleep(b.delays[path])
            if b.stall:
                time.sleep(b.stall)
            self._answer(h, path, b)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self.lock:
                self.active -= 1

    def _answer(self, h: http.server.BaseHTTPRequestHandler, path: str, b: Behaviour) -> None:
        if path in b.redirect:
            self._send(h, 302, b"", {"Location": b.redirect[path]})
            return
        if path in b.status:
            self._send(h, b.status[path], b"no")
            return
        if path in b.not_found:
            self._send(h, 404, b"not here")
            return
        with self.lock:
            failures = b.fail.get(path, 0)
            if failures:
                b.fail[path] = failures - 1
        if failures:
            self._send(h, 500, b"try again")
            return
        found = None
        for prefix in ("/symbols/", "/mirror/"):
            if path.startswith(prefix):
                found = self._find(path.removeprefix(prefix))
        if found is None and b.body is None:
            self._send(h, 404, b"no such file")
            return
        body = found.read_bytes() if found is not None else b.body or b""
        headers: dict[str, str] = {"Content-Type": "text/plain"}
        if b.gzip and "gzip" in h.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        if path in b.truncate:
            headers["Content-Length"] = str(len(body) + 1000)
            h.send_response(200)
            for k, v in headers.items():
                h.send_header(k, v)
            h.send_header("Connection", "close")
            h.end_headers()
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            h.close_connection = True
            return
        self._send(h, 200, body, headers)

    @staticmethod
    def _send(
        h: http.server.BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)


def options_for(
    *servers: SymbolHttpServer | str, cache: Path, token: str | None = None, **kw: object
) -> SymbolServerOptions:
    urls = [s.url if isinstance(s, SymbolHttpServer) else s for s in servers]
    fetch = kw.pop("fetch", FAST)
    return SymbolServerOptions(
        servers=tuple(SymbolServer(u, token) for u in urls),
        cache_dir=cache,
        fetch=fetch,  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )
