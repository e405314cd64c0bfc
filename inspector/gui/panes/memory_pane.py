"""Stack memory pane: the selected thread's stack as a lazy hex table, with a "go to address" box.

It follows the session: a selected thread shows that thread's stack scrolled
to its stack pointer. Each walked frame's part of the stack is shaded (the
selected frame's strongest) and the words the walk used are annotated: where
each frame starts, return addresses (with the function they return into),
CFAs, saved registers, scan candidates accepted or rejected. Selecting a frame
scrolls to its part; the focused step of the unwind trace (the Unwind pane,
the stepper) highlights the words it read, and clicking such a word focuses
the step that read it. An address requested through `Session.show_address`
(or typed in the box: hex, a register name, or `rsp+0x40`) is shown wherever
the dump captured it. Double-clicking a word follows it.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QWidget,
)

from inspector.core.explain import MarkKind, report_numbers
from inspector.core.minidump import CpuContext, MemoryRegion
from inspector.core.report.frame_text import frame_label
from inspector.core.types import format_address
from inspector.core.unwind import StackFrame
from inspector.gui.document import Document, ThreadView
from inspector.gui.lookups import PointerKind, PointerTarget, describe_pointer
from inspector.gui.models.memory_model import FrameBand, HexMemoryModel, NoteKind, WordNote
from inspector.gui.panes.follow import follow_pointer
from inspector.gui.panes.linked_pane import LinkedPane
from inspector.gui.panes.table_view import DataTableView
from inspector.gui.session import FrameRef, Session, TraceFocus
from inspector.gui.settings import WORDS_PER_ROW_CHOICES
from inspector.gui.theme import Theme

#: Rows kept visible above the stack pointer when a thread is shown (the red zone below SP is often used).
ROWS_ABOVE_SP = 4
#: Re-annotate at most this often while the shown thread's frames stream in.
ANNOTATE_INTERVAL_MS = 100

_NOTE_KIND = {
    MarkKind.RETURN_ADDRESS: NoteKind.RETURN_ADDRESS,
    MarkKind.SAVED_REGISTER: NoteKind.SAVED_REGISTER,
    MarkKind.CFA: NoteKind.CFA,
    MarkKind.SCAN_ACCEPTED: NoteKind.SCAN_ACCEPTED,
    MarkKind.SCAN_REJECTED: NoteKind.SCAN_REJECTED,
}

_TERM = re.compile(r"\s*([+-]?)\s*([A-Za-z_][A-Za-z0-9_]*|0[xX][0-9a-fA-F]+|[0-9a-fA-F]+)\s*")


class AddressError(ValueError):
    pass


def parse_address(text: str, registers: dict[str, int] | None = None) -> int:
    """`0x7ffe…`, `7ffe…` (hex), a register name, or a sum such as `rsp+0x40` / `rbp - 8`."""
    registers = registers or {}
    text = text.strip()
    if not text:
        raise AddressError("type an address (hex), a register name or e.g. rsp+0x40")
    total, position, first = 0, 0, True
    while position < len(text):
        match = _TERM.match(text, position)
        if match is None or (not first and not match.group(1)):
            raise AddressError(f"cannot read {text!r} as an address")
        sign, term = match.groups()
        key = term.lower()
        if key in registers:
            value = registers[key]
        elif re.fullmatch(r"(0x)?[0-9a-f]+", key):
            value = int(key, 16)
        else:
            raise AddressError(f"{term!r} is neither a hex number nor a register of this thread")
        total += -value if sign == "-" else value
        position, first = match.end(), False
    if total < 0:
        raise AddressError(f"{text} is negative")
    return total


class _GoToEdit(QLineEdit):
    escaped = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.escaped.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class MemoryPane(LinkedPane):
    #: a sentence for the status bar ("0x10 is not in the dump's memory")
    message = Signal(str)
    words_per_row_changed = Signal(int)

    def __init__(
        self, session: Session, theme: Theme, parent: QWidget | None = None, *, words_per_row: int = 1
    ) -> None:
        super().__init__(session, parent, object_name="memoryPane")
        self._theme = theme
        self.model = HexMemoryModel(theme, self)
        self.model.set_words_per_row(words_per_row)
        self._document: Document | None = None
        self._thread: ThreadView | None = None
        self._frame: StackFrame | None = None
        self._annotate_timer = QTimer(self)
        self._annotate_timer.setSingleShot(True)
        self._annotate_timer.setInterval(ANNOTATE_INTERVAL_MS)
        self._annotate_timer.timeout.connect(self.annotate)

        self.title = QLabel("No memory shown", self)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.go_to = _GoToEdit(self)
        self.go_to.setObjectName("goToAddress")
        self.go_to.setPlaceholderText("Go to address or register (Ctrl+G)")
        self.go_to.setClearButtonEnabled(True)
        self.go_to.setFont(theme.mono)
        self.go_to.setToolTip("Hex address (0x optional), a register name, or e.g. rsp+0x40; Enter to go")
        self.go_to.returnPressed.connect(self._on_go_to)
        self.go_to.escaped.connect(self._leave_go_to)
        self.go_to.setMinimumWidth(220)
        self.words = QComboBox(self)
        for n in WORDS_PER_ROW_CHOICES:
            self.words.addItem(f"{n} word{'s' if n > 1 else ''} per row", n)
        self.words.setCurrentIndex(max(0, self.words.findData(words_per_row)))
        self.words.setToolTip("Pointer-width words shown per row")
        self.words.currentIndexChanged.connect(self._on_words_changed)
        self.error = QLabel(self)
        self.error.setObjectName("goToError")
        self.error.hide()

        self.view = DataTableView(self, object_name="memoryView")
        self.view.setAlternatingRowColors(False)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setModel(self.model)
        self.view.set_row_font(theme.mono)
        self.view.doubleClicked.connect(self._on_double_clicked)
        self.view.clicked.connect(self._on_clicked)
        self.setFocusProxy(self.view)
        self._fit()

        self._stack(self.title, self._side_by_side(self.go_to, self.words), self.error, self.view)
        self.setTabOrder(self.view, self.go_to)
        self.setTabOrder(self.go_to, self.words)

        session.document_changed.connect(self._on_document_changed)
        session.thread_selected.connect(self._on_thread_selected)
        session.address_requested.connect(self._on_address_requested)
        session.frames_added.connect(self._on_frames_added)
        session.thread_walked.connect(self._on_frames_added)
        session.frame_selected.connect(self._on_frame_selected)
        session.trace_focus_changed.connect(self._on_focus_changed)
        session.analysis_finished.connect(self._flush_annotations)
        session.analysis_cancelled.connect(self._flush_annotations)
        self._update_error_style()

    # ---- appearance ----

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.model.set_theme(theme)
        self.go_to.setFont(theme.mono)
        self.view.set_row_font(theme.mono)
        self._update_error_style()
        self._fit()

    def _update_error_style(self) -> None:
        self.error.setStyleSheet(f"color: {self._theme.crash.name()};")

    def _fit(self) -> None:
        mono = self._theme.mono
        width = self.model.pointer_width
        samples: dict[int, tuple[str, object]] = {
            HexMemoryModel.COL_ADDRESS: (format_address(0, width), mono)
        }
        for column in range(1, self.model.words_per_row + 1):
            samples[column] = ("0" * (2 * width), mono)
        samples[self.model.col_ascii] = ("W" * self.model.bytes_per_row, mono)
        self.view.fit_columns(samples, padding=16)  # type: ignore[arg-type]

    # ---- following the session ----

    @Slot()
    def _on_document_changed(self) -> None:
        doc = self.session.document
        self._document = doc
        self._thread = None
        self._frame = None
        self._show_region(None)
        self._set_error("")

    @Slot(int)
    def _on_thread_selected(self, thread_index: int) -> None:
        self._thread = self.session.selected_thread_view
        self._frame = None
        self._set_error("")
        thread = self._thread
        if thread is None:
            self._show_region(None)
            return
        self._show_region(thread.stack_region)
        sp = thread.stack_pointer
        if thread.stack_region is None:
            self.title.setText(f"Stack of thread {thread.label}: not captured in the dump")
        elif sp is not None and self.model.row_for_address(sp) is not None:
            self._select(sp, rows_above=ROWS_ABOVE_SP)

    def _show_region(self, region: MemoryRegion | None) -> None:
        doc = self._document
        width = doc.state.pointer_width if doc is not None else 8
        describe = self.describe_pointer if doc is not None else None
        self.model.set_region(region, pointer_width=width, describe_pointer=describe)
        self._fit()
        self.model.set_notes("registers", self._register_notes(region))
        self.title.setText(self._title(region))
        self.annotate()

    # ---- the walk's marks on the stack ----

    def _shown_thread_frames(self) -> list[StackFrame]:
        doc = self.session.document
        thread = self._thread
        if doc is None or thread is None or self.model.region is not thread.stack_region:
            return []
        return doc.frames(thread.index)

    @Slot()
    def annotate(self) -> None:
        """Shade the frames' parts of the shown stack and note the words the walk used."""
        self._annotate_timer.stop()
        region = self.model.region
        frames = self._shown_thread_frames()
        doc = self.session.document
        if region is None or not frames or doc is None or self._thread is None:
            self.model.set_notes("trace", [])
            self.model.set_frame_bands([])
            return
        numbers = report_numbers(frames)  # the report's numbers, as the Frames pane shows them
        bands = [
            FrameBand(start, end, index, f"frame {numbers[index]}")
            for index, start, end in doc.frame_extents(self._thread.index, region.end)
        ]
        notes = [
            WordNote(
                band.start,
                f"── frame {numbers[band.frame_index]}: {frame_label(frames[band.frame_index])}",
                NoteKind.FRAME_BOUNDARY,
            )
            for band in bands
        ]
        notes.extend(
            WordNote(mark.address, mark.text, _NOTE_KIND[mark.kind])
            for mark in doc.stack_marks(self._thread.index)
        )
        self.model.set_notes("trace", notes)
        ref = self.session.selected_frame
        selected = ref.frame if ref is not None and ref.thread == self._thread.index else None
        self.model.set_frame_bands(bands, selected)

    @Slot(int)
    def _on_frames_added(self, thread: int, *_: object) -> None:
        if self._thread is not None and thread == self._thread.index and not self._annotate_timer.isActive():
            self._annotate_timer.start()

    @Slot()
    def _flush_annotations(self) -> None:
        if self._annotate_timer.isActive():
            self.annotate()

    @Slot(object)
    def _on_frame_selected(self, ref: object) -> None:
        self._flush_annotations()
        doc = self.session.document
        thread = self._thread
        if not isinstance(ref, FrameRef) or doc is None or thread is None or ref.thread != thread.index:
            return
        frames = doc.frames(thread.index)
        if not 0 <= ref.frame < len(frames):
            return
        self._frame = frames[ref.frame]
        if self.model.region is not thread.stack_region:
            self._show_region(thread.stack_region)
        else:
            self.model.set_notes("registers", self._register_notes(self.model.region))
        bands = [b for b in self.model.frame_bands if b.frame_index == ref.frame]
        self.model.set_frame_bands(self.model.frame_bands, ref.frame)
        sp = self._frame.context.stack_pointer
        if sp is not None and self.model.row_for_address(sp) is not None:
            self._select(sp, rows_above=1)
            if bands:  # show the whole band when it fits
                last = self.model.index_for_address(max(bands[0].start, bands[0].end - 1))
                if last.isValid():
                    self.view.scrollTo(last, QAbstractItemView.ScrollHint.EnsureVisible)
                    self.view.scrollTo(
                        self.model.index_for_address(sp), QAbstractItemView.ScrollHint.EnsureVisible
                    )

    @Slot(object)
    def _on_focus_changed(self, focus: object) -> None:
        node = self.session.focused_node() if isinstance(focus, TraceFocus) else None
        reads = node.all_reads() if node is not None else ()
        region = self.model.region
        words = [a for a in reads if region is not None and region.contains(a)]
        self.model.set_notes(
            "focus", [WordNote(a, "read by the focused step", NoteKind.RULE_READ) for a in words]
        )
        if words:
            self._select(words[-1])

    def focused_words(self) -> list[int]:
        """The stack words highlighted as read by the focused trace step."""
        return [n.address for n in self.model.notes("focus")]

    @Slot(QModelIndex)
    def _on_clicked(self, index: QModelIndex) -> None:
        address = self.model.word_address(index.row(), index.column())
        if address is not None:
            self.session.focus_trace_word(address)

    def describe_pointer(self, value: int) -> PointerTarget | None:
        """As `lookups.describe_pointer`, but a pointer into the shown thread's own stack says where
        it points relative to the stack pointer (`rsp+0x28`), which is what frame reasoning needs."""
        doc = self._document
        if doc is None:
            return None
        target = describe_pointer(doc, value)
        thread = self._thread
        if (
            target is not None
            and target.kind is PointerKind.STACK
            and thread is not None
            and target.thread_index == thread.index
            and thread.context is not None
        ):
            sp = thread.stack_pointer
            if sp is not None:
                name = thread.context.register_set.stack_pointer
                offset = value - sp
                where = f"{name}{'+' if offset >= 0 else '-'}{abs(offset):#x}" if offset else name
                return PointerTarget(PointerKind.STACK, f"{where} (this stack)", thread_index=thread.index)
        return target

    def _title(self, region: MemoryRegion | None) -> str:
        if region is None:
            return "No memory shown"
        width = self.model.pointer_width
        span = f"{format_address(region.base, width)} – {format_address(region.end, width)}"
        size = f"{region.size:,} bytes"
        thread = self._thread
        if thread is not None and thread.stack_region is region:
            return f"Stack of thread {thread.label}: {span} ({size})"
        owner = self._document.thread_with_stack_at(region.base) if self._document is not None else None
        if owner is not None:
            return f"Stack of thread {owner.label}: {span} ({size})"
        return f"Memory region {span} ({size})"

    def _context(self) -> CpuContext | None:
        """The registers the pane goes by: the selected frame's (a caller's, as unwound), else frame 0's."""
        thread = self._thread
        if thread is None or thread.context is None:
            return None
        return self._frame.context if self._frame is not None else thread.context

    def _register_notes(self, region: MemoryRegion | None) -> list[WordNote]:
        context = self._context()
        if region is None or context is None:
            return []
        sp_name = context.register_set.stack_pointer
        notes = []
        for name, value in context.valid_registers():
            if region.contains(value):
                kind = NoteKind.STACK_POINTER if name == sp_name else NoteKind.REGISTER
                notes.append(WordNote(value, f"← {name}", kind))
        return notes

    # ---- going to addresses ----

    def registers(self) -> dict[str, int]:
        """The register values a typed address may use (`rsp+0x40`): the same frame's as the notes."""
        context = self._context()
        if context is None:
            return {}
        values = {name.lower(): value for name, value in context.valid_registers()}
        for alias, canonical in context.register_set.aliases.items():
            if canonical in values:
                values[alias] = values[canonical]
        return values

    @Slot(object)
    def _on_address_requested(self, address: object) -> None:
        if isinstance(address, int):
            self.show_address(address)

    def show_address(self, address: int) -> bool:
        """Show `address`: in the current region, else in whichever region of the dump holds it."""
        self._set_error("")
        if self.model.row_for_address(address) is None:
            doc = self._document
            region = doc.state.memory.region_for(address) if doc is not None else None
            if region is None:
                width = self.model.pointer_width
                self._set_error(f"{format_address(address, width)} is not in the memory captured in the dump")
                return False
            self._show_region(region)
        self._select(address)
        return True

    def _select(self, address: int, rows_above: int | None = None) -> None:
        index = self.model.index_for_address(address)
        if not index.isValid():
            return
        self.view.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        if rows_above is None:
            self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        else:
            top = self.model.index(max(0, index.row() - rows_above), 0)
            self.view.scrollTo(top, QAbstractItemView.ScrollHint.PositionAtTop)

    @Slot()
    def _on_go_to(self) -> None:
        try:
            address = parse_address(self.go_to.text(), self.registers())
        except AddressError as exc:
            self._set_error(str(exc))
            return
        if self.show_address(address):
            self.view.setFocus(Qt.FocusReason.OtherFocusReason)

    @Slot()
    def _leave_go_to(self) -> None:
        self._set_error("")
        self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_go_to(self) -> None:
        self.go_to.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.go_to.selectAll()

    def _set_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))
        if text:
            self.message.emit(text)

    @Slot(QModelIndex)
    def _on_double_clicked(self, index: QModelIndex) -> None:
        address = self.model.word_address(index.row(), index.column())
        value = None if address is None else self.model.word_value(address)
        if value is None:
            return
        followed = follow_pointer(self.session, value)
        if followed is not None:
            self.message.emit(followed)

    @Slot(int)
    def _on_words_changed(self, combo_index: int) -> None:
        words = int(self.words.itemData(combo_index))
        current = self.view.currentIndex()
        address = self.model.word_address(current.row(), current.column()) if current.isValid() else None
        self.model.set_words_per_row(words)
        self._fit()
        if address is not None:
            self._select(address)
        self.words_per_row_changed.emit(words)
