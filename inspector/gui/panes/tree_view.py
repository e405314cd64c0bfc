"""`DataTreeView`: the tree the frame and unwind panes use — whole rows, uniform row heights, read-only."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeView, QWidget

from inspector.gui.panes.table_view import RowSelection


class DataTreeView(RowSelection, QTreeView):
    def __init__(self, parent: QWidget | None = None, *, object_name: str = "") -> None:
        super().__init__(parent)
        if object_name:
            self.setObjectName(object_name)
        self.setUniformRowHeights(True)  # rows never measure their contents: long traces stay fast
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAllColumnsShowFocus(True)
        self.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
