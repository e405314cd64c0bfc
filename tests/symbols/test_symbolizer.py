"""The per-process Symbolizer: one load per module, shared by threads, with progress and cancel."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled
from inspector.core.symbols import (
    IndexCache,
    StackWinType,
    SymbolFile,
    Symbolizer,
    SymbolProgress,
    SymbolStatus,
    SymbolSupplier,
    module_key,
)
from tests.symbols.stand_ins import Module
from tests.synth.sym import SymBuilder

APP = Module("/bin/app", "", "app", "A0")
LIB = Module("C:\\lib.dll", "", "lib.pdb", "B0")
NONE = Module("/bin/nosyms", "", "nosyms", "C0")


@pytest.fixture
def symbols(tmp_path: Path) -> Path:
    root = tmp_path / "symbols"
    (
        SymBuilder(debug_id="A0", name="app")
        .file(0, "app.c")
        .func(0x1000, 0x100, "main", lines=[(0x1000, 0x100, 10, 0)])
        .public(0x2000, "helper")
        .cfi(0x1000, 0x100, ".cfa: $rsp 8 + .ra: .cfa -8 + ^", [(0x1004, ".cfa: $rsp 16 +")])
        .write_to_store(root)
    )
    SymBuilder(debug_id="B0", name="lib.pdb", cpu="x86").stack_win(
        4, 0x10, 0x10, program="$eip"
    ).write_to_store(root, "lib.pdb")
    return root


def test_lookups_for_the_stackwalker(symbols: Path, tmp_path: Path) -> None:
    with Symbolizer(SymbolSupplier([symbols], cache=IndexCache(tmp_path / "cache"))) as symbolizer:
        frame = symbolizer.lookup(APP, 0x1010)
        assert frame is not None and (frame.function_name, frame.source_file, frame.source_line) == (
            "main",
            "app.c",
            10,
        )
        cfi = symbolizer.find_cfi(APP, 0x1008)
        assert cfi is not None and cfi.rules is not None and cfi.rules[".cfa"] == "$rsp 16 +"
        win = symbolizer.find_stack_win(LIB, 0x14)
        assert win is not None and win.type is StackWinType.FRAME_DATA
        assert symbolizer.has_symbol_at(APP, 0x2004) is True
        assert symbolizer.has_symbol_at(APP, 0x10) is False
        assert symbolizer.has_symbol_at(NONE, 0x10) is None  # no symbols: the scanner must not reject
        assert symbolizer.lookup(NONE, 0x10) is None and symbolizer.find_cfi(NONE, 0) is None
        assert symbolizer.status(NONE).status is SymbolStatus.NOT_FOUND
        assert symbolizer.progress == SymbolProgress(requested=3, loaded=3)
        assert set(symbolizer.statuses()) == {module_key(APP), module_key(LIB), module_key(NONE)}


def test_each_module_is_loaded_once_even_from_many_threads(
    symbols: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    original = SymbolFile.open
    gate = threading.Barrier(8)

    def counting_open(path: object, **kwargs: object) -> SymbolFile:
        opened.append(str(path))
        return original(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SymbolFile, "open", counting_open)
    symbolizer = Symbolizer(SymbolSupplier([symbols]))
    results: list[object] = []

    def walk() -> None:
        gate.wait()
        for _ in range(20):
            results.append(symbolizer.lookup(APP, 0x1010))
            results.append(symbolizer.find_stack_win(LIB, 0x10))

    threads = [threading.Thread(target=walk) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(opened) == 2
    assert len({id(symbolizer.status(APP)), id(symbolizer.status(APP))}) == 1
    assert len(results) == 8 * 40 and all(r is not None for r in results)
    assert symbolizer.progress == SymbolProgress(2, 2)
    symbolizer.close()


def test_a_cancelled_token_stops_loading(symbols: Path) -> None:
    token = CancelToken()
    token.cancel()
    symbolizer = Symbolizer(SymbolSupplier([symbols]), cancel=token)
    with pytest.raises(Cancelled):
        symbolizer.lookup(APP, 0x1010)
    assert symbolizer.progress == SymbolProgress(requested=1, loaded=0)
    assert symbolizer.statuses() == {}


def test_status_reports_where_and_how_long(symbols: Path) -> None:
    symbolizer = Symbolizer(SymbolSupplier([symbols]))
    status = symbolizer.status(APP)
    assert status.status is SymbolStatus.LOADED and status.path == str(symbols / "app" / "A0" / "app.sym")
    assert status.load_seconds > 0 and status.found_by == "debug id"
    symbolizer.close()
