"""What the item models of the panes share: a header from `HEADERS` / `TOOLTIPS`, read-only cells.

`HeaderedTableModel` is the base of the flat tables (threads, modules,
registers, problems, stack memory): a subclass names its columns in
`HEADERS` (and, optionally, a tooltip each in `TOOLTIPS`), says how many
rows it has in `_row_count()` and answers `_cell(row, column, role)` for the
rows it has. `HeaderedTreeModel` is the base of the trees
(frames with their inline frames, an unwind trace), which keep their own
`index` / `parent` / `rowCount`.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

_Index = QModelIndex | QPersistentModelIndex
_ROLE = Qt.ItemDataRole


class _HeaderedColumns:
    """The header part, mixed into a Qt model class (it has no state of its own).

    The cells are read-only, enabled and selectable, which is what Qt's own `flags()` says: the
    models leave it to Qt. A paint asks for every visible cell's flags, several times (drawing it,
    whether it is selected): each answer from Python is a call that waits for the interpreter,
    which the walk's worker thread holds, and on the torch crash those calls were a seventh of
    the first paint.
    """

    #: One title per column; their number is the number of columns.
    HEADERS: tuple[str, ...] = ()
    #: The header's tooltip of each column (may be shorter than HEADERS: no tooltip).
    TOOLTIPS: tuple[str, ...] = ()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _ROLE.DisplayRole) -> object:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.HEADERS):
            return None
        if role == _ROLE.DisplayRole:
            return self.HEADERS[section]
        if role == _ROLE.ToolTipRole and section < len(self.TOOLTIPS):
            return self.TOOLTIPS[section]
        return None

    def _all_changed(self) -> None:
        """Every cell (of the top level) changed, as with a new theme: repaint them all."""
        assert isinstance(self, QAbstractItemModel)  # only ever mixed into a Qt model
        rows = self.rowCount()
        if rows:
            self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, self.columnCount() - 1))


class HeaderedTableModel(_HeaderedColumns, QAbstractTableModel):
    def _row_count(self) -> int:
        raise NotImplementedError

    def _cell(self, row: int, column: int, role: int) -> object:
        """`data()` of a cell in a row that exists (`0 <= row < _row_count()`)."""
        raise NotImplementedError

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._row_count()

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        # Qt's own `index` checks the bounds through `rowCount` and `columnCount`: two calls into
        # Python for every index a paint or the filter proxy asks for, instead of this one.
        if parent.isValid() or not (0 <= row < self._row_count() and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def data(self, index: _Index, role: int = _ROLE.DisplayRole) -> object:
        row = index.row()
        if not index.isValid() or not 0 <= row < self._row_count():
            return None
        return self._cell(row, index.column(), role)


class HeaderedTreeModel(_HeaderedColumns, QAbstractItemModel):
    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return len(self.HEADERS)
