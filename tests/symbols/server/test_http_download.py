"""Downloading symbol files from a real HTTP server on 127.0.0.1: success, misses, failures, redirects."""

from __future__ import annotations

import base64
import os
import threading
import time
from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled
from inspector.core.symbols import (
    DownloadState,
    FetchPolicy,
    IndexCache,
    ServerSymbolSupplier,
    SymbolStatus,
    token_from_environment,
    token_variable,
)
from tests.symbols.server.http_server import (
    FAST,
    LIBC,
    LIBC_MODULE,
    RENDER_FARM,
    RENDER_FARM_MODULE,
    SYMBOL_TREES,
    Module,
    SymbolHttpServer,
    options_for,
)

RF_PATH = "/symbols/" + RENDER_FARM


def _supplier(tmp_path: Path, *servers: SymbolHttpServer | str, **kw: object) -> ServerSymbolSupplier:
    local = kw.pop("local", ())
    return ServerSymbolSupplier(
        local,  # type: ignore[arg-type]
        options_for(*servers, cache=tmp_path / "cache", **kw),
        cache=IndexCache(None),
    )


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_downloads_into_the_cache_with_the_url_and_rust_minidumps_query(
    tmp_path: Path, server: SymbolHttpServer
) -> None:
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.status is SymbolStatus.LOADED
        assert result.found_by == "symbol server"
        assert result.download is not None and result.download.state is DownloadState.DOWNLOADED
        expected_url = f"{server.url}/{RENDER_FARM}?code_file=render_farm&code_id=e9c85ac4"
        assert result.symbol_url == expected_url
        assert result.symbol_file is not None
        assert result.symbol_file.symbolize(0x1000) is not None or result.symbol_file.info.url == expected_url
        cached = tmp_path / "cache" / RENDER_FARM
        assert result.path == str(cached)
        original = (SYMBOL_TREES[0] / RENDER_FARM).read_bytes()
        assert cached.read_bytes() == original + f"INFO URL {expected_url}\n".encode()
    (request,) = server.requests
    assert request.path == RF_PATH
    assert request.query == {"code_file": ["render_farm"], "code_id": ["e9c85ac4"]}
    assert "Authorization" not in request.headers
    assert not (tmp_path / "cache" / ".partial").exists() or not os.listdir(tmp_path / "cache" / ".partial")


def test_a_cache_hit_makes_no_request_and_still_reports_the_url(
    tmp_path: Path, server: SymbolHttpServer
) -> None:
    with _supplier(tmp_path, server) as supplier:
        first = supplier.load(RENDER_FARM_MODULE)
    with _supplier(tmp_path, server) as supplier:
        again = supplier.load(RENDER_FARM_MODULE)
        assert again.found_by == "download cache"
        assert again.download is not None and again.download.state is DownloadState.CACHED
        assert again.symbol_url == first.symbol_url
    assert server.paths == [RF_PATH]


def test_a_local_path_wins_over_the_server(tmp_path: Path, server: SymbolHttpServer) -> None:
    with _supplier(tmp_path, server, local=(SYMBOL_TREES[0],)) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.found_by == "debug id"
        assert result.download is None
    assert server.requests == []


def test_not_on_server_is_remembered(tmp_path: Path, server: SymbolHttpServer) -> None:
    missing = Module("/opt/nothing", "", "nothing.so", "0123456789ABCDEF0123456789ABCDEF0")
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(missing)
        assert result.status is SymbolStatus.NOT_FOUND
        assert result.download is not None and result.download.state is DownloadState.NOT_ON_SERVER
        assert result.download.text == "not on server"
    assert len(server.requests) == 1
    with _supplier(tmp_path, server) as supplier:
        again = supplier.load(missing)
        assert again.download is not None and again.download.state is DownloadState.NOT_ON_SERVER
        assert again.download.attempts[0].outcome == "not found (remembered)"
    assert len(server.requests) == 1, "a remembered 404 must not be asked again"
    with _supplier(tmp_path, server, negative_ttl=0) as supplier:
        supplier.load(missing)
    assert len(server.requests) == 2, "with the memory off the server is asked again"


def test_the_code_id_lookup_is_the_fallback(tmp_path: Path, server: SymbolHttpServer) -> None:
    # no debug id: only the code-id layout can find it (Windows dumps without CodeView records)
    module = Module("C:\\Windows\\System32\\ntdll.dll", "5b8fc0d2a1000", "", "")
    code_path = "/symbols/ntdll.dll/5B8FC0D2A1000/ntdll.sym"
    server.behaviour.redirect[code_path] = "/symbols/" + LIBC
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(module)
        assert result.status is SymbolStatus.LOADED
        assert result.symbol_url == f"{server.url}/ntdll.dll/5B8FC0D2A1000/ntdll.sym"
    assert server.paths == [code_path, "/symbols/" + LIBC]
    assert (tmp_path / "cache" / "ntdll.dll" / "5B8FC0D2A1000" / "ntdll.sym").is_file()


def test_500_then_success_is_retried_with_backoff(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.fail[RF_PATH] = 2
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.status is SymbolStatus.LOADED
    assert server.paths == [RF_PATH] * 3


def test_retries_are_bounded_and_a_failure_is_not_remembered(
    tmp_path: Path, server: SymbolHttpServer
) -> None:
    server.behaviour.fail[RF_PATH] = 100
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.status is SymbolStatus.NOT_FOUND
        assert result.download is not None and result.download.state is DownloadState.FAILED
        assert result.download.text == "failed: HTTP 500 Internal Server Error (3 attempts)"
    assert len(server.requests) == 3  # one try and FAST's two retries
    server.behaviour.fail.clear()
    with _supplier(tmp_path, server) as supplier:
        assert supplier.load(RENDER_FARM_MODULE).status is SymbolStatus.LOADED


def test_a_4xx_other_than_404_is_a_failure_without_retry(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.status[RF_PATH] = 403
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.download is not None and result.download.state is DownloadState.FAILED
        assert result.download.text == "failed: HTTP 403 Forbidden"
    assert len(server.requests) == 1
    assert not (tmp_path / "cache" / ".negative").exists(), "only a 404 is remembered"


def test_a_slow_server_hits_the_timeout(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.stall = 3.0
    policy = FetchPolicy(connect_timeout=1.0, read_timeout=10.0, total_timeout=0.5, retries=5, backoff=0.01)
    started = time.monotonic()
    with _supplier(tmp_path, server, fetch=policy) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
    elapsed = time.monotonic() - started
    assert result.status is SymbolStatus.NOT_FOUND
    assert result.download is not None and result.download.state is DownloadState.FAILED
    assert "timed out" in (result.download.reason or "")
    assert elapsed < 2.5, "the total timeout covers the retries too"
    assert not (tmp_path / "cache" / RENDER_FARM).exists()


def test_a_truncated_body_leaves_nothing_in_the_cache(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.truncate.add(RF_PATH)
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.status is SymbolStatus.NOT_FOUND
        assert result.download is not None and result.download.state is DownloadState.FAILED
        assert "closed before the whole file arrived" in (result.download.reason or "")
    assert len(server.requests) == 3  # a cut connection is worth a retry
    cache = tmp_path / "cache"
    assert not any(p.suffix == ".sym" for p in cache.rglob("*")), _files(cache)
    assert not list((cache / ".partial").iterdir())


def test_gzip_transfer_encoding(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.gzip = True
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(LIBC_MODULE)
        assert result.status is SymbolStatus.LOADED
    assert "gzip" in server.requests[0].headers.get("Accept-Encoding", "")
    original = (SYMBOL_TREES[0] / LIBC).read_bytes()
    assert (tmp_path / "cache" / LIBC).read_bytes().startswith(original)


def test_the_size_cap_aborts_and_reports(tmp_path: Path, server: SymbolHttpServer) -> None:
    policy = FetchPolicy(max_bytes=1000, retries=0, backoff=0.01)
    with _supplier(tmp_path, server, fetch=policy) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.download is not None and result.download.state is DownloadState.FAILED
        assert "over the 1,000-byte limit" in (result.download.reason or "")
    server.behaviour.gzip = True  # no Content-Length to go by: the cap applies while streaming
    with _supplier(tmp_path, server, fetch=policy) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert "larger than the 1,000-byte limit" in (result.download.reason or "")  # type: ignore[union-attr]
    assert not (tmp_path / "cache" / RENDER_FARM).exists()


def test_a_same_origin_redirect_is_followed_with_the_token(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.redirect[RF_PATH] = "/storage/rf.sym"  # relative
    server.behaviour.redirect["/storage/rf.sym"] = f"{server.origin}/mirror/{RENDER_FARM}"  # absolute
    with _supplier(tmp_path, server, token="s3cret") as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.status is SymbolStatus.LOADED
        # the URL asked for is recorded, not where the redirects went (that may be a signed URL)
        assert result.symbol_url is not None and result.symbol_url.startswith(f"{server.url}/{RENDER_FARM}?")
    assert server.paths == [RF_PATH, "/storage/rf.sym", f"/mirror/{RENDER_FARM}"]
    assert all(r.headers.get("Authorization") == "Bearer s3cret" for r in server.requests)


def test_the_token_is_not_sent_to_another_origin(
    tmp_path: Path, server: SymbolHttpServer, other_server: SymbolHttpServer
) -> None:
    server.behaviour.redirect[RF_PATH] = f"{other_server.url}/{RENDER_FARM}"
    with _supplier(tmp_path, server, token="s3cret") as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.status is SymbolStatus.LOADED
        assert result.symbol_url is not None and "s3cret" not in result.symbol_url
    assert server.requests[0].headers.get("Authorization") == "Bearer s3cret"
    (hop,) = other_server.requests
    assert "Authorization" not in hop.headers
    assert not any("s3cret" in v for v in hop.headers.values())


def test_user_and_password_in_the_url_go_as_basic_auth_to_that_origin_only(
    tmp_path: Path, server: SymbolHttpServer, other_server: SymbolHttpServer
) -> None:
    server.behaviour.redirect[RF_PATH] = f"{other_server.url}/{RENDER_FARM}"
    url = server.url.replace("http://", "http://me%40corp:pa%3Ass@")
    with _supplier(tmp_path, url) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.status is SymbolStatus.LOADED
        assert result.symbol_url is not None and "pa%3Ass" not in result.symbol_url
        assert "pa%3Ass" not in repr(supplier.options)
    expected = "Basic " + base64.b64encode(b"me@corp:pa:ss").decode()
    assert server.requests[0].headers.get("Authorization") == expected
    (hop,) = other_server.requests
    assert "Authorization" not in hop.headers


def test_the_token_is_never_logged(
    tmp_path: Path, server: SymbolHttpServer, other_server: SymbolHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.behaviour.redirect[RF_PATH] = f"{other_server.url}/{RENDER_FARM}"
    server.behaviour.fail[f"/symbols/{LIBC}"] = 1
    caplog.set_level("DEBUG")
    with _supplier(tmp_path, server, token="s3cret-t0ken") as supplier:
        supplier.load(RENDER_FARM_MODULE)
        supplier.load(LIBC_MODULE)
        assert "s3cret" not in repr(supplier.options)
    assert caplog.records, "the downloads are logged"
    assert not any("s3cret" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "location",
    ["file:///etc/passwd", "ftp://127.0.0.1/x.sym", "javascript:alert(1)", "gopher://127.0.0.1:70/"],
)
def test_a_redirect_to_another_scheme_is_refused(
    tmp_path: Path, server: SymbolHttpServer, location: str
) -> None:
    server.behaviour.redirect[RF_PATH] = location
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.download is not None and result.download.state is DownloadState.FAILED
        assert "refused" in (result.download.reason or "")
    assert len(server.requests) == 1


def test_a_redirect_loop_stops(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.redirect = {RF_PATH: "/a", "/a": "/b", "/b": RF_PATH}
    with _supplier(tmp_path, server) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.download is not None and result.download.state is DownloadState.FAILED
        assert result.download.reason == "more than 5 redirects"
    assert len(server.requests) == 6


def test_offline_makes_no_request_but_uses_the_cache(tmp_path: Path, server: SymbolHttpServer) -> None:
    with _supplier(tmp_path, server, offline=True) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.status is SymbolStatus.NOT_FOUND
        assert result.download is not None and result.download.state is DownloadState.OFFLINE
        assert supplier.prefetch([LIBC_MODULE]) == 0
    assert server.requests == []
    with _supplier(tmp_path, server) as supplier:
        supplier.load(RENDER_FARM_MODULE)
    with _supplier(tmp_path, server, offline=True) as supplier:
        assert supplier.load(RENDER_FARM_MODULE).status is SymbolStatus.LOADED
    assert len(server.requests) == 1


def test_servers_are_tried_in_order(
    tmp_path: Path, server: SymbolHttpServer, other_server: SymbolHttpServer
) -> None:
    server.behaviour.not_found.add(RF_PATH)
    with _supplier(tmp_path, server, other_server) as supplier:
        result = supplier.load(RENDER_FARM_MODULE)
        assert result.symbol_url is not None and result.symbol_url.startswith(other_server.url)
        assert result.download is not None
        assert [a.outcome for a in result.download.attempts] == ["not found", "not found", "found"]


def test_cancel_stops_a_download_between_chunks(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.stall = 1.0
    cancel = CancelToken()
    supplier = ServerSymbolSupplier(
        (), options_for(server, cache=tmp_path / "cache"), cache=IndexCache(None), cancel=cancel
    )
    threading.Timer(0.2, cancel.cancel).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        supplier.load(RENDER_FARM_MODULE, cancel)
    assert time.monotonic() - started < 0.9
    supplier.close()
    assert not (tmp_path / "cache" / RENDER_FARM).exists()


def test_unusable_server_urls_are_reported(tmp_path: Path) -> None:
    with _supplier(tmp_path, "file:///srv/symbols", "https://", "http://host:port/") as supplier:
        assert len(supplier.problems) == 3
        assert supplier.servers == ()
        assert "only http and https" in supplier.problems[0].reason


def test_token_from_the_environment_is_named_per_server() -> None:
    assert token_variable("https://symbols.example.com/try") == "CRASH_INSPECTOR_TOKEN_SYMBOLS_EXAMPLE_COM"
    assert token_variable("http://127.0.0.1:8080/") == "CRASH_INSPECTOR_TOKEN_127_0_0_1_8080"
    env = {"CRASH_INSPECTOR_TOKEN_SYMBOLS_EXAMPLE_COM": " abc "}
    assert token_from_environment("https://symbols.example.com/x", env) == "abc"
    assert token_from_environment("https://other.example.com/x", env) is None


def test_fast_policy_is_what_these_tests_use() -> None:
    assert FAST.backoff < 0.05  # the retry tests rely on it
