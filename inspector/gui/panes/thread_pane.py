"""Threads pane: the dump's threads, the crashing one marked; selecting one selects it in the session.

The search box under the list searches every frame of every thread (function, module, source);
the selection follows the search to the first thread and frame that match, so Frames never
shows a thread the search left out.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Slot
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QWidget

from inspector.gui.models.thread_model import ThreadTableModel
from inspector.gui.models.thread_search import ThreadSearchProxy
from inspector.gui.panes.linked_pane import LinkedPane
from inspector.gui.panes.name_delegate import ShorteningDelegate
from inspector.gui.panes.table_view import DataTableView
from inspector.gui.session import FrameRef, Session
from inspector.gui.theme import Theme


class ThreadPane(LinkedPane):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(session, parent, object_name="threadPane")
        self.model = ThreadTableModel(theme, self)
        self.proxy = ThreadSearchProxy(self)
        self.proxy.setSourceModel(self.model)

        self.filter = self._filter_box("Search all threads' frames (function, module, source)", self.search)
        self.filter.setToolTip(
            "Shows the threads with a frame whose function, inlined function, module or source file "
            "contains the text (or whose id or name does), and selects the first frame that matches"
        )
        self.no_match = QLabel(self)
        self.no_match.setObjectName("threadSearchStatus")
        self.no_match.setContentsMargins(4, 0, 4, 0)
        self.no_match.hide()

        self.view = DataTableView(self, object_name="threadView")
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(ThreadTableModel.COL_INDEX, Qt.SortOrder.AscendingOrder)
        self.view.set_row_font(theme.mono_bold, theme.bold)
        # the top frame's name shortened to fit, as in Frames (the whole name is in the tooltip)
        self.view.setItemDelegateForColumn(ThreadTableModel.COL_TOP, ShorteningDelegate(self.view))
        self._fit(theme)
        self.setFocusProxy(self.view)

        self._stack(self.view, self.no_match, self.filter)

        self.view.selectionModel().currentRowChanged.connect(self._on_current_changed)
        # frames arriving during the walk can bring threads into the search's results
        self.proxy.rowsInserted.connect(self._update_search_status)
        self.proxy.rowsRemoved.connect(self._update_search_status)
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
            self.proxy.document = self.session.document
            self.model.set_document(self.session.document)
        self._update_search_status()

    @Slot(int)
    def _on_frames_added(self, thread_index: int, *_: object) -> None:
        self.model.frames_changed(thread_index)
        self.proxy.frames_changed()
        if self.model.overflow(thread_index) is not None:
            # "1,937 ⚠ overflow" is wider than the counts the column is sized for
            column = ThreadTableModel.COL_FRAMES
            text = str(self.model.index(thread_index, column).data() or "")
            bold = QFont(self.view.font())
            bold.setBold(True)  # the crashing thread's row is bold
            wanted = QFontMetrics(bold).horizontalAdvance(text) + 14
            header = self.view.horizontalHeader()
            if header.sectionSize(column) < wanted:
                header.resizeSection(column, wanted)

    # ---- search ----

    @Slot(str)
    def search(self, text: str) -> None:
        """Show the threads whose frames match `text`, and select the first match."""
        with self.syncing():  # the view moves its current row off a hidden thread: not a user's choice
            self.proxy.set_search(text)
        self._update_search_status()
        doc = self.session.document
        if not self.proxy.search:
            if self.session.selected_thread < 0 and doc is not None and doc.thread_count:
                # a search that matched nothing cleared the selection: back to where one starts
                crashing = doc.crashing_thread
                self.session.select_thread(crashing.index if crashing is not None else 0)
            return
        current = self.session.selected_thread
        shown = [self.view.source_row(self.proxy.index(r, 0)) for r in range(self.proxy.rowCount())]
        if not shown:
            self.session.select_thread(-1)  # Frames must not keep showing a thread the search left out
            return
        thread = current if current in shown else shown[0]
        frames = self.proxy.matches(thread)
        if frames:
            self.session.select_frame(FrameRef(thread, frames[0]))
        elif thread != current:
            self.session.select_thread(thread)
        self._on_thread_selected(self.session.selected_thread)  # the view's current row, also if unchanged

    @Slot()
    def _update_search_status(self, *_: object) -> None:
        text = self.proxy.search
        if not text or self.session.document is None:
            self.no_match.hide()
            return
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        if shown == 0:
            self.no_match.setText(f"No match: no frame of any thread contains “{text}”")
        else:
            self.no_match.setText(f"{shown} of {total} threads have a frame matching “{text}”")
        self.no_match.show()

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
