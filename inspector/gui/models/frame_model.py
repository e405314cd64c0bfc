"""`FrameTreeModel`: the selected thread's frames as a tree, inline frames as children of their frame.

Frames stream in: `append_frames` inserts rows (`beginInsertRows`) as the
stackwalker reports them. Top-level rows are the physical frames, innermost
first; the children of a frame are the functions inlined at its instruction,
innermost first like the stack itself (the first child is where the instruction
is; each next one called the child above it; the physical frame called the
last). rust-minidump prints the same inline frames in the same order before their
physical frame; the tooltips give that numbering too.

`stack_text` renders frames in rust-minidump's human-report layout, for copying.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap

from inspector.core.explain import describe_trust
from inspector.core.minidump import basename
from inspector.core.report.frame_text import frame_label, frame_lines
from inspector.core.types import format_address
from inspector.core.unwind import INLINE_DESCRIPTION, FrameTrust, InlineFrame, StackFrame, Termination
from inspector.gui.models.headered_model import HeaderedTreeModel
from inspector.gui.models.roles import AddressRole, ItemRole
from inspector.gui.theme import Theme

_Index = QModelIndex | QPersistentModelIndex
_ROLE = Qt.ItemDataRole

#: The short "Found by" text and the badge letter of each trust level (None: an inline frame).
TRUST_LABELS: dict[FrameTrust | None, tuple[str, str]] = {
    FrameTrust.CONTEXT: ("context", "C"),
    FrameTrust.PREWALKED: ("prewalked", "W"),
    FrameTrust.CFI: ("CFI", "F"),
    FrameTrust.CFI_SCAN: ("CFI + scan", "F"),
    FrameTrust.FRAME_POINTER: ("frame pointer", "P"),
    FrameTrust.SCAN: ("stack scan", "S"),
    FrameTrust.LEAF: ("leaf", "L"),
    FrameTrust.NONE: ("unknown", "?"),
    None: ("inlined", "I"),
}


def trust_color(trust: FrameTrust | None, theme: Theme) -> QColor:
    """Green for what can be trusted, amber for heuristics, red for scanning."""
    if trust is None:
        return theme.inline
    if trust in (FrameTrust.CONTEXT, FrameTrust.PREWALKED):
        return theme.code_pointer
    if trust is FrameTrust.CFI:
        return theme.ok
    if trust in (FrameTrust.CFI_SCAN, FrameTrust.FRAME_POINTER, FrameTrust.LEAF):
        return theme.warning
    return theme.crash


def trust_icon(trust: FrameTrust | None, theme: Theme, size: int = 16) -> QIcon:
    """A round badge with the trust's letter, in the trust's colour."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(trust_color(trust, theme))
    painter.drawEllipse(QRectF(1, 1, size - 2, size - 2))
    font = QFont(theme.bold)
    font.setPixelSize(round(size * 0.62))
    painter.setFont(font)
    painter.setPen(QColor("#ffffff"))
    painter.drawText(QRectF(0, 0, size, size), Qt.AlignmentFlag.AlignCenter, TRUST_LABELS[trust][1])
    painter.end()
    return QIcon(pixmap)


def function_text(frame: StackFrame) -> str:
    """`render_tile + 0x68`, or `libc.so.6 + 0x85f16` without symbols, or the bare address."""
    if frame.function_name is not None and frame.function_offset is not None:
        return f"{frame.function_name} + {frame.function_offset:#x}"
    if frame.function_name is not None:
        return frame.function_name
    if frame.module is not None and frame.module_offset is not None:
        return f"{basename(frame.module.code_file)} + {frame.module_offset:#x}"
    return f"{frame.instruction:#x}"


def source_text(file: str | None, line: int | None) -> str:
    if file is None:
        return ""
    return f"{basename(file)}:{line}" if line is not None else basename(file)


def human_number(frame_index: int, frames: Sequence[StackFrame], inline_depth: int = 0) -> int:
    """rust-minidump's frame number: inline frames count, innermost first, before their frame."""
    number = sum(len(f.inlines) + 1 for f in frames[:frame_index])
    inlines = len(frames[frame_index].inlines) if frame_index < len(frames) else 0
    return number + (inline_depth - 1 if inline_depth else inlines)


def stack_text(
    frames: Sequence[StackFrame],
    *,
    header: str | None = None,
    only: set[int] | None = None,
    termination: Termination | None = None,
) -> str:
    """Frames as rust-minidump's human report prints them (`only`: these physical frames)."""
    out = [header] if header else []
    number = 0
    for frame in frames:
        # frames left out still take their numbers, as in the whole report
        lines, number = frame_lines(frame, number)
        if only is None or frame.index in only:
            out.extend(lines)
    if only is None and termination is not None:
        out.append(f"    Walk stopped: {termination.message}")
    return "\n".join(out) + "\n"


class FrameTreeModel(HeaderedTreeModel):
    COL_NUMBER = 0
    COL_TRUST = 1
    COL_MODULE = 2
    COL_FUNCTION = 3
    COL_SOURCE = 4
    HEADERS = ("#", "Found by", "Module", "Function", "Source")
    TOOLTIPS = (
        "Frame number (inline frames: where rust-minidump's report numbers them)",
        "How the frame was found, and so how far it can be trusted",
        "Module holding the instruction",
        "Function and offset of the instruction in it",
        "Source file and line",
    )

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._icons: dict[FrameTrust | None, QIcon] = {}
        self._thread = -1
        self._frames: list[StackFrame] = []
        self._pointer_width = 8

    # ---- configuration ----

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._icons = {}
        self._all_changed()

    @property
    def thread_index(self) -> int:
        return self._thread

    @property
    def frames(self) -> list[StackFrame]:
        return self._frames

    def set_frames(self, thread: int, frames: Sequence[StackFrame], *, pointer_width: int = 8) -> None:
        """Show `thread`'s frames (those walked so far)."""
        self.beginResetModel()
        self._thread = thread
        self._frames = list(frames)
        self._pointer_width = pointer_width
        self.endResetModel()

    def append_frames(self, frames: Sequence[StackFrame]) -> None:
        """More frames of the shown thread arrived."""
        if not frames:
            return
        first = len(self._frames)
        self.beginInsertRows(QModelIndex(), first, first + len(frames) - 1)
        self._frames.extend(frames)
        self.endInsertRows()

    def frame_index(self, row: int, inline_depth: int = 0) -> QModelIndex:
        """The index of frame `row` (inline_depth 0) or of one of its inline frames (1 = innermost)."""
        if not 0 <= row < len(self._frames):
            return QModelIndex()
        if inline_depth == 0:
            return self.index(row, 0)
        if not 1 <= inline_depth <= len(self._frames[row].inlines):
            return QModelIndex()
        return self.index(inline_depth - 1, 0, self.index(row, 0))

    def frame_ref_of(self, index: _Index) -> tuple[int, int] | None:
        """(frame row, inline depth) of an index of this model."""
        if not index.isValid():
            return None
        parent = index.internalId()
        if parent == 0:
            return index.row(), 0
        row = parent - 1
        if not 0 <= row < len(self._frames) or not 0 <= index.row() < len(self._frames[row].inlines):
            return None
        return row, index.row() + 1  # child 0 is the innermost inline frame, depth 1

    # ---- HeaderedTreeModel ----

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0)
        if parent.internalId() != 0:
            return QModelIndex()
        return self.createIndex(row, column, parent.row() + 1)

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        parent = index.internalId()
        if parent == 0:
            return QModelIndex()
        return self.createIndex(parent - 1, 0, 0)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._frames)
        if parent.internalId() != 0 or parent.column() != 0:
            return 0
        row = parent.row()
        return len(self._frames[row].inlines) if 0 <= row < len(self._frames) else 0

    def data(self, index: _Index, role: int = _ROLE.DisplayRole) -> object:
        ref = self.frame_ref_of(index)
        if ref is None:
            return None
        row, depth = ref
        frame = self._frames[row]
        column = index.column()
        inline = None if depth == 0 else frame.inlines[depth - 1]
        trust = frame.trust if inline is None else None
        if role == _ROLE.DisplayRole:
            return self._display(frame, inline, row, column)
        if role == _ROLE.DecorationRole and column == self.COL_TRUST:
            icon = self._icons.get(trust)
            if icon is None:
                icon = self._icons[trust] = trust_icon(trust, self._theme)
            return icon
        if role == _ROLE.ToolTipRole:
            return self._tooltip(frame, inline, row, depth, column)
        if role == _ROLE.FontRole:
            if column == self.COL_FUNCTION and inline is None and frame.function_name is None:
                return self._theme.mono
            if column == self.COL_NUMBER:
                return self._theme.mono
            return None
        if role == _ROLE.ForegroundRole:
            if column == self.COL_TRUST:
                return trust_color(trust, self._theme)
            if inline is not None and column != self.COL_FUNCTION:
                return self._theme.muted
            if column == self.COL_FUNCTION and frame.function_name is None and inline is None:
                return self._theme.muted
            return None
        if role == _ROLE.TextAlignmentRole and column == self.COL_NUMBER:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == ItemRole:
            return frame if inline is None else inline
        if role == AddressRole:
            return frame.instruction
        return None

    def _display(self, frame: StackFrame, inline: InlineFrame | None, row: int, column: int) -> str:
        if column == self.COL_NUMBER:
            return str(row) if inline is None else ""
        if column == self.COL_TRUST:
            return TRUST_LABELS[frame.trust if inline is None else None][0]
        if column == self.COL_MODULE:
            return basename(frame.module.code_file) if frame.module is not None else ""
        if column == self.COL_FUNCTION:
            return function_text(frame) if inline is None else inline.function
        if column == self.COL_SOURCE:
            if inline is not None:
                return source_text(inline.file, inline.line)
            return source_text(frame.source_file, frame.source_line)
        return ""

    def _tooltip(
        self, frame: StackFrame, inline: InlineFrame | None, row: int, depth: int, column: int
    ) -> str:
        number = human_number(row, self._frames, depth)
        if inline is not None:
            lines = [f"{inline.function} — inlined (#{number} in rust-minidump's report)"]
            if depth == 1:
                lines.append("The innermost call: the instruction is in this function.")
            else:
                lines.append(f"Inline depth {depth} (1 is the innermost); it calls the row below it.")
            lines.append(f"Found by: {INLINE_DESCRIPTION} (inside physical frame {row})")
            if inline.file is not None:
                lines.append(f"{inline.file}:{inline.line if inline.line is not None else '?'}")
            return "\n".join(lines)
        lines = [f"Frame {row} (#{number} in rust-minidump's report): {frame_label(frame)}"]
        lines.append(f"Found by: {frame.trust.description}")
        lines.append(describe_trust(frame.trust))
        lines.append(f"Instruction {format_address(frame.instruction, self._pointer_width)}")
        if frame.inlines:
            innermost = frame.inlines[0].function
            lines.append(f"{len(frame.inlines)} inline frame(s); the innermost is {innermost}")
        if frame.source_file is not None:
            lines.append(f"{frame.source_file}:{frame.source_line}")
        return "\n".join(lines)
