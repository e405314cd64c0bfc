"""`ThreadTableModel`: one row per thread of the dump."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.core.minidump import basename
from inspector.core.report.frame_text import frame_label
from inspector.gui.document import Document, ThreadView
from inspector.gui.lookups import address_text, describe_code_address
from inspector.gui.models.headered_model import HeaderedTableModel
from inspector.gui.models.roles import AddressRole, IndexRole, ItemRole, SortRole
from inspector.gui.theme import Theme

_ROLE = Qt.ItemDataRole


class ThreadTableModel(HeaderedTableModel):
    COL_INDEX = 0
    COL_ID = 1
    COL_NAME = 2
    COL_FRAMES = 3
    COL_TOP = 4
    HEADERS = ("#", "TID", "Name", "Frames", "Top frame")
    TOOLTIPS = (
        "Index in the dump's thread list",
        "Thread id given by the operating system",
        "Thread name recorded in the dump",
        "Frames found by the stackwalker",
        "The innermost function of the first frame (before the walk: the instruction pointer's module)",
    )

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._document: Document | None = None
        self._threads: tuple[ThreadView, ...] = ()

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._all_changed()

    def set_document(self, document: Document | None) -> None:
        self.beginResetModel()
        self._document = document
        self._threads = tuple(document.threads()) if document is not None else ()
        self.endResetModel()

    def frames_changed(self, thread_index: int) -> None:
        """The document holds more frames of a thread (or its walk ended): repaint its count and top frame."""
        if 0 <= thread_index < len(self._threads):
            self.dataChanged.emit(
                self.index(thread_index, self.COL_FRAMES), self.index(thread_index, self.COL_TOP)
            )

    def _frame_count(self, thread_index: int) -> int | None:
        """Frames walked so far; None until the stackwalker reaches the thread."""
        doc = self._document
        if doc is None:
            return None
        frames = doc.frames(thread_index)
        return len(frames) if frames or doc.is_walked(thread_index) else None

    def overflow(self, thread_index: int) -> str | None:
        """Why the crashing thread's walked stack is a stack overflow (`explain.triage`), else None."""
        return self._document.overflow_reason(thread_index) if self._document is not None else None

    def _top_function(self, thread_index: int) -> str | None:
        """`module!function` of the innermost (maybe inlined) function of the first frame, once walked."""
        frames = self._document.frames(thread_index) if self._document is not None else []
        if not frames:
            return None
        first = frames[0]
        name = first.inlines[0].function if first.inlines else first.function_name
        if name is None:
            return frame_label(first)
        return f"{basename(first.module.code_file)}!{name}" if first.module is not None else name

    # ---- HeaderedTableModel ----

    def _row_count(self) -> int:
        return len(self._threads)

    def _cell(self, row: int, column: int, role: int) -> object:
        thread = self._threads[row]
        if role == _ROLE.DisplayRole:
            return self._display(thread, column)
        if role == SortRole:
            return self._sort_key(thread, column)
        if role == ItemRole:
            return thread
        if role == IndexRole:
            return thread.index
        if role == AddressRole and column == self.COL_TOP:
            return thread.instruction_pointer
        if role == _ROLE.ToolTipRole:
            return self._tooltip(thread, column)
        if role == _ROLE.FontRole:
            if column == self.COL_TOP:
                return self._theme.mono_bold if thread.crashing else self._theme.mono
            return self._theme.bold if thread.crashing else None
        if role == _ROLE.ForegroundRole:
            if thread.crashing and column in (self.COL_INDEX, self.COL_NAME):
                return self._theme.crash
            if thread.context is None:
                return self._theme.muted
            return None
        if role == _ROLE.TextAlignmentRole and column in (self.COL_INDEX, self.COL_ID, self.COL_FRAMES):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == _ROLE.AccessibleTextRole:
            text = self._display(thread, column)
            return f"{text}, crashing thread" if thread.crashing and column == self.COL_INDEX else text
        return None

    def _display(self, thread: ThreadView, column: int) -> str:
        if column == self.COL_INDEX:
            return f"⚡ {thread.index}" if thread.crashing else str(thread.index)
        if column == self.COL_ID:
            return str(thread.thread_id)
        if column == self.COL_NAME:
            return thread.name or ""
        if column == self.COL_FRAMES:
            count = self._frame_count(thread.index)
            if count is not None and self.overflow(thread.index) is not None:
                return f"{count:,} ⚠ overflow"
            return "" if count is None else str(count)
        if column == self.COL_TOP:
            top = self._top_function(thread.index)
            if top is not None:
                return top
            ip = thread.instruction_pointer
            if ip is None:
                return "(no registers)"
            assert self._document is not None
            return describe_code_address(self._document.state, ip)
        return ""

    def _sort_key(self, thread: ThreadView, column: int) -> object:
        if column == self.COL_INDEX:
            return thread.index
        if column == self.COL_ID:
            return thread.thread_id
        if column == self.COL_NAME:
            return (thread.name or "").lower()
        if column == self.COL_FRAMES:
            count = self._frame_count(thread.index)
            return -1 if count is None else count
        return self._display(thread, column)

    def _tooltip(self, thread: ThreadView, column: int) -> str | None:
        lines = [f"Thread {thread.label}, id {thread.thread_id} ({thread.thread_id:#x})"]
        if thread.crashing:
            assert self._document is not None
            crash = self._document.state.crash
            lines.append(f"Crashing thread: {crash.reason if crash is not None else 'requested the dump'}")
        lines.append(f"Registers from the {thread.context_source}")
        if column == self.COL_FRAMES and self._frame_count(thread.index) is None:
            lines.append("Not walked yet")
        overflow = self.overflow(thread.index) if column == self.COL_FRAMES else None
        if overflow is not None:
            lines.append(f"Stack overflow: {overflow}")
        top = self._top_function(thread.index) if column == self.COL_TOP else None
        if top is not None:
            lines.append(f"First frame: {top}")
        ip = thread.instruction_pointer
        if column == self.COL_TOP and ip is not None:
            assert self._document is not None
            state = self._document.state
            lines.append(f"Instruction pointer {address_text(state, ip)}: {describe_code_address(state, ip)}")
        return "\n".join(lines)
