"""Problems pane: what is wrong with the dump and its symbols (the dump still shows what could be read)."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from inspector.gui.document import Document
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
        self.empty = QLabel(self)
        self.empty.setContentsMargins(6, 6, 6, 6)
        self.empty.setWordWrap(True)
        self.setFocusProxy(self.view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.empty)
        layout.addWidget(self.view)
        session.problems_changed.connect(self.refresh)
        session.document_changed.connect(self.refresh)
        # the empty text depends on the symbols, which are known only as the walk goes
        session.analysis_finished.connect(self.refresh)
        session.analysis_cancelled.connect(self.refresh)
        self.refresh()

    def set_theme(self, theme: Theme) -> None:
        self.model.set_theme(theme)

    @Slot()
    def refresh(self) -> None:
        doc = self.session.document
        problems = doc.problems() if doc is not None else []
        self.model.set_problems(problems)
        self.empty.setVisible(not problems)
        self.empty.setText(_empty_text(doc))
        self.count_changed.emit(len(problems))


def _empty_text(doc: Document | None) -> str:
    """What an empty list means: a clean read, but not that symbols were there to read."""
    if doc is None:
        return "No dump open."
    if not doc.state.symbols_searched:
        return (
            "No damage found in the dump. No symbol paths are set, so no symbols were read: "
            "add a symbol folder with File › Add Symbol Folder…"
        )
    lacking = doc.modules_lacking_symbols()
    if lacking:
        noun, verb = ("module", "lacks") if len(lacking) == 1 else ("modules", "lack")
        return (
            f"No damage found in the dump or its symbol files, but {len(lacking)} {noun} with frames "
            f"{verb} symbols (see Modules)."
        )
    return "No problems: the dump and its symbols read cleanly."
