"""Symbol files kept open across the dumps of a batch (`KeptSymbolSupplier`, `process(..., supplier=)`)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.process import ProcessOptions, process
from inspector.core.report.json_report import json_document
from inspector.core.symbols import IndexCache, KeptSymbolSupplier, SymbolStatus
from tests.symbols.server.http_server import Module
from tests.synth.sym import SymBuilder
from tests.triage.conftest import OWN_CRASHES


def _store(root: Path, count: int) -> list[Module]:
    modules = []
    for i in range(count):
        debug_id = f"{i + 1:032X}1"  # not all zeros: that is no id at all
        SymBuilder(debug_id=debug_id, name=f"lib{i}.so").func(0x10, 0x20, f"f{i}").write_to_store(root)
        modules.append(Module(f"lib{i}.so", "", f"lib{i}.so", debug_id))
    return modules


def test_a_module_is_opened_once_and_stays_open(tmp_path: Path) -> None:
    modules = _store(tmp_path / "store", 2)
    with KeptSymbolSupplier([tmp_path / "store"], cache=IndexCache(None)) as supplier:
        first = supplier.load(modules[0])
        assert first.status is SymbolStatus.LOADED
        assert supplier.load(modules[0]) is first  # the same open file, not a second one
        missing = supplier.load(Module("gone.so", "", "gone.so", "F" * 33))
        assert (
            missing.status is SymbolStatus.NOT_FOUND
            and supplier.load(Module("gone.so", "", "gone.so", "F" * 33)) is missing
        )
        assert supplier.open_files == 1
    assert first.symbol_file is not None and first.symbol_file._file.closed  # close() closes them all


def test_trim_closes_the_least_recently_used_beyond_the_limit(tmp_path: Path) -> None:
    modules = _store(tmp_path / "store", 3)
    supplier = KeptSymbolSupplier([tmp_path / "store"], cache=IndexCache(None), max_open=2)
    loaded = [supplier.load(m) for m in modules]
    supplier.load(modules[0])  # used again: now the most recent
    supplier.trim()
    assert supplier.open_files == 2
    assert [s.symbol_file is not None and s.symbol_file._file.closed for s in loaded] == [False, True, False]
    assert supplier.load(modules[1]) is not loaded[1]  # opened again when needed
    supplier.close()


def test_process_with_a_kept_supplier_walks_the_same_and_leaves_files_open(tmp_path: Path) -> None:
    dump, symbols = OWN_CRASHES["lib_callback"]
    cache = IndexCache(tmp_path / "index")
    options = ProcessOptions(symbol_paths=symbols, symbols_cache=tmp_path / "index")
    alone = json_document(process(dump, options))
    with KeptSymbolSupplier(symbols, cache=cache, code_id_fallback=False) as supplier:
        first = json_document(process(dump, options, supplier=supplier))
        opened = supplier.open_files
        assert opened >= 2  # the program's and its library's .sym files, still open
        again = json_document(process(dump, options, supplier=supplier))
        assert supplier.open_files == opened  # nothing opened twice
    assert first == again == alone
