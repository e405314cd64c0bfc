"""Registers pane: the selected frame's registers, whether each is known, where it came from, what changed.

With no frame walked yet it shows the thread's starting registers. While
the stepper (or the Unwind pane) focuses a decision of the walk, it shows
the caller registers known at that point; the rest read "not yet".
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Slot
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from inspector.core.explain import (
    RegisterState,
    changed_registers,
    register_provenance,
    report_number,
)
from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.models.roles import AddressRole
from inspector.gui.panes.follow import follow_pointer
from inspector.gui.panes.linked_pane import LinkedPane
from inspector.gui.panes.table_view import DataTableView
from inspector.gui.session import FrameRef, Session, TraceFocus
from inspector.gui.theme import Theme


class RegisterPane(LinkedPane):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(session, parent, object_name="registerPane")
        self.model = RegisterTableModel(theme, self)
        self.title = QLabel("No thread selected", self)
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.view = DataTableView(self, object_name="registerView")
        self.view.setModel(self.model)
        self.view.set_row_font(theme.mono)
        self.view.doubleClicked.connect(self._on_double_clicked)
        self._fit(theme)
        self.setFocusProxy(self.view)

        self._stack(self.title, self.view)

        session.document_changed.connect(self._on_document_changed)
        session.thread_selected.connect(self._on_thread_selected)
        session.frame_selected.connect(self._on_frame_selected)
        session.trace_focus_changed.connect(self._on_focus_changed)
        session.register_requested.connect(self.select_register)

    def _fit(self, theme: Theme) -> None:
        M = RegisterTableModel
        self.view.fit_columns(
            {
                M.COL_NAME: ("eflags", theme.mono),
                M.COL_VALUE: ("0x00007ffff7e5af16", theme.mono),
                M.COL_STATE: ("unknown", None),  # the longest of known / not yet / unknown
                M.COL_SOURCE: ("context (exception record)", None),
            },
            padding=10,
        )

    def set_theme(self, theme: Theme) -> None:
        self.model.set_theme(theme)
        self.view.set_row_font(theme.mono)

    @Slot()
    def _on_document_changed(self) -> None:
        self.model.set_context(None, None)
        self.title.setText("No thread selected")

    @Slot(int)
    def _on_thread_selected(self, thread_index: int) -> None:
        doc = self.session.document
        thread = self.session.selected_thread_view
        if doc is None or thread is None:
            self.model.set_context(None, None)
            self.title.setText("No thread selected")
            return
        self.model.set_context(doc, thread.context)
        if thread.context is None:
            self.title.setText(f"Thread {thread.label}: the dump has no readable registers for it")
        else:
            self.title.setText(f"Thread {thread.label} — registers from the {thread.context_source}")

    @Slot(object)
    def _on_frame_selected(self, ref: object) -> None:
        self.show_frame(ref if isinstance(ref, FrameRef) else None, None)

    @Slot(object)
    def _on_focus_changed(self, focus: object) -> None:
        ref = self.session.selected_frame
        node = self.session.focused_node() if isinstance(focus, TraceFocus) else None
        known = node.registers if node is not None and node.step else None
        self.show_frame(ref, known)

    def show_frame(self, ref: FrameRef | None, known: RegisterState | None) -> None:
        """Show frame `ref`'s registers; `known`: the register state at a decision (stepping)."""
        doc = self.session.document
        thread = self.session.selected_thread_view
        frames = doc.frames(ref.thread) if doc is not None and ref is not None else []
        if doc is None or ref is None or thread is None or not 0 <= ref.frame < len(frames):
            self._on_thread_selected(self.session.selected_thread)
            return
        frame = frames[ref.frame]
        callee = frames[ref.frame - 1] if ref.frame > 0 else None
        provenance = register_provenance(frame, callee, context_source=thread.context_source)
        changed = changed_registers(frame, callee)
        self.model.set_context(
            doc,
            frame.context,
            provenance=provenance,
            changed=changed,
            known_so_far=known,
        )
        where = f"Frame {report_number(frames, ref.frame)} of thread {thread.label}"
        if known is not None:
            pending = f", {len(known.pending)} pending" if known.pending else ""
            self.title.setText(
                f"{where}: the caller registers known at this step ({len(known.known)}{pending})"
            )
        elif callee is None:
            self.title.setText(f"{where}: registers from the {thread.context_source}")
        else:
            callee_number = report_number(frames, ref.frame - 1)
            self.title.setText(f"{where}: {len(changed)} changed from frame {callee_number} (highlighted)")

    @Slot(str)
    def select_register(self, name: str) -> bool:
        """Select register `name` (or the register it is an alias of); False when it is not listed."""
        context = self.model.context
        canonical = None if context is None else context.canonical(name)
        row = self.model.row_of(canonical or name)
        if row is None:
            return False
        self.view.select_row(self.model.index(row, RegisterTableModel.COL_NAME))
        return True

    @Slot(QModelIndex)
    def _on_double_clicked(self, index: QModelIndex) -> None:
        address = index.siblingAtColumn(RegisterTableModel.COL_VALUE).data(AddressRole)
        if isinstance(address, int):
            follow_pointer(self.session, address)
