"""The main window's base: its paints and layouts hold a running walk back until they are done.

A paint calls into Python many times (item models, delegates, the plot), and while the walk runs
pure Python on the worker thread each of those calls waits for the GIL. The session's runner holds
the walk for a while after each delivered batch; a paint or layout that outlasts that hold (the
first frames, a new document) would otherwise take twice as long (`JobRunner.window_work_started`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QMainWindow

if TYPE_CHECKING:
    from inspector.gui.session import Session

#: The window's own events within which its docked panes paint and lay out.
_WINDOW_WORK = frozenset({QEvent.Type.UpdateRequest, QEvent.Type.LayoutRequest})


class WalkCourteousWindow(QMainWindow):
    session: Session

    def event(self, event: QEvent) -> bool:
        if event.type() not in _WINDOW_WORK:
            return bool(super().event(event))
        with self.session.window_work():
            return bool(super().event(event))
