"""The panes that say why it crashed (Disassembly, Source), docked beside the Modules and Problems tabs.

Built here so the main window only asks for them: it hands over its dock factory and the
dock to tab them with.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from inspector.gui.panes.disassembly_pane import DisassemblyPane
from inspector.gui.panes.source_pane import SourcePane
from inspector.gui.session import Session
from inspector.gui.theme import Theme

DockFactory = Callable[[str, str, QWidget, Qt.DockWidgetArea], QDockWidget]


class WhyPanes:
    def __init__(self, session: Session, theme: Theme, dock: DockFactory, beside: QDockWidget) -> None:
        self.disassembly = DisassemblyPane(session, theme)
        self.source = SourcePane(session, theme)
        window = beside.parentWidget()
        assert isinstance(window, QMainWindow)
        for key, title, pane in (
            ("disassembly", "Disassembly", self.disassembly),
            ("source", "Source", self.source),
        ):
            window.tabifyDockWidget(beside, dock(key, title, pane, Qt.DockWidgetArea.BottomDockWidgetArea))

    def set_theme(self, theme: Theme) -> None:
        self.disassembly.set_theme(theme)
        self.source.set_theme(theme)
