"""`DataTableView`: the table every pane uses — rows, fixed heights, Tab leaves the table, Ctrl+C copies.

`RowSelection` is what it shares with the panes' tree view (`tree_view.DataTreeView`):
making a row current when the pane follows the session, and clearing it.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QAbstractItemModel, QAbstractProxyModel, QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QFont, QFontMetrics, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget


class RowSelection:
    """Row selection as the panes drive it, mixed into a Qt item view (it has no state of its own)."""

    def select_row(self, index: QModelIndex) -> None:
        """Make `index`'s row the current one, selected alone, and scroll it into sight."""
        assert isinstance(self, QAbstractItemView)  # only ever mixed into a Qt item view
        self.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.scrollTo(index)

    def clear_current(self) -> None:
        """No current row and nothing selected."""
        assert isinstance(self, QAbstractItemView)
        selection = self.selectionModel()
        selection.clearCurrentIndex()
        selection.clearSelection()


class DataTableView(RowSelection, QTableView):
    def __init__(self, parent: QWidget | None = None, *, object_name: str = "") -> None:
        super().__init__(parent)
        if object_name:
            self.setObjectName(object_name)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setTabKeyNavigation(False)  # Tab moves to the next pane, arrows move inside the table
        self.setWordWrap(False)
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.setCornerButtonEnabled(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        vertical = self.verticalHeader()
        vertical.setVisible(False)
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        horizontal = self.horizontalHeader()
        horizontal.setHighlightSections(False)
        horizontal.setStretchLastSection(True)
        horizontal.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        horizontal.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.set_row_font(self.font())

    def set_row_font(self, *fonts: QFont) -> None:
        """Fix the row height to fit the tallest of these fonts (rows never measure their contents)."""
        height = max(QFontMetrics(f).height() for f in (self.font(), *fonts))
        self.verticalHeader().setDefaultSectionSize(height + 6)
        self.verticalHeader().setMinimumSectionSize(height + 2)

    def fit_columns(self, samples: Mapping[int, tuple[str, QFont | None]], padding: int = 24) -> None:
        """Size columns to fit a sample text each (never measured from the data: the model may be huge)."""
        header = self.horizontalHeader()
        model = self.model()
        for column, (text, font) in samples.items():
            metrics = QFontMetrics(font or self.font())
            title = model.headerData(column, Qt.Orientation.Horizontal) if model is not None else None
            # the header draws its own margins and a sort indicator slot around the title
            title_width = QFontMetrics(header.font()).horizontalAdvance(str(title or "")) + max(padding, 20)
            header.resizeSection(column, max(metrics.horizontalAdvance(text) + padding, title_width))

    def source_row(self, index: QModelIndex) -> int:
        """The row in the source model for an index of this view's (possibly proxy) model."""
        model: QAbstractItemModel | None = self.model()
        while index.isValid() and isinstance(model, QAbstractProxyModel):
            index = model.mapToSource(index)
            model = model.sourceModel()
        return index.row() if index.isValid() else -1

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            event.accept()
            return
        super().keyPressEvent(event)

    def copy_selection(self) -> str:
        """Copy the selected rows (or the current cell) as tab-separated text; returns it."""
        model = self.model()
        if model is None:
            return ""
        rows = sorted({i.row() for i in self.selectionModel().selectedIndexes()})
        if not rows and self.currentIndex().isValid():
            rows = [self.currentIndex().row()]
        columns = [c for c in range(model.columnCount()) if not self.isColumnHidden(c)]
        lines = ["\t".join(str(model.index(r, c).data() or "") for c in columns) for r in rows]
        text = "\n".join(lines)
        if text:
            QGuiApplication.clipboard().setText(text)
        return text
