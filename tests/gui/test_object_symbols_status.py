"""The Modules pane's symbol column and tooltip for symbols made from binaries, and for none."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.process import ProcessOptions, process
from inspector.gui.document import Document
from inspector.gui.symbol_status import symbol_status

pytest.importorskip("symbolic", reason="reading objects needs the symbolic package")

CASE = Path(__file__).resolve().parents[1] / "fixtures" / "crashes" / "libc_abort"


def _document(paths: tuple[Path, ...], tmp_path: Path) -> Document:
    options = ProcessOptions(symbol_paths=paths, symbols_cache=tmp_path, local_modules=False)
    return Document(process(CASE / "libc_abort.dmp", options))


def test_a_module_with_symbols_from_its_binary_says_so_and_names_the_binary_and_cfi(tmp_path: Path) -> None:
    doc = _document((CASE / "binaries",), tmp_path)
    index = next(i for i, e in enumerate(doc.state.modules) if e.module.code_file.endswith("/ledger"))
    status = symbol_status(doc.symbols[index], doc)
    assert status.text == "loaded: DWARF in the binary (symbol path)"
    assert str(CASE / "binaries" / "ledger") in status.details
    assert "CFI from: .eh_frame" in status.details


def test_a_module_without_symbols_says_what_would_help(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    doc = _document((empty,), tmp_path / "cache")
    index = next(i for i, e in enumerate(doc.state.modules) if e.module.code_file.endswith("/ledger"))
    module = doc.state.modules[index].module
    status = symbol_status(doc.symbols[index], doc)
    assert status.text == "missing"
    assert "What would help: ledger (" in status.details
    assert f"build id {module.code_id.lower()}" in status.details
    assert "ledger.sym" in status.details and ".build-id/" in status.details
