"""Registers pane: the selected thread's registers (phase 2: the selected frame's, with provenance)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Slot
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.models.roles import AddressRole
from inspector.gui.panes.table_view import DataTableView
from inspector.gui.session import Session
from inspector.gui.theme import Theme


class RegisterPane(QWidget):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("registerPane")
        self.session = session
        self.model = RegisterTableModel(theme, self)
        self.title = QLabel("No thread selected", self)
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.view = DataTableView(self, object_name="registerView")
        self.view.setModel(self.model)
        self.view.set_row_font(theme.mono)
        self.view.doubleClicked.connect(self._on_double_clicked)
        self._fit(theme)
        self.setFocusProxy(self.view)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.view)

        session.document_changed.connect(self._on_document_changed)
        session.thread_selected.connect(self._on_thread_selected)

    def _fit(self, theme: Theme) -> None:
        M = RegisterTableModel
        self.view.fit_columns(
            {
                M.COL_NAME: ("eflags", theme.mono),
                M.COL_VALUE: ("0x00007ffff7e5af16", theme.mono),
                M.COL_STATE: ("unknown", None),
            },
            padding=12,
        )

    def set_theme(self, theme: Theme) -> None:
        self.model.set_theme(theme)
        self.view.set_row_font(theme.mono)

    @Slot()
    def _on_document_changed(self) -> None:
        self.model.set_context(None, None)
        self.title.setText("No thread selected")

    @Slot(int)
    def _on_thread_selected(self, thread_index: int) -> None:
        doc = self.session.document
        thread = self.session.selected_thread_entry
        if doc is None or thread is None:
            self.model.set_context(None, None)
            self.title.setText("No thread selected")
            return
        self.model.set_context(doc.snapshot, thread.context)
        if thread.context is None:
            self.title.setText(f"Thread {thread.label}: the dump has no readable registers for it")
        else:
            self.title.setText(f"Thread {thread.label} — registers from the {thread.context_source.value}")

    @Slot(QModelIndex)
    def _on_double_clicked(self, index: QModelIndex) -> None:
        address = index.siblingAtColumn(RegisterTableModel.COL_VALUE).data(AddressRole)
        doc = self.session.document
        if isinstance(address, int) and doc is not None:
            target = doc.snapshot.describe_pointer(address)
            if doc.snapshot.memory.region_for(address) is not None:
                self.session.show_address(address)
            elif target is not None and target.module_index is not None:
                self.session.select_module(target.module_index)
