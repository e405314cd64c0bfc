"""`ThreadSearchProxy`: the Threads list filtered by a search over every frame of every thread.

A thread is shown when the text is in one of its cells (index, id, name, top frame) or in
any frame it has so far (see `inspector.gui.frame_search`). Frames keep arriving while the
walk runs: `frames_changed()` re-evaluates the filter at most every `REFILTER_MS`.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt, QTimer

from inspector.gui.document import Document
from inspector.gui.frame_search import matching_frames
from inspector.gui.models.roles import IndexRole, SortRole

REFILTER_MS = 150


class ThreadSearchProxy(QSortFilterProxyModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SortRole)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)
        self.document: Document | None = None
        self.search = ""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFILTER_MS)
        self._timer.timeout.connect(self.invalidateRowsFilter)

    def set_search(self, text: str) -> None:
        self.search = text.strip()
        self._timer.stop()
        self.setFilterFixedString(self.search)

    def frames_changed(self) -> None:
        """More frames are known: a thread may match now (only matters while searching)."""
        if self.search and not self._timer.isActive():
            self._timer.start()

    def matches(self, thread_index: int) -> list[int]:
        """The frames of a thread that match the search (none without a search or a document)."""
        if not self.search or self.document is None:
            return []
        return matching_frames(self.document, thread_index, self.search)

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        if not self.search or super().filterAcceptsRow(source_row, source_parent):
            return True
        source = self.sourceModel()
        thread_index = source.index(source_row, 0, source_parent).data(IndexRole)
        return isinstance(thread_index, int) and bool(self.matches(thread_index))
