"""Symbol servers in the GUI: settings, the Preferences dialog (token masked), the Modules pane, the job."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from inspector.core.cancel import CancelToken
from inspector.core.symbols import DownloadState, DownloadStatus, ServerAttempt
from inspector.gui.document import AnalysisRequest, Document, ModuleSymbolState, SymbolLoadState
from inspector.gui.jobs import Progress, SymbolsLoaded, run_analysis
from inspector.gui.main_window import MainWindow
from inspector.gui.models.module_model import ModuleTableModel
from inspector.gui.preferences_dialog import PreferencesDialog, SymbolPreferences
from inspector.gui.settings import ServerEntry, Settings
from inspector.gui.theme import Theme
from inspector.resources import sample_dump
from tests.gui.test_settings import reopen
from tests.symbols.server.http_server import FAST, SymbolHttpServer

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


def _state(download: DownloadStatus, state: SymbolLoadState = SymbolLoadState.PENDING) -> ModuleSymbolState:
    return ModuleSymbolState(state, download=download)


def test_module_pane_shows_download_states(qapp: QApplication, sample_document: Document) -> None:
    model = ModuleTableModel(Theme.for_scheme(False, qapp.font()))
    model.set_document(sample_document)
    states = {
        0: _state(DownloadStatus(DownloadState.DOWNLOADING, received=50, total=200)),
        1: _state(DownloadStatus(DownloadState.NOT_ON_SERVER), SymbolLoadState.MISSING),
        2: ModuleSymbolState(
            SymbolLoadState.LOADED,
            path=Path("/cache/libc.so.6.sym"),
            download=DownloadStatus(DownloadState.DOWNLOADED, url="https://s/libc.so.6.sym"),
            symbol_url="https://s/libc.so.6.sym",
        ),
        3: _state(
            DownloadStatus(
                DownloadState.FAILED,
                reason="timed out",
                attempts=(ServerAttempt("https://s/ld.sym", "failed", "timed out"),),
            ),
            SymbolLoadState.MISSING,
        ),
    }
    for i, state in states.items():
        sample_document.set_symbol_state(i, state)
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


def test_the_job_downloads_and_reports_each_module(tmp_path: Path, server: SymbolHttpServer) -> None:
    from inspector.core.symbols import SymbolServer, SymbolServerOptions

    server.behaviour.delay = 0.2  # long enough for the job to report downloads under way
    servers = SymbolServerOptions(servers=(SymbolServer(server.url),), cache_dir=tmp_path / "dl", fetch=FAST)
    request = AnalysisRequest(sample_dump(), (), None, servers)
    events = list(run_analysis(request, CancelToken()))
    final: dict[int, ModuleSymbolState] = {}
    for event in events:
        if isinstance(event, SymbolsLoaded) and event.state.state.settled:
            final[event.module_index] = event.state
    assert final[0].text.startswith(f"loaded, downloaded from {server.url}/render_farm/")
    assert final[2].symbol_url is not None and final[2].symbol_url.startswith(server.url)
    assert final[1].text == "not on server"  # linux-vdso has no symbols anywhere
    assert any(isinstance(e, Progress) and e.downloads_active for e in events)


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
