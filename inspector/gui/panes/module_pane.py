"""Modules pane: loaded modules with their symbol status as it streams in from the worker.

A module's context menu copies what one needs to find its symbols (debug id, code id, the
path a symbol store must have it at) and adds symbol paths.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QCheckBox, QMenu, QWidget

from inspector.core.minidump import Module
from inspector.core.symbols.supplier import code_id_path, debug_id_path
from inspector.gui.models.module_model import ModuleFilterProxy, ModuleTableModel
from inspector.gui.panes.linked_pane import LinkedPane
from inspector.gui.panes.table_view import DataTableView
from inspector.gui.session import Session
from inspector.gui.theme import Theme


class ModulePane(LinkedPane):
    #: the user asked to add a symbol folder / symbol files (the window asks which)
    add_symbol_folder_requested = Signal()
    add_symbol_files_requested = Signal()

    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(session, parent, object_name="modulePane")
        self.model = ModuleTableModel(theme, self)
        self.proxy = ModuleFilterProxy(self)
        self.proxy.setSourceModel(self.model)

        self.view = DataTableView(self, object_name="moduleView")
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # dump order until a header is clicked
        self.view.set_row_font(theme.mono, theme.bold)
        self._fit(theme)
        self.setFocusProxy(self.view)

        self.filter = self._filter_box("Filter modules", self.proxy.setFilterFixedString)
        self.lacking_only = QCheckBox("Only modules on the stacks without symbols", self)
        self.lacking_only.setToolTip(
            "Modules that hold a frame or a word the stack scan examined, and have no usable symbols"
        )
        self.lacking_only.toggled.connect(self.proxy.set_lacking_only)

        self._stack(self.view, self._side_by_side(self.filter, self.lacking_only))

        self.view.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._on_context_menu)
        session.document_changed.connect(self._on_document_changed)
        session.symbols_updated.connect(self._on_symbols_updated)
        session.analysis_finished.connect(self._on_analysis_over)
        session.analysis_cancelled.connect(self._on_analysis_over)
        session.analysis_failed.connect(self._on_analysis_over)
        session.module_selected.connect(self._on_module_selected)

    def _fit(self, theme: Theme) -> None:
        M = ModuleTableModel
        address = ("0x00007ffff7fca000", theme.mono)
        self.view.fit_columns(
            {
                M.COL_BASE: address,
                M.COL_END: address,
                M.COL_NAME: ("ld-linux-x86-64.so.2", theme.bold),
                M.COL_VERSION: ("10.0.19041.1", None),
                M.COL_DEBUG_FILE: ("ld-linux-x86-64.so.2", None),
                M.COL_DEBUG_ID: ("E565BC7E2B2FA4BE98B4040FA92F72380", theme.mono),
                M.COL_SYMBOLS: ("not needed, not on server", None),  # with symbol servers
            }
        )

    def set_theme(self, theme: Theme) -> None:
        self.model.set_theme(theme)
        self.view.set_row_font(theme.mono, theme.bold)

    def show_lacking_only(self, on: bool = True) -> None:
        self.lacking_only.setChecked(on)

    @Slot()
    def _on_document_changed(self) -> None:
        with self.syncing():
            self.model.set_document(self.session.document)

    @Slot(list)
    def _on_symbols_updated(self, module_indexes: list[int]) -> None:
        self.model.symbols_changed(module_indexes)
        if self.proxy.lacking_only:
            self.proxy.invalidateRowsFilter()

    @Slot()
    def _on_analysis_over(self, *_: object) -> None:
        self.model.refresh_status()
        if self.proxy.lacking_only:
            self.proxy.invalidateRowsFilter()

    @Slot(int)
    def _on_module_selected(self, module_index: int) -> None:
        with self.syncing():
            if module_index < 0:
                self.view.clear_current()
                return
            index = self.proxy.mapFromSource(self.model.index(module_index, 0))
            if index.isValid():
                self.view.select_row(index)

    @Slot(QModelIndex, QModelIndex)
    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        row = self.view.source_row(current)
        if row >= 0:
            self.session.select_module(row)

    # ---- context menu ----

    def module_at(self, point: QPoint) -> Module | None:
        index = self.view.indexAt(point)
        row = self.view.source_row(index) if index.isValid() else -1
        doc = self.session.document
        if doc is None or not 0 <= row < len(doc.state.modules):
            return None
        return doc.state.modules[row].module

    def context_menu(self, module: Module | None) -> QMenu:
        """The menu for `module`'s row (None: the empty part of the list)."""
        menu = QMenu(self)
        if module is not None:
            expected = debug_id_path(module)
            by_code = code_id_path(module)
            for text, value in (
                ("Copy Debug ID", module.debug_id),
                ("Copy Code ID", module.code_id),
                ("Copy Expected Symbol Path", expected),
                ("Copy Expected Symbol Path by Code ID", by_code if by_code != expected else None),
                ("Copy Module Path", module.code_file),
            ):
                action = menu.addAction(text)
                action.setEnabled(bool(value))
                if value:
                    action.setToolTip(value)
                    action.triggered.connect(lambda _=False, v=value: QGuiApplication.clipboard().setText(v))
            menu.setToolTipsVisible(True)
            menu.addSeparator()
        menu.addAction("Add Symbol Folder…", self.add_symbol_folder_requested.emit)
        menu.addAction("Add Symbol Files…", self.add_symbol_files_requested.emit)
        return menu

    @Slot(QPoint)
    def _on_context_menu(self, point: QPoint) -> None:
        self.context_menu(self.module_at(point)).popup(self.view.viewport().mapToGlobal(point))
