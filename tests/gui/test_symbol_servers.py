"""Symbol servers in the GUI: settings, the Preferences dialog (token masked), the Modules pane, the
job (downloads through a local HTTP server, cancel), and applying Preferences walking again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from inspector.core.cancel import CancelToken
from inspector.core.process import Finished, ModuleSymbolSummary, Progress, SymbolsLoaded, SymbolState
from inspector.core.symbols import DownloadState, DownloadStatus, ServerAttempt
from inspector.gui.document import AnalysisRequest, AnalysisStatus, Document
from inspector.gui.jobs import progress_text, run_analysis
from inspector.gui.main_window import MainWindow
from inspector.gui.models.module_model import ModuleTableModel
from inspector.gui.preferences_dialog import PreferencesDialog, SymbolPreferences
from inspector.gui.session import Session
from inspector.gui.settings import ServerEntry, Settings
from inspector.gui.symbol_status import symbol_status
from inspector.gui.theme import Theme
from inspector.resources import sample_dump
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import ANALYSIS_TIMEOUT_MS, load, wait_analysis_over
from tests.gui.test_settings import reopen
from tests.symbols.server.http_server import FAST, LIBC, RENDER_FARM, SymbolHttpServer, options_for

URL = "https://symbols.example.com/try"


@pytest.fixture
def server() -> Iterator[SymbolHttpServer]:
    s = SymbolHttpServer()
    yield s
    s.close()


def test_servers_round_trip_with_their_tokens(settings: Settings) -> None:
    assert settings.symbol_servers == [] and settings.symbol_server_options({}) is None
    settings.symbol_servers = [
        ServerEntry(URL, "tok"),
        ServerEntry("http://127.0.0.1:9/", ""),
        ServerEntry(URL),
    ]
    settings.symbols_offline = True
    settings.download_timeout = 30
    again = reopen(settings)
    assert again.symbol_servers == [ServerEntry(URL, "tok"), ServerEntry("http://127.0.0.1:9/", "")]
    assert "tok" not in repr(again.symbol_servers)
    options = again.symbol_server_options({"CRASH_INSPECTOR_TOKEN_127_0_0_1_9": "from-env"})
    assert options is not None and options.offline and options.fetch.total_timeout == 30
    assert [s.token for s in options.servers] == ["tok", "from-env"]
    assert options.cache_dir is None  # the fixture turns caching off: downloads last one run


def test_damaged_server_settings_read_as_none(settings: Settings) -> None:
    settings.store.setValue("symbols/servers", "[not json")
    settings.store.setValue("symbols/download_timeout", "soon")
    assert settings.symbol_servers == [] and settings.download_timeout == 1000.0


def test_preferences_edit_servers_and_mask_the_token(qtbot: QtBot) -> None:
    dialog = PreferencesDialog(SymbolPreferences((), servers=(ServerEntry(URL, "s3cret"),)))
    qtbot.addWidget(dialog)
    token = dialog.findChild(QLineEdit, "serverToken")
    assert token is not None and token.echoMode() is QLineEdit.EchoMode.Password
    assert not token.isEnabled()  # nothing selected yet
    dialog.servers_view.setCurrentIndex(dialog.servers_model.index(0))
    assert token.isEnabled() and token.text() == "s3cret"
    assert token.displayText() != "s3cret"

    dialog.server_url.setText("ftp://nope/")
    assert not dialog.add_server_from_field()
    assert "only http and https" in dialog.server_error.text()
    dialog.server_url.setText("http://127.0.0.1:8080/symbols")
    assert dialog.add_server_from_field()
    assert "CRASH_INSPECTOR_TOKEN_127_0_0_1_8080" in token.placeholderText()
    qtbot.keyClicks(token, "other")
    dialog.move_selected_server(-1)
    dialog.offline.setChecked(True)
    prefs = dialog.preferences()
    assert prefs.servers == (
        ServerEntry("http://127.0.0.1:8080/symbols", "other"),
        ServerEntry(URL, "s3cret"),
    )
    assert prefs.offline


def test_preferences_lists_remove_and_move_the_selected_row(qtbot: QtBot, tmp_path: Path) -> None:
    """The paths and the servers share one list editor: buttons follow the selection; a removed
    server's token is forgotten."""
    servers = (ServerEntry(URL, "s3cret"), ServerEntry("http://127.0.0.1:9/", ""))
    dialog = PreferencesDialog(SymbolPreferences((tmp_path / "a",), servers=servers))
    qtbot.addWidget(dialog)
    lists = [
        (dialog.remove_button, dialog.up_button, dialog.down_button),
        (dialog.remove_server_button, dialog.server_up_button, dialog.server_down_button),
    ]
    for buttons in lists:
        assert [b.isEnabled() for b in buttons] == [False, False, False]  # nothing selected
    dialog.add_paths([tmp_path / "b", tmp_path / "a"])  # "a" is listed already
    assert dialog.paths_model.stringList() == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert [b.isEnabled() for b in lists[0]] == [True, True, False]  # the last row is selected
    dialog.move_selected(-1)
    assert [b.isEnabled() for b in lists[0]] == [True, False, True]
    dialog.remove_selected()
    assert dialog.paths_model.stringList() == [str(tmp_path / "a")]
    dialog.servers_view.setCurrentIndex(dialog.servers_model.index(0))
    assert [b.isEnabled() for b in lists[1]] == [True, False, True]
    dialog.remove_selected_server()
    assert dialog.servers_model.stringList() == ["http://127.0.0.1:9/"]
    dialog.server_url.setText(URL)
    assert dialog.add_server_from_field()
    assert dialog.preferences().servers == (ServerEntry("http://127.0.0.1:9/", ""), ServerEntry(URL, ""))


def _state(download: DownloadStatus, state: SymbolState = SymbolState.NOT_REQUESTED) -> ModuleSymbolSummary:
    return ModuleSymbolSummary(state, download=download)


def test_module_pane_shows_download_states(qapp: QApplication, sample_document: Document) -> None:
    model = ModuleTableModel(Theme.for_scheme(False, qapp.font()))
    model.set_document(sample_document)
    states = {
        0: _state(DownloadStatus(DownloadState.DOWNLOADING, received=50, total=200)),
        1: _state(DownloadStatus(DownloadState.NOT_ON_SERVER), SymbolState.MISSING),
        2: ModuleSymbolSummary(
            SymbolState.LOADED,
            path="/cache/libc.so.6.sym",
            download=DownloadStatus(DownloadState.DOWNLOADED, url="https://s/libc.so.6.sym"),
            symbol_url="https://s/libc.so.6.sym",
        ),
        3: _state(
            DownloadStatus(
                DownloadState.FAILED,
                reason="timed out",
                attempts=(ServerAttempt("https://s/ld.sym", "failed", "timed out"),),
            ),
            SymbolState.MISSING,
        ),
    }
    for i, state in states.items():
        sample_document.set_symbols(i, state)
    col = ModuleTableModel.COL_SYMBOLS
    shown = [model.data(model.index(i, col)) for i in range(4)]
    assert shown == [
        "downloading (25 %)",
        "not on server",
        "loaded, downloaded from https://s/libc.so.6.sym",
        "failed: timed out",
    ]
    tooltip = model.data(model.index(3, col), Qt.ItemDataRole.ToolTipRole)
    assert "https://s/ld.sym: failed (timed out)" in str(tooltip)


def test_module_pane_shows_every_download_state(qapp: QApplication, sample_document: Document) -> None:
    model = ModuleTableModel(Theme.for_scheme(False, qapp.font()))
    model.set_document(sample_document)
    cache = "/cache/render_farm.sym"
    running, over = AnalysisStatus.RUNNING, AnalysisStatus.FINISHED
    cases = [
        (_state(DownloadStatus(DownloadState.QUEUED)), running, "queued for download"),
        (_state(DownloadStatus(DownloadState.DOWNLOADING)), running, "downloading"),
        (ModuleSymbolSummary(SymbolState.LOADED, cache, download=DownloadStatus(DownloadState.CACHED)),
         running, "loaded from the download cache"),
        (_state(DownloadStatus(DownloadState.OFFLINE), SymbolState.MISSING),
         running, "offline: not in the download cache"),
        # prefetched because a stack word points into it, then never needed by a frame
        (_state(DownloadStatus(DownloadState.NOT_ON_SERVER)), over, "not needed, not on server"),
        (_state(DownloadStatus(DownloadState.DOWNLOADED, url="https://s/a.sym")),
         over, "not needed, downloaded from https://s/a.sym"),
    ]  # fmt: skip
    for state, status, text in cases:
        sample_document.set_symbols(1, state)
        sample_document.status = status
        assert model.data(model.index(1, ModuleTableModel.COL_SYMBOLS)) == text
    tooltip = str(model.data(model.index(1, ModuleTableModel.COL_SYMBOLS), Qt.ItemDataRole.ToolTipRole))
    assert "did not look its symbols up" in tooltip and "downloaded from https://s/a.sym" in tooltip

    url = "https://s/a.sym?code_file=a&code_id=1f"  # the query repeats the module's ids: not in the cell
    download = DownloadStatus(DownloadState.DOWNLOADED, url=url)
    sample_document.set_symbols(
        1, ModuleSymbolSummary(SymbolState.LOADED, cache, download=download, symbol_url=url)
    )
    assert (
        model.data(model.index(1, ModuleTableModel.COL_SYMBOLS)) == "loaded, downloaded from https://s/a.sym"
    )
    tooltip = str(model.data(model.index(1, ModuleTableModel.COL_SYMBOLS), Qt.ItemDataRole.ToolTipRole))
    assert f"Downloaded from {url}" in tooltip


def test_a_stopped_analysis_keeps_the_downloads_that_had_ended(sample_document: Document) -> None:
    sample_document.set_symbols(1, _state(DownloadStatus(DownloadState.NOT_ON_SERVER)))
    sample_document.set_symbols(2, _state(DownloadStatus(DownloadState.DOWNLOADING)))
    assert sample_document.symbols_in_flux() == [0, 1, 2, 3]
    sample_document.status = AnalysisStatus.CANCELLED
    shown = [symbol_status(s, sample_document) for s in sample_document.symbols]
    assert [s.text for s in shown] == [
        "not loaded",
        "not loaded, not on server",
        "not loaded",  # its download was stopped with the analysis
        "not loaded",
    ]
    assert "analysis stopped" in shown[1].details


def test_the_job_downloads_and_reports_each_module(tmp_path: Path, server: SymbolHttpServer) -> None:
    from inspector.core.symbols import SymbolServer, SymbolServerOptions

    # The files the walk needs arrive late, so the prefetched 404s of the others are in by then.
    server.behaviour.delays = {f"/symbols/{RENDER_FARM}": 0.4, f"/symbols/{LIBC}": 0.4}
    servers = SymbolServerOptions(servers=(SymbolServer(server.url),), cache_dir=tmp_path / "dl", fetch=FAST)
    # libc and ld.so of the sample are this machine's: their own files would answer before the server
    request = AnalysisRequest(sample_dump(), (), None, servers, local_modules=False)
    events = list(run_analysis(request, CancelToken()))
    downloads = [e for e in events if isinstance(e, SymbolsLoaded) and e.symbols.download is not None]
    assert {e.module_index for e in downloads} == {0, 1, 2, 3}  # all prefetched
    texts = [e.symbols.download.text for e in downloads if e.module_index == 0 and e.symbols.download]
    assert any(t.startswith("downloading") for t in texts)
    finished = events[-1]
    assert isinstance(finished, Finished)
    doc = Document(finished.state)
    doc.status = AnalysisStatus.FINISHED
    final = [symbol_status(entry.symbols, doc) for entry in finished.state.modules]
    assert final[0].text.startswith(f"loaded, downloaded from {server.url}/render_farm/")
    libc = finished.state.modules[2].symbols
    assert libc.symbol_url is not None and libc.symbol_url.startswith(server.url)
    # linux-vdso: a register points into it, so it was asked for; no frame is in it, so no lookup used it
    assert not finished.state.modules[1].symbols.requested
    assert final[1].text == "not needed, not on server"
    texts = [progress_text(e) for e in events if isinstance(e, Progress)]
    assert any(t.endswith(" downloading") for t in texts) and not texts[-1].endswith(" downloading")


def test_cancel_stops_the_downloads(qtbot: QtBot, tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.stall = 5.0  # every answer takes longer than the test may wait
    servers = options_for(server, cache=tmp_path / "dl")
    session = Session(cache_dir=None, symbol_servers=servers)
    try:
        session.open_dump(sample_dump())

        def downloading() -> bool:
            doc = session.document
            return doc is not None and any(s.download is not None for s in doc.symbols)

        qtbot.waitUntil(downloading, timeout=ANALYSIS_TIMEOUT_MS)
        doc = session.document
        assert doc is not None and server.requests
        with qtbot.waitSignal(session.analysis_cancelled, timeout=3000):  # not the 5 s of the server
            session.cancel()
        assert doc.status is AnalysisStatus.CANCELLED and not session.is_busy
        shown = [symbol_status(s, doc).text for s in doc.symbols]
        assert shown == ["not loaded"] * 4  # nothing says "downloading" any more
        assert not list((tmp_path / "dl").rglob("*.sym"))  # no partial download left behind
    finally:
        session.shutdown()


def test_applying_preferences_gives_the_session_its_servers(window: MainWindow, settings: Settings) -> None:
    prefs = window.preferences_dialog().preferences()
    window.apply_preferences(
        replace(prefs, servers=(ServerEntry(URL, "t"),), offline=True, download_timeout=60)
    )
    options = window.session.symbol_servers
    assert options is not None and options.offline and options.fetch.total_timeout == 60
    assert [s.url for s in options.servers] == [URL]
    assert reopen(settings).symbol_servers == [ServerEntry(URL, "t")]
    window.apply_preferences(replace(prefs, servers=(), offline=False))
    assert window.session.symbol_servers is None


def test_applying_a_server_walks_again_and_downloads(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, server: SymbolHttpServer
) -> None:
    window = make_window(qtbot, settings, session_symbol_paths=())  # no local symbols at all
    session = window.session
    settings.local_modules = False  # nor this machine's libc
    window.push_symbol_settings()
    try:
        load(qtbot, session, sample_dump())
        model = window.module_pane.model
        col = ModuleTableModel.COL_SYMBOLS
        assert [model.data(model.index(i, col)) for i in range(4)] == ["missing"] * 4
        # The files the walk needs arrive late, so the prefetched 404s of the others are in by then.
        server.behaviour.delays = {f"/symbols/{RENDER_FARM}": 0.4, f"/symbols/{LIBC}": 0.4}
        bar_texts: list[str] = []
        session.progress_changed.connect(lambda _p: bar_texts.append(window.progress_bar.format()))
        prefs = replace(window.preferences_dialog().preferences(), servers=(ServerEntry(server.url),))
        wait_analysis_over(qtbot, session, lambda: window.apply_preferences(prefs))
        shown = [model.data(model.index(i, col)) for i in range(4)]
        assert shown[0].startswith(f"loaded, downloaded from {server.url}/render_farm/")
        assert shown[1] == "not needed, not on server"  # linux-vdso: prefetched, never needed
        assert any(t.endswith(" downloading") for t in bar_texts)
    finally:
        session.shutdown()
