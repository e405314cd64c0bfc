"""Threads pane: the dump's threads, the crashing one marked; selecting one selects it in the session."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Slot
from PySide6.QtWidgets import QWidget

from inspector.gui.models.roles import SortRole
from inspector.gui.models.thread_model import ThreadTableModel
from inspector.gui.panes.linked_pane import LinkedPane
from inspector.gui.panes.name_delegate import ShorteningDelegate
from inspector.gui.panes.table_view import DataTableView
from inspector.gui.session import Session
from inspector.gui.theme import Theme


class ThreadPane(LinkedPane):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(session, parent, object_name="threadPane")
        self.model = ThreadTableModel(theme, self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SortRole)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)

        self.filter = self._filter_box("Filter threads", self.proxy.setFilterFixedString)

        self.view = DataTableView(self, object_name="threadView")
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(ThreadTableModel.COL_INDEX, Qt.SortOrder.AscendingOrder)
        self.view.set_row_font(theme.mono_bold, theme.bold)
        # the top frame's name shortened to fit, as in Frames (the whole name is in the tooltip)
        self.view.setItemDelegateForColumn(ThreadTableModel.COL_TOP, ShorteningDelegate(self.view))
        self._fit(theme)
        self.setFocusProxy(self.view)

        self._stack(self.view, self.filter)

        self.view.selectionModel().currentRowChanged.connect(self._on_current_changed)
        session.document_changed.connect(self._on_document_changed)
        session.thread_selected.connect(self._on_thread_selected)
        session.frames_added.connect(self._on_frames_added)
        session.thread_walked.connect(self._on_frames_added)

    def _fit(self, theme: Theme) -> None:
        M = ThreadTableModel
        self.view.fit_columns(
            padding=14,
            samples={
                M.COL_INDEX: ("⚡ 99", theme.bold),
                M.COL_ID: ("9999999", None),
                M.COL_NAME: ("render_farm", None),
                M.COL_FRAMES: ("999", None),
                M.COL_TOP: ("libc.so.6 + 0x85f16", theme.mono),
            },
        )

    def height_for_rows(self, rows: int) -> int:
        """The pane's height (with its dock's title bar) that shows `rows` threads without scrolling."""
        view = self.view
        table = (
            view.horizontalHeader().sizeHint().height()
            + rows * view.verticalHeader().defaultSectionSize()
            + 2 * view.frameWidth()
            + view.horizontalScrollBar().sizeHint().height()  # shown when the columns are wider
        )
        title_bar = self.fontMetrics().height() + 10
        return table + 2 + self.filter.sizeHint().height() + title_bar

    def set_theme(self, theme: Theme) -> None:
        self.model.set_theme(theme)
        self.view.set_row_font(theme.mono_bold, theme.bold)

    @Slot()
    def _on_document_changed(self) -> None:
        with self.syncing():
            self.model.set_document(self.session.document)

    @Slot(int)
    def _on_frames_added(self, thread_index: int, *_: object) -> None:
        self.model.frames_changed(thread_index)

    @Slot(int)
    def _on_thread_selected(self, thread_index: int) -> None:
        with self.syncing():
            if thread_index < 0:
                self.view.clear_current()
                return
            index = self.proxy.mapFromSource(self.model.index(thread_index, 0))
            if not index.isValid():
                return  # filtered out: keep the view as it is
            self.view.select_row(index)

    @Slot(QModelIndex, QModelIndex)
    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        row = self.view.source_row(current)
        if row >= 0:
            self.session.select_thread(row)
