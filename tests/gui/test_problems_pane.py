"""The Problems pane shows the core's problems: for a dump, exactly the JSON report's `inspector_problems`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector import cli
from inspector.gui.models.problem_model import ProblemTableModel
from inspector.gui.settings import Settings
from inspector.resources import sample_dump, sample_symbols
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import wait_analysis_over


def _store_rust_minidump_rejects(tmp_path: Path) -> Path:
    """The sample's symbols, with render_farm.sym's final newline cut: rust-minidump refuses that file."""
    store = tmp_path / "symbols"
    shutil.copytree(sample_symbols(), store)
    [sym] = store.glob("render_farm/*/render_farm.sym")
    sym.write_bytes(sym.read_bytes().rstrip(b"\n"))
    return store


def test_the_problems_pane_lists_exactly_the_jsons_inspector_problems(
    qtbot: QtBot,
    settings: Settings,
    message_boxes: MessageBoxes,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = _store_rust_minidump_rejects(tmp_path)
    paths = (store, tmp_path / "nowhere")
    window = make_window(qtbot, settings, session_symbol_paths=paths)
    try:
        wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
        shown = window.problem_pane.model.problems
    finally:
        window.session.shutdown()
    assert cli.main(["stackwalk", "--json", "--no-symbols-cache", str(sample_dump()), *map(str, paths)]) == 0
    reported = json.loads(capsys.readouterr().out)["inspector_problems"]
    assert [
        {"source": p.source, "code": p.code, "message": p.message, "offset": p.offset} for p in shown
    ] == reported
    codes = [p["code"] for p in reported]
    assert codes == ["SymbolPath", "RustMinidumpRejects"]
    rejects = next(p for p in shown if p.code == "RustMinidumpRejects")
    assert "rust-minidump would refuse this file (no final newline)" in rejects.message
    model = window.problem_pane.model
    row = shown.index(rejects)
    assert model.index(row, ProblemTableModel.COL_WHERE).data() == "render_farm"
    assert model.index(row, ProblemTableModel.COL_SOURCE).data() == "symbols"
