"""Helpers shared by the GUI tests (fixtures are in conftest.py)."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from inspector.gui.session import Session

#: Longest a test waits for one analysis of the small sample (it takes ~50 ms).
ANALYSIS_TIMEOUT_MS = 10_000


def wait_analysis_over(qtbot: QtBot, session: Session, action: object) -> None:
    """Run `action()` and wait for the analysis it starts to end, however it ends."""
    ended: list[str] = []
    handlers = {
        "finished": lambda: ended.append("finished"),
        "failed": lambda _f: ended.append("failed"),
        "cancelled": lambda: ended.append("cancelled"),
    }
    session.analysis_finished.connect(handlers["finished"])
    session.analysis_failed.connect(handlers["failed"])
    session.analysis_cancelled.connect(handlers["cancelled"])
    try:
        assert callable(action)
        action()
        qtbot.waitUntil(lambda: bool(ended) and not session.is_busy, timeout=ANALYSIS_TIMEOUT_MS)
    finally:
        session.analysis_finished.disconnect(handlers["finished"])
        session.analysis_failed.disconnect(handlers["failed"])
        session.analysis_cancelled.disconnect(handlers["cancelled"])


def load(qtbot: QtBot, session: Session, path: Path) -> None:
    wait_analysis_over(qtbot, session, lambda: session.open_dump(path))
