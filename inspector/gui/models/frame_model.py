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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap

from inspector.core.explain import describe_trust
from inspector.core.explain.triage import RECURSION_MIN, is_guess, is_own_frame, recursion_key
from inspector.core.minidump import basename
from inspector.core.report.frame_text import frame_label, frame_lines
from inspector.core.types import format_address
from inspector.core.unwind import INLINE_DESCRIPTION, FrameTrust, InlineFrame, StackFrame, Termination
from inspector.gui.models.headered_model import HeaderedTreeModel
from inspector.gui.models.roles import AddressRole, ItemRole
from inspector.gui.theme import Theme

_Index = QModelIndex | QPersistentModelIndex
_ROLE = Qt.ItemDataRole
#: Every role `FrameTreeModel.data` answers for some cell.
_ANSWERED_ROLES = frozenset(
    {
        _ROLE.DisplayRole,
        _ROLE.DecorationRole,
        _ROLE.ToolTipRole,
        _ROLE.FontRole,
        _ROLE.ForegroundRole,
        _ROLE.TextAlignmentRole,
        ItemRole,
        AddressRole,
    }
)

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


def module_text(frame: StackFrame) -> str:
    return basename(frame.module.code_file) if frame.module is not None else ""


def source_text(file: str | None, line: int | None) -> str:
    if file is None:
        return ""
    return f"{basename(file)}:{line}" if line is not None else basename(file)


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


@dataclass(frozen=True, slots=True)
class FrameRow:
    """One line of the report: physical frame `frame` (inline 0) or its inline frame at depth `inline`
    (1 = innermost). The row's position in `FrameTreeModel.rows` is its number in the report."""

    frame: int
    inline: int


@dataclass(slots=True)
class RecursionGroup:
    """A collapsed run of equal frames: report rows `first` … `first + count - 1` as its children."""

    first: int
    count: int


def _guess_font(theme: Theme) -> QFont:
    font = QFont(theme.bold)
    font.setBold(False)
    font.setItalic(True)
    return font


class FrameTreeModel(HeaderedTreeModel):
    """The selected thread's frames in stack order, one row per frame of the report.

    Rows are the report's lines: each physical frame's inline frames (innermost first), then the
    physical frame, so reading down is reading the stack, and a row's number is the report's.
    A run of `RECURSION_MIN` or more equal frames shows its first frame, then one collapsed row
    holding the others (expand it to see them). Top-level items are report rows or such groups;
    a group's children are report rows.
    """

    COL_NUMBER = 0
    COL_FUNCTION = 1
    COL_OFFSET = 2
    COL_SOURCE = 3
    COL_MODULE = 4
    COL_TRUST = 5
    HEADERS = ("#", "Function", "Offset", "Source", "Module", "Found by")
    TOOLTIPS = (
        "Frame number, as in the report (inline frames take numbers of their own); badge: how it was found",
        "Function (long C++ names shortened to fit: hover or copy for the whole name)",
        "Offset of the instruction in the function",
        "Source file and line",
        "Module holding the instruction",
        "How the frame was found, and so how far it can be trusted",
    )

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        #: a guessed name's font: italic, not bold
        self._guess_font = _guess_font(theme)
        self._icons: dict[FrameTrust | None, QIcon] = {}
        self._thread = -1
        self._frames: list[StackFrame] = []
        self._pointer_width = 8
        #: whether a frame's module has FUNC records (a PUBLIC name there is a guess only when far off);
        #: the pane answers it from the document's symbols as they load
        self.module_has_functions: Callable[[StackFrame], bool] = lambda frame: True
        self._clear()

    def _clear(self) -> None:
        self._rows: list[FrameRow] = []
        self._first_row: list[int] = []  # per physical frame: its first report row
        self._top: list[int | RecursionGroup] = []
        self._place: list[tuple[int, int]] = []  # per report row: (top item, child row or -1)
        self._own_frame: int | None = None

    # ---- configuration ----

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._icons = {}
        self._guess_font = _guess_font(theme)
        self._all_changed()

    def symbols_changed(self) -> None:
        """Modules' symbols loaded: a name's guess mark may change."""
        self._all_changed()

    def is_guess(self, frame: StackFrame) -> bool:
        return is_guess(frame, self.module_has_functions(frame))

    @property
    def thread_index(self) -> int:
        return self._thread

    @property
    def frames(self) -> list[StackFrame]:
        return self._frames

    @property
    def rows(self) -> list[FrameRow]:
        return self._rows

    @property
    def groups(self) -> list[RecursionGroup]:
        return [item for item in self._top if isinstance(item, RecursionGroup)]

    @property
    def first_own_frame(self) -> int | None:
        """The first physical frame in the program's own code (marked in the Function column)."""
        return self._own_frame

    def set_frames(self, thread: int, frames: Sequence[StackFrame], *, pointer_width: int = 8) -> None:
        """Show `thread`'s frames (those walked so far)."""
        self.beginResetModel()
        self._thread = thread
        self._frames = []
        self._pointer_width = pointer_width
        self._clear()
        for frame in frames:
            self._add(frame, notify=False)
        self.endResetModel()

    def append_frames(self, frames: Sequence[StackFrame]) -> None:
        """More frames of the shown thread arrived."""
        for frame in frames:
            self._add(frame, notify=True)

    def _add(self, frame: StackFrame, *, notify: bool) -> None:
        index = len(self._frames)
        self._frames.append(frame)
        first = len(self._rows)
        self._first_row.append(first)
        new_rows = [FrameRow(index, depth) for depth in range(1, len(frame.inlines) + 1)]
        new_rows.append(FrameRow(index, 0))
        self._rows.extend(new_rows)
        if self._own_frame is None and is_own_frame(frame):
            self._own_frame = index  # the mark is on the new row itself: no other row changes
        run = self._run_length(index)
        last = self._top[-1] if self._top else None
        if run > RECURSION_MIN and isinstance(last, RecursionGroup):
            # one more frame of the recursion already collapsed
            top = len(self._top) - 1
            parent = self.index(top, 0)
            if notify:
                self.beginInsertRows(parent, last.count, last.count)
            self._place.append((top, last.count))
            last.count += 1
            if notify:
                self.endInsertRows()
                self.dataChanged.emit(parent, parent.siblingAtColumn(self.COL_TRUST))
            return
        if run == RECURSION_MIN:
            # the run is long enough: its first frame stays, the others go into one collapsed row
            start_top = len(self._top) - (RECURSION_MIN - 2)
            if notify:
                self.beginRemoveRows(QModelIndex(), start_top, len(self._top) - 1)
            del self._top[start_top:]
            if notify:
                self.endRemoveRows()
            group = RecursionGroup(first=first - (RECURSION_MIN - 2), count=RECURSION_MIN - 1)
            if notify:
                self.beginInsertRows(QModelIndex(), start_top, start_top)
            self._top.append(group)
            del self._place[group.first :]
            self._place.extend((start_top, child) for child in range(group.count))
            if notify:
                self.endInsertRows()
            return
        if notify:
            self.beginInsertRows(QModelIndex(), len(self._top), len(self._top) + len(new_rows) - 1)
        for row in range(first, first + len(new_rows)):
            self._place.append((len(self._top), -1))
            self._top.append(row)
        if notify:
            self.endInsertRows()

    def _run_length(self, index: int) -> int:
        """How many equal frames end at physical frame `index` (1: it differs from its callee)."""
        key = recursion_key(self._frames[index])
        if key is None:
            return 1
        length = 1
        while index - length >= 0 and recursion_key(self._frames[index - length]) == key:
            length += 1
            if length > RECURSION_MIN:
                break  # only "more than the minimum" matters
        return length

    # ---- rows, frames and indexes ----

    def report_row(self, frame: int, inline_depth: int = 0) -> int | None:
        """The report row (= the report's number) of physical frame `frame` or of its inline frame."""
        if not 0 <= frame < len(self._frames):
            return None
        inlines = len(self._frames[frame].inlines)
        if inline_depth == 0:
            return self._first_row[frame] + inlines
        if not 1 <= inline_depth <= inlines:
            return None
        return self._first_row[frame] + inline_depth - 1

    def frame_index(self, frame: int, inline_depth: int = 0) -> QModelIndex:
        """The index of physical frame `frame` (inline_depth 0) or of its inline frame (1 = innermost)."""
        row = self.report_row(frame, inline_depth)
        if row is None:
            return QModelIndex()
        top, child = self._place[row]
        if child < 0:
            return self.index(top, 0)
        return self.index(child, 0, self.index(top, 0))

    def _item_at(self, index: _Index) -> int | RecursionGroup | None:
        """What a valid index shows: a report row, or (at the top level) a collapsed group."""
        parent = index.internalId()
        row = index.row()
        if parent == 0:
            return self._top[row] if 0 <= row < len(self._top) else None
        group = self._top[parent - 1] if 0 < parent <= len(self._top) else None
        if not isinstance(group, RecursionGroup) or not 0 <= row < group.count:
            return None
        return group.first + row

    def _row_of(self, index: _Index) -> int | None:
        """The report row an index shows (a collapsed group: its first frame)."""
        item = self._item_at(index) if index.isValid() else None
        return item.first if isinstance(item, RecursionGroup) else item

    def group_of(self, index: _Index) -> RecursionGroup | None:
        """The collapsed recursion a top-level index is, if it is one."""
        if not index.isValid() or index.internalId() != 0 or not 0 <= index.row() < len(self._top):
            return None
        item = self._top[index.row()]
        return item if isinstance(item, RecursionGroup) else None

    def frame_ref_of(self, index: _Index) -> tuple[int, int] | None:
        """(physical frame, inline depth) of an index of this model (a group: its first frame)."""
        row = self._row_of(index)
        if row is None:
            return None
        entry = self._rows[row]
        return entry.frame, entry.inline

    # ---- HeaderedTreeModel ----

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        # The bounds checks of `hasIndex`, in Python: it would call back into rowCount and
        # columnCount, and every data() through the filter proxy asks for a source index first.
        if row < 0 or not 0 <= column < len(self.HEADERS):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0) if row < len(self._top) else QModelIndex()
        top = parent.row()
        if parent.internalId() != 0 or parent.column() != 0 or not 0 <= top < len(self._top):
            return QModelIndex()
        group = self._top[top]
        if not isinstance(group, RecursionGroup) or row >= group.count:
            return QModelIndex()
        return self.createIndex(row, column, top + 1)

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        parent = index.internalId()
        if parent == 0:
            return QModelIndex()
        return self.createIndex(parent - 1, 0, 0)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._top)
        if parent.internalId() != 0 or parent.column() != 0:
            return 0
        group = self.group_of(parent)
        return group.count if group is not None else 0

    def data(self, index: _Index, role: int = _ROLE.DisplayRole) -> object:
        # A paint asks each cell for about seven roles (background, check state, ...): the ones
        # this model never answers return before any lookup.
        if role not in _ANSWERED_ROLES or not index.isValid():
            return None
        item = self._item_at(index)
        if item is None:
            return None
        if isinstance(item, RecursionGroup):
            return self._group_data(item, index.column(), role)
        row = item
        entry = self._rows[row]
        frame = self._frames[entry.frame]
        inline = None if entry.inline == 0 else frame.inlines[entry.inline - 1]
        column = index.column()
        trust = frame.trust if inline is None else None
        if role == _ROLE.DisplayRole:
            return self._display(frame, inline, row, column)
        if role == _ROLE.DecorationRole and column == self.COL_NUMBER:
            icon = self._icons.get(trust)
            if icon is None:
                icon = self._icons[trust] = trust_icon(trust, self._theme)
            return icon
        if role == _ROLE.ToolTipRole:
            return self._tooltip(frame, inline, row, entry.inline, column)
        if role == _ROLE.FontRole:
            if column in (self.COL_NUMBER, self.COL_OFFSET):
                return self._theme.mono
            if column == self.COL_FUNCTION:
                if inline is None and frame.function_name is None:
                    return self._theme.mono
                if inline is None and entry.frame == self._own_frame:
                    return self._theme.bold
                if inline is None and self.is_guess(frame):
                    return self._guess_font
            return None
        if role == _ROLE.ForegroundRole:
            if column == self.COL_TRUST:
                return trust_color(trust, self._theme)
            if column == self.COL_FUNCTION and inline is None:
                if frame.function_name is None or self.is_guess(frame):
                    return self._theme.muted
                return None
            if inline is not None and column != self.COL_FUNCTION:
                return self._theme.muted
            if column == self.COL_OFFSET:
                return self._theme.muted
            return None
        if role == _ROLE.TextAlignmentRole and column == self.COL_NUMBER:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == ItemRole:
            return frame if inline is None else inline
        if role == AddressRole:
            return frame.instruction
        return None

    def _group_data(self, group: RecursionGroup, column: int, role: int) -> object:
        first = self._rows[group.first]
        frame = self._frames[first.frame]
        last = group.first + group.count - 1
        if role == _ROLE.DisplayRole:
            if column == self.COL_NUMBER:
                return f"{group.first}–{last}"
            if column == self.COL_FUNCTION:
                return f"{group.count} more calls of {frame.function_name} (recursion)"
            if column == self.COL_MODULE:
                return module_text(frame)
            return ""
        if role == _ROLE.ToolTipRole:
            return (
                f"Frames {group.first} to {last}: {group.count} more calls of the same function, "
                f"one calling the next (a recursion).\n{frame.function_name}\n"
                "Expand the row to see each frame."
            )
        if role == _ROLE.FontRole and column == self.COL_NUMBER:
            return self._theme.mono
        if role == _ROLE.ForegroundRole:
            return self._theme.warning
        if role == _ROLE.TextAlignmentRole and column == self.COL_NUMBER:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, frame: StackFrame, inline: InlineFrame | None, row: int, column: int) -> str:
        if column == self.COL_NUMBER:
            return str(row)
        if column == self.COL_TRUST:
            return TRUST_LABELS[frame.trust if inline is None else None][0]
        if column == self.COL_MODULE:
            return module_text(frame)
        if column == self.COL_FUNCTION:
            if inline is not None:
                return inline.function
            return frame.function_name if frame.function_name is not None else function_text(frame)
        if column == self.COL_OFFSET:
            if inline is None and frame.function_name is not None and frame.function_offset is not None:
                return f"+ {frame.function_offset:#x}"
            return ""
        if column == self.COL_SOURCE:
            if inline is not None:
                return source_text(inline.file, inline.line)
            return source_text(frame.source_file, frame.source_line)
        return ""

    def _tooltip(
        self, frame: StackFrame, inline: InlineFrame | None, row: int, depth: int, column: int
    ) -> str:
        physical = self.report_row(frame.index) or 0
        if inline is not None:
            lines = [f"#{row} {inline.function}", f"Inlined into #{physical} {frame.function_name or ''}"]
            if depth == 1:
                lines.append("The innermost call: the instruction is in this function.")
            else:
                lines.append(f"It called #{row - 1}, the row above it.")
            lines.append(f"Found by: {INLINE_DESCRIPTION}")
            if inline.file is not None:
                lines.append(f"{inline.file}:{inline.line if inline.line is not None else '?'}")
            return "\n".join(lines)
        lines = [f"#{row} {frame_label(frame)}"]
        if frame.function_name is not None:
            lines.insert(1, frame.function_name)
        if self.is_guess(frame):
            why = (
                "the module's symbols name no function (public names only) and the address is "
                "further from this one than a small function is long"
                if not self.module_has_functions(frame)
                else "no function record covers this address"
            )
            lines.append(
                f"A guess: {why}, so the name is the nearest public symbol below it, "
                f"{frame.function_offset or 0:#x} bytes away; the instruction may be in another, "
                "unexported function."
            )
        if frame.index == self._own_frame:
            lines.append("The first frame in your code (a module that is not a system library).")
        lines.append(f"Found by: {frame.trust.description}")
        lines.append(describe_trust(frame.trust))
        lines.append(f"Instruction {format_address(frame.instruction, self._pointer_width)}")
        if frame.inlines:
            lines.append(f"Inline frames #{row - len(frame.inlines)}–#{row - 1} are inlined into it.")
        if frame.source_file is not None:
            lines.append(f"{frame.source_file}:{frame.source_line}")
        return "\n".join(lines)
