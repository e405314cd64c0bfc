"""Unwind pane: how the selected frame was found, as a tree of the stackwalker's steps.

Each strategy tried, with its outcome and reason; for STACK CFI the INIT and
delta rows (the row in force shaded) and every rule with its evaluation token
by token and the memory it read; for a scan every candidate word; for the
frame pointer the words read and the checks; the post-checks; and on the last
frame of a thread, why the walk stopped. Selecting a line focuses it in the
session (the stack memory pane highlights the words it read); the session's
focus (the stepper, a click on a stack word) selects the line here.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Slot
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from inspector.core.explain import TraceNode, report_number
from inspector.core.report.frame_text import frame_label
from inspector.gui.models.trace_model import TraceTreeModel
from inspector.gui.panes.linked_pane import LinkedPane
from inspector.gui.panes.tree_view import DataTreeView
from inspector.gui.session import FrameRef, Session, TraceFocus
from inspector.gui.theme import Theme


class UnwindPane(LinkedPane):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(session, parent, object_name="unwindPane")
        self._theme = theme
        self.model = TraceTreeModel(theme, self)
        self._shown: tuple[int, int] | None = None

        self.title = QLabel("No frame selected", self)
        self.title.setWordWrap(False)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.view = DataTreeView(self, object_name="unwindView")
        self.view.setModel(self.model)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.view.header()
        header.setStretchLastSection(True)
        header.resizeSection(
            0,
            QFontMetrics(theme.mono).horizontalAdvance("STACK CFI 16dd .cfa: $rsp 16 + $r13: .cfa -16 + ^")
            + 40,
        )
        self.setFocusProxy(self.view)

        self._stack(self.title, self.view)

        self.view.selectionModel().currentChanged.connect(self._on_current_changed)
        session.document_changed.connect(self._on_document_changed)
        session.frame_selected.connect(self._on_frame_selected)
        session.thread_walked.connect(self._on_thread_walked)
        session.trace_focus_changed.connect(self._on_focus_changed)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # the step column gets most of the width; results are short, tooltips hold the rest
        self.view.header().resizeSection(0, max(200, round(self.view.viewport().width() * 0.6)))

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.model.set_theme(theme)

    # ---- what is shown ----

    @property
    def shown_frame(self) -> tuple[int, int] | None:
        """(thread, frame) whose trace is shown."""
        return self._shown

    def _show(self, thread: int, frame: int) -> None:
        doc = self.session.document
        tree = doc.trace_tree(thread, frame) if doc is not None else None
        with self.syncing():
            self.model.set_tree(tree)
            self._shown = (thread, frame) if tree is not None else None
            self._expand_defaults()
        if tree is None or doc is None:
            self.title.setText("No frame selected")
            return
        stack = doc.frames(thread)
        self.title.setText(f"Frame {report_number(stack, frame)}: {frame_label(stack[frame])}")
        self.title.setToolTip(self.title.text())

    def _expand_defaults(self) -> None:
        root = self.model.root
        if root is None:
            return
        for node in root.walk():
            if node.expanded and node is not root:
                self.view.expand(self.model.index_of(node))

    @Slot()
    def _on_document_changed(self) -> None:
        with self.syncing():
            self.model.set_tree(None)
            self._shown = None
        self.title.setText("No frame selected")

    @Slot(object)
    def _on_frame_selected(self, ref: object) -> None:
        if not isinstance(ref, FrameRef):
            self._on_document_changed()
            return
        if (ref.thread, ref.frame) != self._shown:
            self._show(ref.thread, ref.frame)

    @Slot(int)
    def _on_thread_walked(self, thread: int) -> None:
        # the last frame's trace gains "why the walk stopped"
        if self._shown is not None and self._shown[0] == thread:
            self._show(*self._shown)

    # ---- focus ----

    def current_node(self) -> TraceNode | None:
        index = self.view.currentIndex()
        return self.model.node(index) if index.isValid() else None

    @Slot(object)
    def _on_focus_changed(self, focus: object) -> None:
        if not isinstance(focus, TraceFocus):
            if not self._syncing:
                with self.syncing():
                    self.view.clear_current()
            return
        if (focus.thread, focus.frame) != self._shown:
            self._show(focus.thread, focus.frame)
        index = self.model.index_at(focus.path)
        if not index.isValid():
            return
        with self.syncing():
            parent = index.parent()
            while parent.isValid():
                self.view.expand(parent)
                parent = parent.parent()
            node = self.model.node(index)
            if node is not None and node.step:
                self.view.expand(index)  # a rule shows its tokens, a scan its candidates
            self.view.select_row(index)

    @Slot(QModelIndex, QModelIndex)
    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._syncing or not current.isValid() or self._shown is None:
            return
        node = self.model.node(current)
        if node is None:
            return
        thread, frame = self._shown
        self.session.focus_trace(TraceFocus(thread, frame, node.path))
