"""Frames pane: the selected thread's stack as a tree (inline frames under their frame), filterable, copyable.

Frames appear as the stackwalker reports them. Selecting a row selects that
frame (or inline frame) in the session; the session's frame selection selects
the row. Ctrl+C (or the context menu) copies the selected frames, or the whole
stack, in rust-minidump's human-report layout.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, QSortFilterProxyModel, Qt, Slot
from PySide6.QtGui import QFontMetrics, QGuiApplication, QKeyEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMenu,
    QSizePolicy,
    QWidget,
)

from inspector.core.explain.triage import normal_end
from inspector.core.types import format_address
from inspector.core.unwind import StackFrame
from inspector.gui.document import Document
from inspector.gui.models.frame_model import FrameTreeModel, module_text, source_text, stack_text
from inspector.gui.panes.linked_pane import LinkedPane
from inspector.gui.panes.name_delegate import ElidingDelegate, ShorteningDelegate
from inspector.gui.panes.tree_view import DataTreeView
from inspector.gui.session import FrameRef, Session
from inspector.gui.theme import Theme


class FrameTreeView(DataTreeView):
    """A tree view whose Ctrl+C copies through the pane."""

    def __init__(self, pane: FramePane) -> None:
        super().__init__(pane, object_name="frameView")
        self._pane = pane

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self._pane.copy_selected()
            event.accept()
            return
        super().keyPressEvent(event)


def thread_header(doc: Document, thread_index: int) -> str | None:
    """A copied stack's first line, as the human report heads a thread (None for no such thread)."""
    thread = doc.thread(thread_index)
    if thread is None:
        return None
    status = " (crashed)" if thread.crashing and doc.state.crash is not None else ""
    return f"Thread {thread.index} {thread.name or ''}{status} - tid: {thread.thread_id}"


class FramePane(LinkedPane):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(session, parent, object_name="framePane")
        self._theme = theme
        self.model = FrameTreeModel(theme, self)
        self.model.module_has_functions = self._module_has_functions
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setRecursiveFilteringEnabled(True)
        self.proxy.setAutoAcceptChildRows(True)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)

        self.title = QLabel("No thread selected", self)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.filter = self._filter_box("Filter frames (function, module, file)", self._on_filter)
        self.filter.setObjectName("frameFilter")

        self.view = FrameTreeView(self)
        self.view.setModel(self.proxy)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._on_context_menu)
        # Function: the shortest readable form, cut at the end; a file name keeps its line number
        self.view.setItemDelegateForColumn(FrameTreeModel.COL_FUNCTION, ShorteningDelegate(self.view))
        self._source_delegate = ElidingDelegate(Qt.TextElideMode.ElideMiddle, self.view)
        self.view.setItemDelegateForColumn(FrameTreeModel.COL_SOURCE, self._source_delegate)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(FrameTreeModel.COL_FUNCTION, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(24)
        self.view.setIndentation(14)  # only a collapsed recursion's rows are children: room for its arrow
        self._fit()
        self.setFocusProxy(self.view)

        self._stack(self.title, self.view, self.filter)
        self.setTabOrder(self.view, self.filter)

        self.view.selectionModel().currentChanged.connect(self._on_current_changed)
        session.document_changed.connect(self._on_document_changed)
        session.thread_selected.connect(self._on_thread_selected)
        session.frames_added.connect(self._on_frames_added)
        session.thread_walked.connect(self._on_thread_walked)
        session.frame_selected.connect(self._on_frame_selected)
        session.symbols_updated.connect(self._on_symbols_updated)

    def _module_has_functions(self, frame: StackFrame) -> bool:
        """False when the frame's module has symbols with no FUNC record (PUBLIC names only)."""
        doc = self.session.document
        index = frame.module_index
        if doc is None or index is None or not 0 <= index < len(doc.symbols):
            return True
        return doc.symbols[index].functions != 0

    @Slot(list)
    def _on_symbols_updated(self, _modules: list[int]) -> None:
        self.model.symbols_changed()

    def _fit(self) -> None:
        """Narrow columns sized to what they hold; the Function column takes the rest of the width."""
        header = self.view.header()
        normal = QFontMetrics(self.font())
        mono = QFontMetrics(self._theme.mono)
        frames = self.model.frames[:200]  # enough to see the thread's modules and files
        modules = [module_text(f) for f in frames]
        sources = [source_text(f.source_file, f.source_line) for f in frames]
        widths = {
            # the number, the trust badge and (with a collapsed recursion) the branch arrows
            FrameTreeModel.COL_NUMBER: mono.horizontalAdvance("9" * max(2, len(str(len(self.model.rows)))))
            + 16
            + 14
            + (self.view.indentation() if self.model.groups else 0),
            FrameTreeModel.COL_OFFSET: mono.horizontalAdvance("+ 0x1ed3") + 12,
            FrameTreeModel.COL_SOURCE: _fitted(normal, sources, "main.c:12", 170),
            FrameTreeModel.COL_MODULE: _fitted(normal, modules, "libc.so.6", 130),
            FrameTreeModel.COL_TRUST: normal.horizontalAdvance("CFI + scan") + 14,
        }
        for column, width in widths.items():
            header.resizeSection(column, width)
        self.view.setRootIsDecorated(bool(self.model.groups))
        self._show_columns_for_width()

    #: narrower than this, the "Found by" column is hidden: the badge beside the number (its
    #: colour, its letter, its tooltip) says the same, and the function names need the room
    TRUST_COLUMN_MIN_WIDTH = 760

    def _show_columns_for_width(self) -> None:
        self.view.setColumnHidden(FrameTreeModel.COL_TRUST, self.width() < self.TRUST_COLUMN_MIN_WIDTH)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._show_columns_for_width()

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.model.set_theme(theme)

    # ---- following the session ----

    @Slot()
    def _on_document_changed(self) -> None:
        self._show_thread(-1)

    @Slot(int)
    def _on_thread_selected(self, thread_index: int) -> None:
        self._show_thread(thread_index)

    def _show_thread(self, thread_index: int) -> None:
        doc = self.session.document
        with self.syncing():
            frames = doc.frames(thread_index) if doc is not None and thread_index >= 0 else []
            width = doc.state.pointer_width if doc is not None else 8
            self.model.set_frames(thread_index, frames, pointer_width=width)
        self._fit()
        self._update_title()

    @Slot(int, int, int)
    def _on_frames_added(self, thread_index: int, first: int, count: int) -> None:
        if thread_index != self.model.thread_index:
            return
        doc = self.session.document
        if doc is None:
            return
        frames = doc.frames(thread_index)
        have = len(self.model.frames)
        groups = len(self.model.groups)
        with self.syncing():
            self.model.append_frames(frames[have:])
            # a run of equal frames collapsing moves rows: keep the session's selection shown
            self._on_frame_selected(self.session.selected_frame)
        if have == 0 or len(self.model.groups) != groups or len(str(len(self.model.rows))) > len(str(have)):
            self._fit()
        self._update_title()

    @Slot(int)
    def _on_thread_walked(self, thread_index: int) -> None:
        if thread_index == self.model.thread_index:
            self._update_title()

    def _update_title(self) -> None:
        doc = self.session.document
        thread_index = self.model.thread_index
        thread = doc.thread(thread_index) if doc is not None else None
        if doc is None or thread is None:
            self.title.setText("No thread selected")
            return
        frames = len(self.model.frames)
        inlines = sum(len(f.inlines) for f in self.model.frames)
        count = f"{frames} frame{'s' if frames != 1 else ''}" + (f" + {inlines} inlined" if inlines else "")
        termination = doc.termination(thread_index)
        if termination is not None and normal_end(self.model.frames, termination):
            # the walk reached where the thread started: the stack's normal end, said plainly
            bottom = self.model.frames[-1].function_name
            self.title.setText(f"Thread {thread.label}: {count}, down to {bottom}")
            self.title.setToolTip(
                f"The walk ended at {bottom}, where the thread started ({termination.message})"
            )
        elif termination is not None:
            self.title.setText(f"Thread {thread.label}: {count}; walk stopped: {termination.message}")
            self.title.setToolTip(termination.reason.value)
        elif doc.is_walked(thread_index):
            self.title.setText(f"Thread {thread.label}: {count}")
        elif frames:
            self.title.setText(f"Thread {thread.label}: {count} so far, walking…")
        else:
            self.title.setText(f"Thread {thread.label}: not walked yet")

    @Slot(object)
    def _on_frame_selected(self, ref: object) -> None:
        with self.syncing():  # (scrolling to a frame inside a collapsed recursion expands it)
            if not isinstance(ref, FrameRef) or ref.thread != self.model.thread_index:
                self.view.clear_current()
                return
            index = self.proxy.mapFromSource(self.model.frame_index(ref.frame, ref.inline))
            if not index.isValid():
                return  # filtered out or not arrived yet
            self.view.select_row(index)

    @Slot(QModelIndex, QModelIndex)
    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        ref = self.model.frame_ref_of(self.proxy.mapToSource(current))
        if ref is not None and self.model.thread_index >= 0:
            self.session.select_frame(FrameRef(self.model.thread_index, ref[0], ref[1]))

    @Slot(str)
    def _on_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        if text:  # matches inside a collapsed recursion are shown
            self.view.expandAll()

    # ---- copying ----

    def _header(self) -> str | None:
        doc = self.session.document
        return None if doc is None else thread_header(doc, self.model.thread_index)

    def selected_frames(self) -> set[int]:
        rows: set[int] = set()
        for index in self.view.selectionModel().selectedRows():
            ref = self.model.frame_ref_of(self.proxy.mapToSource(index))
            if ref is not None:
                rows.add(ref[0])
        return rows

    def copy_selected(self) -> str:
        """Copy the selected frames (with their inline frames) as the human report prints them."""
        rows = self.selected_frames()
        if not rows:
            return self.copy_stack()
        text = stack_text(self.model.frames, only=rows)
        QGuiApplication.clipboard().setText(text)
        return text

    def copy_stack(self) -> str:
        """Copy the whole stack with the thread's header line, exactly as the human report prints it."""
        text = stack_text(self.model.frames, header=self._header())
        QGuiApplication.clipboard().setText(text)
        return text

    @Slot(QPoint)
    def _on_context_menu(self, point: QPoint) -> None:
        menu = QMenu(self)
        copy = menu.addAction("Copy Selected Frames", self.copy_selected)
        copy.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        menu.addAction("Copy Whole Stack", self.copy_stack)
        index = self.view.indexAt(point)
        ref = self.model.frame_ref_of(self.proxy.mapToSource(index)) if index.isValid() else None
        if ref is not None:
            frame = self.model.frames[ref[0]]
            doc = self.session.document
            width = doc.state.pointer_width if doc is not None else 8
            address = format_address(frame.instruction, width)
            menu.addAction(
                f"Copy Instruction Address ({address})",
                lambda: QGuiApplication.clipboard().setText(address),
            )
        if self.model.groups:
            menu.addSeparator()
            menu.addAction("Expand Recursions", self.view.expandAll)
            menu.addAction("Collapse Recursions", self.view.collapseAll)
        menu.popup(self.view.viewport().mapToGlobal(point))


def _fitted(metrics: QFontMetrics, texts: list[str], least: str, most: int) -> int:
    """The width of the widest text (at least `least`'s, at most `most` pixels), with the cell's margins."""
    width = max((metrics.horizontalAdvance(t) for t in texts), default=0)
    return min(max(width, metrics.horizontalAdvance(least)) + 14, most)
