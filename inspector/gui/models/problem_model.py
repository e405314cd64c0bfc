"""`ProblemTableModel`: the core's problems (the JSON's `inspector_problems`): damage in the dump,
unusable symbol paths, damaged or refused symbol files, walks cut short."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt

from inspector.core.process import Problem
from inspector.gui.models.headered_model import HeaderedTableModel
from inspector.gui.models.roles import ItemRole, SortRole
from inspector.gui.theme import Theme

_ROLE = Qt.ItemDataRole


class ProblemTableModel(HeaderedTableModel):
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

    def _row_count(self) -> int:
        return len(self._problems)

    def _cell(self, row: int, column: int, role: int) -> object:
        problem = self._problems[row]
        where = _where(problem)
        if role in (_ROLE.DisplayRole, SortRole):
            return (problem.source, where, problem.message, problem.code)[column]
        if role == ItemRole:
            return problem
        if role == _ROLE.ToolTipRole:
            return f"{where}: {problem.message} [{problem.code}]"
        if role == _ROLE.ForegroundRole and column == self.COL_SOURCE:
            return self._theme.warning
        if role == _ROLE.FontRole and column == self.COL_CODE:
            return self._theme.mono
        return None


def _where(problem: Problem) -> str:
    """The stream, module, path or thread the problem is about, and its offset in the dump."""
    at = f"at {problem.offset:#x}" if problem.offset is not None else ""
    if problem.where and at:
        return f"{problem.where} {at}"
    return problem.where or at
