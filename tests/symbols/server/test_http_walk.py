"""Walking dumps with symbols from a server: same frames as local symbols, parallel downloads, events."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled
from inspector.core.process import (
    Finished,
    ProcessOptions,
    Progress,
    SymbolsLoaded,
    SymbolState,
    process,
    process_events,
)
from inspector.core.report.json_report import render_json
from inspector.core.symbols import DownloadState, FetchPolicy, IndexCache, ServerSymbolSupplier
from tests.symbols.server.http_server import (
    REPO,
    SAMPLE_DUMP,
    SYMBOL_TREES,
    Module,
    SymbolHttpServer,
    options_for,
)

FIXTURES = REPO / "tests" / "fixtures" / "crashes"


def _frames(report: str) -> list[list[dict[str, object]]]:
    data = json.loads(report)
    return [thread["frames"] for thread in data["threads"]]


def _modules(report: str) -> dict[str, dict[str, object]]:
    return {m["filename"]: m for m in json.loads(report)["modules"]}


def test_the_sample_walk_with_a_server_gives_the_local_frames(
    tmp_path: Path, server: SymbolHttpServer
) -> None:
    local = render_json(
        process(SAMPLE_DUMP, ProcessOptions(symbol_paths=(SYMBOL_TREES[0],), use_symbols_cache=False))
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    options = ProcessOptions(
        symbol_paths=(empty,),
        use_symbols_cache=False,
        symbol_servers=options_for(server, cache=tmp_path / "cache"),
    )
    remote = render_json(process(SAMPLE_DUMP, options))
    assert _frames(remote) == _frames(local)
    modules = _modules(remote)
    for name, module in _modules(local).items():
        got = modules[name]
        assert (got["loaded_symbols"], got["missing_symbols"]) == (
            module["loaded_symbols"],
            module["missing_symbols"],
        )
    assert modules["render_farm"]["symbol_url"] == (
        f"{server.url}/render_farm/C45AC8E94E82B725B3C5363770E51DB30/render_farm.sym"
        "?code_file=render_farm&code_id=e9c85ac4824e25b7b3c5363770e51db381969de5"
    )
    asked = server.paths
    assert "/symbols/render_farm/C45AC8E94E82B725B3C5363770E51DB30/render_farm.sym" in asked

    # a second walk: everything from the cache (or remembered as missing), no request at all
    server.reset()
    again = render_json(process(SAMPLE_DUMP, options))
    assert server.requests == []
    assert _frames(again) == _frames(local)
    assert _modules(again)["render_farm"]["symbol_url"] == modules["render_farm"]["symbol_url"]
    assert _modules(again)["libc.so.6"]["symbol_url"] == modules["libc.so.6"]["symbol_url"]
    assert modules["libc.so.6"]["symbol_url"] is not None


def test_offline_walk_makes_no_request(tmp_path: Path, server: SymbolHttpServer) -> None:
    options = ProcessOptions(
        use_symbols_cache=False, symbol_servers=options_for(server, cache=tmp_path / "cache", offline=True)
    )
    state = process(SAMPLE_DUMP, options)
    assert server.requests == []
    render_farm = next(m for m in state.modules if m.module.filename == "render_farm")
    assert render_farm.symbols.state is SymbolState.MISSING
    assert render_farm.symbols.download is not None
    assert render_farm.symbols.download.state is DownloadState.OFFLINE


def test_download_events_reach_the_consumer(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.delay = 0.3
    options = ProcessOptions(
        use_symbols_cache=False, symbol_servers=options_for(server, cache=tmp_path / "cache")
    )
    seen: dict[int, list[str]] = {}
    progress: list[Progress] = []
    final = None
    for event in process_events(SAMPLE_DUMP, options):
        if isinstance(event, SymbolsLoaded) and event.symbols.download is not None:
            seen.setdefault(event.module_index, []).append(event.symbols.download.state.name)
        elif isinstance(event, Progress):
            progress.append(event)
        elif isinstance(event, Finished):
            final = event.state
    assert final is not None
    render_farm = next(m for m in final.modules if m.module.filename == "render_farm")
    states = seen[render_farm.index]
    assert "DOWNLOADING" in states and states[-1] == "DOWNLOADED"
    assert render_farm.symbols.status_text.startswith("loaded, downloaded from http://127.0.0.1:")
    assert any(p.downloads_active > 0 for p in progress)
    assert progress[-1].downloads_active == 0 and progress[-1].downloads_done >= 2


def test_modules_download_in_parallel_within_the_bound(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.delay = 0.4
    server.behaviour.body = b"MODULE Linux x86_64 0 m\nFUNC 0 10 0 f\n"
    modules = [Module("", "", f"m{i}.so", f"{i + 1:032X}0") for i in range(10)]
    options = options_for(server, cache=tmp_path / "cache", parallel=3)
    started = time.monotonic()
    with ServerSymbolSupplier((), options, cache=IndexCache(None)) as supplier:
        assert supplier.prefetch(modules) == 10
        results = [supplier.load(m) for m in modules]
        elapsed = time.monotonic() - started
        assert supplier.max_concurrent == 3
    assert all(r.found for r in results)
    assert server.max_active == 3, "three at once, never more"
    assert elapsed < 10 * 0.4 * 0.6, f"10 downloads of 0.4 s took {elapsed:.2f} s"


def test_the_walks_module_jumps_the_prefetch_queue(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.delay = 0.3
    server.behaviour.body = b"MODULE Linux x86_64 0 m\nFUNC 0 10 0 f\n"
    modules = [Module("", "", f"m{i}.so", f"{i + 1:032X}0") for i in range(8)]
    with ServerSymbolSupplier(
        (), options_for(server, cache=tmp_path / "c", parallel=1), cache=IndexCache(None)
    ) as s:
        s.prefetch(modules)
        started = time.monotonic()
        assert s.load(modules[-1]).found
        waited = time.monotonic() - started
    assert waited < 3 * 0.3, f"the last module waited {waited:.2f} s behind the queue"


def test_a_walk_of_a_multithreaded_crash_prefetches_what_it_needs(
    tmp_path: Path, server: SymbolHttpServer
) -> None:
    dump = FIXTURES / "multithread" / "multithread.dmp"
    local_paths = (FIXTURES / "multithread" / "symbols", FIXTURES / "system-symbols")
    local = render_json(process(dump, ProcessOptions(symbol_paths=local_paths, use_symbols_cache=False)))
    options = ProcessOptions(
        use_symbols_cache=False,
        symbol_servers=options_for(server, cache=tmp_path / "cache", fetch=FetchPolicy(retries=0)),
    )
    remote = render_json(process(dump, options))
    assert _frames(remote) == _frames(local)


def test_cancel_during_a_download_stops_the_walk(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.stall = 1.5
    cancel = CancelToken()
    options = ProcessOptions(
        use_symbols_cache=False, symbol_servers=options_for(server, cache=tmp_path / "cache")
    )
    events = process_events(SAMPLE_DUMP, options, cancel=cancel)
    next(events)  # DumpLoaded: downloads are queued now
    threading.Timer(0.2, cancel.cancel).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        for _ in events:
            pass
    assert time.monotonic() - started < 1.4, "cancel does not wait for the stalled server"
    assert not list((tmp_path / "cache").rglob("*.sym"))
