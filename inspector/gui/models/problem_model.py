"""`ProblemTableModel`: the damage found in the dump, unusable symbol paths and damaged symbol files."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from inspector.gui.document import Problem
from inspector.gui.models.roles import ItemRole, SortRole
from inspector.gui.theme import Theme

_Index = QModelIndex | QPersistentModelIndex
_ROLE = Qt.ItemDataRole


class ProblemTableModel(QAbstractTableModel):
    COL_SOURCE = 0
    COL_WHERE = 1
    COL_MESSAGE = 2
    COL_CODE = 3
    HEADERS = ("Source", "Where", "Problem", "Code")

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._problems: list[Problem] = []

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme

    def set_problems(self, problems: Sequence[Problem]) -> None:
        self.beginResetModel()
        self._problems = list(problems)
        self.endResetModel()

    @property
    def problems(self) -> list[Problem]:
        return list(self._problems)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._problems)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _ROLE.DisplayRole) -> object:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == _ROLE.DisplayRole
            and 0 <= section < len(self.HEADERS)
        ):
            return self.HEADERS[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: _Index, role: int = _ROLE.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._problems):
            return None
        problem = self._problems[index.row()]
        column = index.column()
        if role in (_ROLE.DisplayRole, SortRole):
            return (problem.source, problem.where, problem.message, problem.code)[column]
        if role == ItemRole:
            return problem
        if role == _ROLE.ToolTipRole:
            return f"{problem.where}: {problem.message} [{problem.code}]"
        if role == _ROLE.ForegroundRole and column == self.COL_SOURCE:
            return self._theme.warning
        if role == _ROLE.FontRole and column == self.COL_CODE:
            return self._theme.mono
        return None
