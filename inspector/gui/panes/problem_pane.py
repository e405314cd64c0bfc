"""Problems pane: what is wrong with the dump and its symbols (the dump still shows what could be read)."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from inspector.gui.models.problem_model import ProblemTableModel
from inspector.gui.panes.table_view import DataTableView
from inspector.gui.session import Session
from inspector.gui.theme import Theme


class ProblemPane(QWidget):
    #: the number of problems changed (the window puts it in the dock's title)
    count_changed = Signal(int)

    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("problemPane")
        self.session = session
        self.model = ProblemTableModel(theme, self)
        self.view = DataTableView(self, object_name="problemView")
        self.view.setModel(self.model)
        self.view.setTextElideMode(self.view.textElideMode().ElideRight)
        self.view.fit_columns(
            {
                ProblemTableModel.COL_SOURCE: ("symbol path", None),
                ProblemTableModel.COL_WHERE: ("ThreadListStream (0x3)", None),
                ProblemTableModel.COL_MESSAGE: ("x" * 70, None),
            }
        )
        self.empty = QLabel("No problems: the dump and its symbols read cleanly.", self)
        self.empty.setContentsMargins(6, 6, 6, 6)
        self.setFocusProxy(self.view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.empty)
        layout.addWidget(self.view)
        session.problems_changed.connect(self.refresh)
        session.document_changed.connect(self.refresh)
        self.refresh()

    def set_theme(self, theme: Theme) -> None:
        self.model.set_theme(theme)

    @Slot()
    def refresh(self) -> None:
        doc = self.session.document
        problems = doc.problems() if doc is not None else []
        self.model.set_problems(problems)
        self.empty.setVisible(not problems)
        if doc is None:
            self.empty.setText("No dump open.")
        else:
            self.empty.setText("No problems: the dump and its symbols read cleanly.")
        self.count_changed.emit(len(problems))
