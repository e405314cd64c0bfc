"""`ModuleTableModel`: one row per loaded module, with its symbol status as it comes in from the worker.

`ModuleFilterProxy` sorts it and can show only the modules the walk needed
symbols for (a frame or a scanned stack word is in them) that lack them —
what the summary's "N modules lack symbols" link opens.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)

from inspector.core.minidump import Module
from inspector.core.process import ModuleSymbolSummary
from inspector.gui.document import Document
from inspector.gui.lookups import address_text
from inspector.gui.models.headered_model import HeaderedTableModel
from inspector.gui.models.roles import AddressRole, IndexRole, ItemRole, SortRole
from inspector.gui.symbol_status import SymbolStatusText, SymbolTone, symbol_file_text, symbol_status
from inspector.gui.theme import Theme

_Index = QModelIndex | QPersistentModelIndex
_ROLE = Qt.ItemDataRole
#: a module's symbol summary (the core's) and how the Symbols column words it
_Symbols = tuple[ModuleSymbolSummary, SymbolStatusText]


class ModuleTableModel(HeaderedTableModel):
    COL_BASE = 0
    COL_END = 1
    COL_NAME = 2
    COL_VERSION = 3
    COL_DEBUG_FILE = 4
    COL_DEBUG_ID = 5
    COL_SYMBOLS = 6
    COL_SYMBOL_FILE = 7
    COL_MATCHED = 8
    HEADERS = (
        "Base",
        "End",
        "Name",
        "Version",
        "Debug file",
        "Debug ID",
        "Symbols",
        "Symbol file",
        "Matched by",
    )
    TOOLTIPS = (
        "Load address",
        "One past the last byte of the module",
        "File name of the loaded module",
        "File version recorded in the dump",
        "Debug file (PDB or ELF name) symbols are looked up by",
        "Breakpad debug identifier",
        "Symbol status: loaded, missing (with the paths tried), damaged (with counts), not needed (no "
        "frame in the module); with symbol servers: queued, downloading, downloaded from URL, from the "
        "download cache, not on server, failed (with the reason), offline",
        "The .sym file used",
        "How the .sym file was matched to the module: by debug id, or by code file and code id (modules "
        "without a debug id, such as every module of a dump written by wine's dbghelp); not matched",
    )
    _MONO = frozenset({COL_BASE, COL_END, COL_DEBUG_ID})

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._document: Document | None = None
        self._modules: tuple[Module, ...] = ()
        self._main: int | None = None

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._all_changed()

    def set_document(self, document: Document | None) -> None:
        self.beginResetModel()
        self._document = document
        self._modules = (
            tuple(entry.module for entry in document.state.modules) if document is not None else ()
        )
        self._main = document.state.main_module if document is not None else None
        self.endResetModel()

    def symbols_changed(self, module_indexes: Iterable[int]) -> None:
        """The document's symbol states of these modules changed: repaint their status cells.

        One `dataChanged` over the rows from the first to the last of them: the sorting proxy
        re-sorts once per signal, and a batch of the walk can bring dozens of modules' symbols.
        """
        rows = [i for i in module_indexes if 0 <= i < len(self._modules)]
        if rows:
            self.dataChanged.emit(
                self.index(min(rows), self.COL_SYMBOLS), self.index(max(rows), self.COL_MATCHED)
            )

    def lacks_needed_symbols(self, row: int) -> bool:
        """The walk used this module (a frame or a scanned word is in it) and it has no usable symbols."""
        doc = self._document
        return doc is not None and row in doc.modules_used and symbol_status(doc.symbols[row], doc).lacking

    def refresh_status(self) -> None:
        """The analysis state changed (pending modules read differently once it is over)."""
        if self._modules:
            self.dataChanged.emit(
                self.index(0, self.COL_SYMBOLS), self.index(len(self._modules) - 1, self.COL_MATCHED)
            )

    # ---- HeaderedTableModel ----

    def _row_count(self) -> int:
        return len(self._modules)

    def _cell(self, row: int, column: int, role: int) -> object:
        if self._document is None:
            return None
        module = self._modules[row]
        summary = self._document.symbols[row] if row < len(self._document.symbols) else None
        state = None if summary is None else (summary, symbol_status(summary, self._document))
        if role == _ROLE.DisplayRole:
            return self._display(module, state, column)
        if role == SortRole:
            return self._sort_key(module, state, column)
        if role == ItemRole:
            return module
        if role == IndexRole:
            return row
        if role == AddressRole and column in (self.COL_BASE, self.COL_END):
            return module.base if column == self.COL_BASE else module.end
        if role == _ROLE.FontRole:
            if column in self._MONO:
                return self._theme.mono
            if column == self.COL_NAME and row == self._main:
                return self._theme.bold
            return None
        if role == _ROLE.ForegroundRole and state is not None:
            if column == self.COL_SYMBOLS:
                return self._status_color(state[1])
            if column == self.COL_SYMBOL_FILE and state[0].path is None:
                return self._theme.muted
            return None
        if role == _ROLE.ToolTipRole:
            return self._tooltip(module, state, column, row)
        return None

    def _display(self, module: Module, state: _Symbols | None, column: int) -> str:
        assert self._document is not None
        doc_state = self._document.state
        if column == self.COL_BASE:
            return address_text(doc_state, module.base)
        if column == self.COL_END:
            return address_text(doc_state, module.end)
        if column == self.COL_NAME:
            return module.filename
        if column == self.COL_VERSION:
            return module.version or ""
        if column == self.COL_DEBUG_FILE:
            return module.debug_file_name
        if column == self.COL_DEBUG_ID:
            return module.debug_id
        if column == self.COL_SYMBOLS:
            return "" if state is None else state[1].text
        if column == self.COL_SYMBOL_FILE:
            return "" if state is None else symbol_file_text(state[0])
        if column == self.COL_MATCHED:
            return "" if state is None else state[1].matched
        return ""

    def _sort_key(self, module: Module, state: _Symbols | None, column: int) -> object:
        if column == self.COL_BASE:
            return module.base
        if column == self.COL_END:
            return module.end
        if column == self.COL_SYMBOLS:
            return "" if state is None else state[1].text
        return self._display(module, state, column).lower()

    def _status_color(self, status: SymbolStatusText) -> object:
        tone = status.tone
        if tone is SymbolTone.GOOD:
            return self._theme.ok
        if tone is SymbolTone.WARNING:
            return self._theme.warning
        if tone is SymbolTone.BAD:
            return self._theme.crash
        return self._theme.muted

    def _tooltip(self, module: Module, state: _Symbols | None, column: int, row: int) -> str:
        if column in (self.COL_SYMBOLS, self.COL_SYMBOL_FILE, self.COL_MATCHED) and state is not None:
            return state[1].details
        lines = [module.code_file or module.filename]
        if row == self._main:
            lines.append("Main module")
        if module.code_id:
            lines.append(f"Code ID {module.code_id}")
        if module.debug_file:
            lines.append(f"Debug file {module.debug_file}")
        lines.append(f"Size {module.size:,} bytes ({module.size:#x})")
        return "\n".join(lines)


class ModuleFilterProxy(QSortFilterProxyModel):
    """Sorts modules by `SortRole`; optionally shows only those whose symbols are missing or unusable."""

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self.setSortRole(SortRole)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)
        self._lacking_only = False

    @property
    def lacking_only(self) -> bool:
        return self._lacking_only

    def set_lacking_only(self, on: bool) -> None:
        if on != self._lacking_only:
            self.beginFilterChange()
            self._lacking_only = on
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        if self._lacking_only:
            source = self.sourceModel()
            if isinstance(source, ModuleTableModel) and not source.lacks_needed_symbols(source_row):
                return False
        return super().filterAcceptsRow(source_row, source_parent)
