"""The Crash Set: triaged dumps grouped by signature, as a two-level Qt item model.

Top-level rows are signature groups, biggest first (then by signature); each group's
children are its dumps in the order they were found. Results stream in from the
triage job in batches (`add_crashes`): a new group or dump is inserted where it
belongs; then, once per batch, groups whose count grew move up (a layout change that
keeps the view's expanded rows and selection, since every index is keyed by its group
object, not by its row).

Columns: Signature (a dump row shows the dump's path, relative to the folder opened),
Dumps (the group's count), Crash (reason and address), Top frames, Modules missing
symbols. `DumpPathRole` gives a dump row's full path; `ItemRole` the row's `CrashTriage`
(dump rows) or `SignatureGroup` (group rows).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from inspector.core.triage import CrashTriage, SignatureGroup
from inspector.gui.models.headered_model import HeaderedTreeModel
from inspector.gui.models.roles import ItemRole, SortRole
from inspector.gui.theme import Theme

_Index = QModelIndex | QPersistentModelIndex
_ROLE = Qt.ItemDataRole

#: A dump row's full path (str).
DumpPathRole = SortRole + 10

#: Frames shown in the Top frames cell (the tooltip has them all).
FRAMES_IN_CELL = 3


class _Group:
    """A signature's row: its crashes with their places in the batch, kept in the order found."""

    __slots__ = ("crashes", "order", "signature")

    def __init__(self, signature: str) -> None:
        self.signature = signature
        self.order: list[int] = []
        self.crashes: list[CrashTriage] = []

    def insert(self, index: int, crash: CrashTriage) -> int:
        row = bisect.bisect(self.order, index)
        self.order.insert(row, index)
        self.crashes.insert(row, crash)
        return row

    @property
    def key(self) -> tuple[int, str]:
        return (-len(self.crashes), self.signature)

    def summary(self) -> SignatureGroup:
        return SignatureGroup(self.signature, tuple(self.crashes))


class CrashSetModel(HeaderedTreeModel):
    HEADERS = ("Signature", "Dumps", "Crash", "Top frames", "Modules missing symbols")
    TOOLTIPS = (
        "Socorro's crash signature (siggen); under it each dump with that signature",
        "How many dumps have this signature",
        "The exception and the address it names (of the group's first dump)",
        "The first frames of the thread the signature is made from (inline frames included)",
        "Modules holding one of those frames whose symbols were not loaded",
    )
    SIGNATURE, COUNT, CRASH, FRAMES, MISSING = range(5)

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._groups: list[_Group] = []  # in display order
        self._rows: dict[int, int] = {}  # id(group) -> its row
        self._by_signature: dict[str, _Group] = {}
        self._root: str | None = None
        self.done = 0

    # ---- feeding ----

    def reset(self, root: str | None = None) -> None:
        """Empty the set; dump paths are shown relative to `root` (the folder opened) when inside it."""
        self.beginResetModel()
        self._groups.clear()
        self._rows.clear()
        self._by_signature.clear()
        self._root = root
        self.done = 0
        self.endResetModel()

    def add_crashes(self, crashes: Iterable[tuple[int, CrashTriage]]) -> None:
        """Add (place in the batch, result) pairs: insert each, then move grown groups up, once."""
        for index, crash in crashes:
            self.done += 1
            group = self._by_signature.get(crash.signature)
            if group is None:
                group = _Group(crash.signature)
                group.insert(index, crash)
                # after every bigger group and the one-dump groups of smaller signatures
                row = bisect.bisect([g.key for g in self._groups], group.key)
                self.beginInsertRows(QModelIndex(), row, row)
                self._groups.insert(row, group)
                self._by_signature[crash.signature] = group
                self._renumber(row)
                self.endInsertRows()
                continue
            row = self._rows[id(group)]
            child = bisect.bisect(group.order, index)
            self.beginInsertRows(self.createIndex(row, 0, None), child, child)
            group.insert(index, crash)
            self.endInsertRows()
            self.dataChanged.emit(self.index(row, self.COUNT), self.index(row, self.MISSING))
        self._resort()

    def _renumber(self, start: int = 0) -> None:
        for row in range(start, len(self._groups)):
            self._rows[id(self._groups[row])] = row

    def _resort(self) -> None:
        """Groups that grew past others move up, as one layout change the views follow."""
        old = self._groups
        new = sorted(old, key=lambda g: g.key)
        if all(a is b for a, b in zip(old, new, strict=True)):
            return
        self.layoutAboutToBeChanged.emit()
        self._groups = new
        self._renumber()
        # Dump rows are keyed by their group object and keep their rows; group rows move.
        moved_from, moved_to = [], []
        for persistent in self.persistentIndexList():
            if persistent.isValid() and persistent.internalPointer() is None:
                row = self._rows[id(old[persistent.row()])]
                moved_from.append(persistent)
                moved_to.append(self.createIndex(row, persistent.column(), None))
        self.changePersistentIndexList(moved_from, moved_to)
        self.layoutChanged.emit()

    # ---- reading ----

    def groups(self) -> list[SignatureGroup]:
        """The groups in display order (biggest first)."""
        return [group.summary() for group in self._groups]

    def group_row(self, signature: str) -> int | None:
        group = self._by_signature.get(signature)
        return None if group is None else self._rows[id(group)]

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._all_changed()

    # ---- QAbstractItemModel ----

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column < 0 or column >= len(self.HEADERS) or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, None) if row < len(self._groups) else QModelIndex()
        if parent.internalPointer() is not None or parent.column() != 0:
            return QModelIndex()  # dumps have no children
        group = self._groups[parent.row()] if parent.row() < len(self._groups) else None
        if group is None or row >= len(group.crashes):
            return QModelIndex()
        return self.createIndex(row, column, group)

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        group = index.internalPointer()
        if group is None:
            return QModelIndex()
        return self.createIndex(self._rows[id(group)], 0, None)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._groups)
        if parent.internalPointer() is not None or parent.column() != 0:
            return 0
        return len(self._groups[parent.row()].crashes) if parent.row() < len(self._groups) else 0

    def data(self, index: _Index, role: int = _ROLE.DisplayRole) -> object:
        if not index.isValid():
            return None
        group = index.internalPointer()
        if group is None:
            if index.row() >= len(self._groups):
                return None
            return self._group_cell(self._groups[index.row()], index.column(), role)
        assert isinstance(group, _Group)
        if index.row() >= len(group.crashes):
            return None
        return self._dump_cell(group.crashes[index.row()], index.column(), role)

    # ---- cells ----

    def _group_cell(self, group: _Group, column: int, role: int) -> object:
        first = group.crashes[0]
        if role == _ROLE.DisplayRole:
            if column == self.SIGNATURE:
                return group.signature
            if column == self.COUNT:
                return len(group.crashes)
            if column == self.CRASH:
                return _crash_text(first)
            if column == self.FRAMES:
                return _frames_text(first)
            if column == self.MISSING:
                return ", ".join(group.summary().modules_missing_symbols)
        elif role == _ROLE.ToolTipRole:
            if column == self.FRAMES:
                return "\n".join(first.top_frames)
            if column == self.SIGNATURE:
                return group.signature
            if column == self.MISSING:
                return "\n".join(group.summary().modules_missing_symbols) or None
        elif role == _ROLE.FontRole and column == self.FRAMES:
            return self._theme.mono
        elif role == _ROLE.FontRole and column == self.SIGNATURE:
            return self._theme.bold
        elif role == _ROLE.ForegroundRole and not first.readable:
            return QColor(self._theme.crash)
        elif role == _ROLE.TextAlignmentRole and column == self.COUNT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        elif role == ItemRole:
            return group.summary()
        return None

    def _dump_cell(self, crash: CrashTriage, column: int, role: int) -> object:
        if role == _ROLE.DisplayRole:
            if column == self.SIGNATURE:
                return self._shown_path(crash.dump)
            if column == self.CRASH:
                return _crash_text(crash)
            if column == self.FRAMES:
                return _frames_text(crash) if crash.readable else "; ".join(crash.problems)
            if column == self.MISSING:
                return ", ".join(crash.modules_missing_symbols)
        elif role == _ROLE.ToolTipRole:
            lines = [crash.dump, *crash.top_frames]
            if crash.problems:
                lines += ["", *crash.problems]
            return "\n".join(lines)
        elif role == _ROLE.FontRole and column == self.FRAMES and crash.readable:
            return self._theme.mono
        elif role == _ROLE.ForegroundRole and not crash.readable:
            return QColor(self._theme.crash)
        elif role == _ROLE.ForegroundRole and column == self.FRAMES and crash.problems:
            return QColor(self._theme.warning)  # walked, but the dump or symbols are damaged
        elif role == DumpPathRole:
            return crash.dump
        elif role == ItemRole:
            return crash
        return None

    def _shown_path(self, path: str) -> str:
        root = self._root
        if root is not None:
            try:
                relative = os.path.relpath(path, root)
            except ValueError:  # another drive (Windows)
                return path
            if not relative.startswith(os.pardir):
                return relative
        return path


def _crash_text(crash: CrashTriage) -> str:
    if not crash.readable:
        return "cannot be read"
    if not crash.crash_reason:
        return "no exception recorded"
    return f"{crash.crash_reason} at {crash.crash_address}"


def _frames_text(crash: CrashTriage) -> str:
    return "  ←  ".join(crash.top_frames[:FRAMES_IN_CELL])
