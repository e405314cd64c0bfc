"""Preferences at first use: the dialog fits a laptop's screen; "Use module files on this machine" and
the debuginfod servers are kept in the settings and reach the next walk (issue 14's GUI part)."""

from __future__ import annotations

from dataclasses import replace

from pytestqt.qtbot import QtBot

from inspector.gui.document import AnalysisRequest
from inspector.gui.jobs import analysis_job
from inspector.gui.main_window import MainWindow
from inspector.gui.preferences_dialog import PreferencesDialog
from inspector.gui.session import Job
from inspector.gui.settings import Settings
from inspector.resources import sample_dump
from tests.gui.support import wait_analysis_over
from tests.gui.test_settings import reopen

DEBUGINFOD = "https://debuginfod.example.org/"


def record_requests(window: MainWindow) -> list[AnalysisRequest]:
    """The requests of the walks the session starts from now on (each still runs for real)."""
    requests: list[AnalysisRequest] = []

    def factory(request: AnalysisRequest) -> Job:
        requests.append(request)
        return analysis_job(request)

    window.session.job_factory = factory
    return requests


def test_the_dialog_fits_a_1366x768_screen(qtbot: QtBot, window: MainWindow) -> None:
    dialog = window.preferences_dialog()
    qtbot.addWidget(dialog)
    # the window manager's title bar and a panel take ~70 px of the 768
    assert dialog.minimumSizeHint().height() <= 690, dialog.minimumSizeHint()
    assert dialog.height() <= 690 and dialog.width() <= 1366
    dialog.show()
    qtbot.waitExposed(dialog)
    for tab in range(dialog.tabs.count()):
        dialog.tabs.setCurrentIndex(tab)
        page = dialog.tabs.currentWidget()
        assert page.minimumSizeHint().height() <= dialog.tabs.height(), dialog.tabs.tabText(tab)
    tabs = [dialog.tabs.tabText(i).replace("&", "") for i in range(dialog.tabs.count())]
    assert tabs == ["Symbols", "Servers", "Stack walk", "Sources"]


def test_local_modules_box_is_kept_and_changes_the_next_walk(
    qtbot: QtBot, window: MainWindow, settings: Settings
) -> None:
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    requests = record_requests(window)
    dialog = window.preferences_dialog()
    qtbot.addWidget(dialog)
    assert (
        dialog.local_modules.isChecked() and dialog.local_modules.text() == "Use module files on this machine"
    )
    dialog.local_modules.setChecked(False)
    wait_analysis_over(qtbot, window.session, lambda: window.apply_preferences(dialog.preferences()))
    assert [r.local_modules for r in requests] == [False]  # changing it walked again, without them
    assert reopen(settings).local_modules is False
    # a new window (the next start) reads it back and walks without them too
    assert not window.preferences_dialog().local_modules.isChecked()
    window.push_symbol_settings()
    assert window.session.local_modules is False
    # and back on
    prefs = replace(window.preferences_dialog().preferences(), local_modules=True)
    wait_analysis_over(qtbot, window.session, lambda: window.apply_preferences(prefs))
    assert [r.local_modules for r in requests] == [False, True]
    # applying again with no change does not walk again
    window.apply_preferences(window.preferences_dialog().preferences())
    assert len(requests) == 2


def test_debuginfod_urls_default_to_the_environment_and_round_trip(settings: Settings) -> None:
    environ = {"DEBUGINFOD_URLS": "https://a.example/ https://b.example/ https://a.example/"}
    assert settings.debuginfod_urls(environ) == ["https://a.example/", "https://b.example/"]
    options = settings.symbol_server_options(environ)
    assert options is not None and [s.url for s in options.debuginfod] == [
        "https://a.example/",
        "https://b.example/",
    ]
    assert options.servers == ()
    settings.set_debuginfod_urls([" https://c.example/ ", "https://a.example/", ""])
    again = reopen(settings)
    assert again.debuginfod_urls(environ) == ["https://c.example/", "https://a.example/"]
    # an emptied list stays empty: it no longer follows DEBUGINFOD_URLS
    again.set_debuginfod_urls([])
    assert reopen(again).debuginfod_urls(environ) == []
    assert reopen(again).symbol_server_options(environ) is None
    again.store.setValue("symbols/debuginfod_urls", "{not json")
    assert again.debuginfod_urls(environ) == []


def test_debuginfod_urls_edited_in_the_dialog_reach_the_walk(
    qtbot: QtBot, window: MainWindow, settings: Settings
) -> None:
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    requests = record_requests(window)
    dialog: PreferencesDialog = window.preferences_dialog()
    qtbot.addWidget(dialog)
    dialog.debuginfod_url.setText("ftp://nope.example/")
    assert not dialog.add_debuginfod_from_field() and dialog.debuginfod_error.text()
    dialog.debuginfod_url.setText(DEBUGINFOD)
    assert dialog.add_debuginfod_from_field()
    assert dialog.preferences().debuginfod_urls == (DEBUGINFOD,)
    # walked again, with the server asked the way --debuginfod-url asks it
    wait_analysis_over(qtbot, window.session, lambda: window.apply_preferences(dialog.preferences()))
    assert len(requests) == 1
    servers = requests[0].symbol_servers
    assert servers is not None and [s.url for s in servers.debuginfod] == [DEBUGINFOD]
    assert not servers.offline and servers.servers == ()
    assert reopen(settings).debuginfod_urls({}) == [DEBUGINFOD]
    assert window.preferences_dialog().preferences().debuginfod_urls == (DEBUGINFOD,)
