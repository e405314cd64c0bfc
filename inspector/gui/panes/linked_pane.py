"""`LinkedPane`: what the panes that follow the session's selection share.

A pane shows what the session selects and tells the session what the user
selects in it. When the pane changes its own view to follow the session,
that change must not be sent back as a new selection (Qt → Session → Qt
would loop): the pane does it inside `syncing()`, and its view's signal
handlers return while `_syncing` is set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtWidgets import QHBoxLayout, QLayout, QLineEdit, QVBoxLayout, QWidget

from inspector.gui.session import Session


class LinkedPane(QWidget):
    def __init__(self, session: Session, parent: QWidget | None, *, object_name: str) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.session = session
        #: set while the pane changes its own view to show what the session selected
        self._syncing = False

    @contextmanager
    def syncing(self) -> Iterator[None]:
        self._syncing = True
        try:
            yield
        finally:
            self._syncing = False

    def _filter_box(self, placeholder: str, on_change: Callable[[str], None]) -> QLineEdit:
        """The box under a list that filters it as one types."""
        box = QLineEdit(self)
        box.setPlaceholderText(placeholder)
        box.setClearButtonEnabled(True)
        box.textChanged.connect(on_change)
        return box

    def _stack(self, *parts: QWidget | QLayout) -> QVBoxLayout:
        """The pane's parts top to bottom, edge to edge, 2 px apart."""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        for part in parts:
            if isinstance(part, QLayout):
                layout.addLayout(part)
            else:
                layout.addWidget(part)
        return layout

    @staticmethod
    def _side_by_side(first: QWidget, *rest: QWidget) -> QHBoxLayout:
        """Widgets in a row, edge to edge; the first takes the width the others leave."""
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(first, 1)
        for widget in rest:
            bar.addWidget(widget)
        return bar
