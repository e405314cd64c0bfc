"""`HexMemoryModel`: a lazy table over one memory region — address, pointer-width words, ASCII, notes.

Nothing is precomputed per row: `data()` reads the few bytes of the cell Qt
asks for (only visible cells, with fixed row heights), so a multi-megabyte
stack costs nothing until it is scrolled through.

What the notes column says and how rows are shaded comes from three sources:

* pointers: every word that points into a module or a thread's stack is
  described by the `describe_pointer` callable (`lookups.describe_pointer`);
* note layers: `set_notes(layer, notes)` attaches `WordNote`s to addresses, one
  named layer per source ("registers": where the selected frame's registers
  point; "trace": frame starts, return addresses, CFAs, saved registers, scan
  candidates accepted or rejected; "focus": the words the focused step of the
  unwind trace read, drawn strongest), replaced layer by layer;
* frame bands: `set_frame_bands(bands, selected=)` shades each frame's part of
  the stack, the selected frame's band stronger.
"""

from __future__ import annotations

import enum
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from inspector.core.minidump import MemoryRegion
from inspector.core.types import format_address
from inspector.gui.lookups import PointerKind, PointerTarget
from inspector.gui.models.headered_model import HeaderedTableModel
from inspector.gui.models.roles import AddressRole, ItemRole
from inspector.gui.theme import Theme

_Index = QModelIndex | QPersistentModelIndex
_ROLE = Qt.ItemDataRole

_PRINTABLE = bytes(range(0x20, 0x7F))
_ASCII_TABLE = bytes(b if b in _PRINTABLE else ord(".") for b in range(256))


class NoteKind(enum.Enum):
    """What a note on a stack word says; decides the row's shading."""

    STACK_POINTER = "stack pointer"
    REGISTER = "register"
    RETURN_ADDRESS = "return address"
    SAVED_REGISTER = "saved register"
    CFA = "canonical frame address"
    RULE_READ = "read by the focused unwind step"
    SCAN_ACCEPTED = "scan: accepted"
    SCAN_REJECTED = "scan: rejected"
    FRAME_BOUNDARY = "frame boundary"


@dataclass(frozen=True, slots=True)
class WordNote:
    """A remark about the word at `address`."""

    address: int
    text: str
    kind: NoteKind


@dataclass(frozen=True, slots=True)
class FrameBand:
    """The stack bytes [start, end) that belong to frame `frame_index`."""

    start: int
    end: int
    frame_index: int
    label: str = ""


PointerDescriber = Callable[[int], PointerTarget | None]


class _Layer:
    __slots__ = ("addresses", "notes")

    def __init__(self, notes: Iterable[WordNote]) -> None:
        ordered = sorted(notes, key=lambda n: n.address)
        self.addresses = [n.address for n in ordered]
        self.notes = ordered

    def between(self, start: int, end: int) -> list[WordNote]:
        return self.notes[bisect_left(self.addresses, start) : bisect_left(self.addresses, end)]


class HexMemoryModel(HeaderedTableModel):
    """The columns depend on the words per row, so this model counts and names them itself."""

    COL_ADDRESS = 0

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._region: MemoryRegion | None = None
        self._width = 8
        self._words_per_row = 1
        self._describe: PointerDescriber | None = None
        self._layers: dict[str, _Layer] = {}
        self._bands: list[FrameBand] = []
        self._band_starts: list[int] = []
        self._selected_band: int | None = None

    # ---- configuration ----

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._all_changed()

    def set_region(
        self,
        region: MemoryRegion | None,
        *,
        pointer_width: int = 8,
        describe_pointer: PointerDescriber | None = None,
    ) -> None:
        """Show `region` (None: nothing) as `pointer_width`-byte words. Clears notes and bands."""
        if pointer_width not in (4, 8):
            raise ValueError(f"pointer width must be 4 or 8, not {pointer_width}")
        self.beginResetModel()
        self._region = region
        self._width = pointer_width
        self._describe = describe_pointer
        self._layers = {}
        self._bands, self._band_starts, self._selected_band = [], [], None
        self.endResetModel()

    def set_words_per_row(self, words: int) -> None:
        if words < 1:
            raise ValueError("at least one word per row")
        if words == self._words_per_row:
            return
        self.beginResetModel()
        self._words_per_row = words
        self.endResetModel()

    def set_notes(self, layer: str, notes: Iterable[WordNote]) -> None:
        """Replace the notes of one layer (an empty iterable removes it)."""
        new = _Layer(notes)
        if new.notes:
            self._layers[layer] = new
        else:
            self._layers.pop(layer, None)
        self._all_changed()

    def notes(self, layer: str) -> list[WordNote]:
        found = self._layers.get(layer)
        return list(found.notes) if found is not None else []

    def set_frame_bands(self, bands: Sequence[FrameBand], selected: int | None = None) -> None:
        """Shade the stack by frame; `selected` is the frame index drawn as selected."""
        self._bands = sorted(bands, key=lambda b: b.start)
        self._band_starts = [b.start for b in self._bands]
        self._selected_band = selected
        self._all_changed()

    @property
    def frame_bands(self) -> list[FrameBand]:
        return list(self._bands)

    @property
    def selected_band(self) -> int | None:
        return self._selected_band

    # ---- geometry ----

    @property
    def region(self) -> MemoryRegion | None:
        return self._region

    @property
    def pointer_width(self) -> int:
        return self._width

    @property
    def words_per_row(self) -> int:
        return self._words_per_row

    @property
    def bytes_per_row(self) -> int:
        return self._width * self._words_per_row

    @property
    def col_ascii(self) -> int:
        return 1 + self._words_per_row

    @property
    def col_notes(self) -> int:
        return 2 + self._words_per_row

    def is_word_column(self, column: int) -> bool:
        return 1 <= column <= self._words_per_row

    def row_address(self, row: int) -> int:
        assert self._region is not None
        return self._region.base + row * self.bytes_per_row

    def row_for_address(self, address: int) -> int | None:
        region = self._region
        if region is None or not region.contains(address):
            return None
        return (address - region.base) // self.bytes_per_row

    def index_for_address(self, address: int) -> QModelIndex:
        """The word cell holding `address` (invalid if the region does not)."""
        row = self.row_for_address(address)
        if row is None:
            return QModelIndex()
        word = (address - self.row_address(row)) // self._width
        return self.index(row, 1 + word)

    def word_address(self, row: int, column: int) -> int | None:
        if self._region is None or not self.is_word_column(column):
            return None
        address = self.row_address(row) + (column - 1) * self._width
        return address if address < self._region.end else None

    def word_value(self, address: int) -> int | None:
        """The full word at `address`, None if it is not entirely inside the region."""
        region = self._region
        return None if region is None else region.read_pointer(address, self._width)

    # ---- HeaderedTableModel ----

    def _row_count(self) -> int:
        return 0 if self._region is None else -(-self._region.size // self.bytes_per_row)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 3 + self._words_per_row

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _ROLE.DisplayRole) -> object:
        if orientation != Qt.Orientation.Horizontal or role != _ROLE.DisplayRole:
            return None
        if section == self.COL_ADDRESS:
            return "Address"
        if self.is_word_column(section):
            return f"+{(section - 1) * self._width:x}"
        if section == self.col_ascii:
            return "ASCII"
        if section == self.col_notes:
            return "Notes"
        return None

    def _cell(self, row: int, column: int, role: int) -> object:
        region = self._region
        if region is None:
            return None
        start = self.row_address(row)
        if role == _ROLE.DisplayRole:
            return self._display(region, start, row, column)
        if role == _ROLE.FontRole:
            return self._theme.mono if column != self.col_notes else None
        if role == _ROLE.BackgroundRole:
            return self._background(start)
        if role == AddressRole:
            return self.word_address(row, column) if self.is_word_column(column) else start
        if role == ItemRole and self.is_word_column(column):
            address = self.word_address(row, column)
            return None if address is None else self.word_value(address)
        if role == _ROLE.ForegroundRole:
            if self.is_word_column(column):
                return self._word_color(row, column)
            if column == self.COL_ADDRESS:
                return self._theme.muted
            return None
        if role == _ROLE.ToolTipRole:
            return self._tooltip(start, row, column)
        if role == _ROLE.TextAlignmentRole and column != self.col_notes:
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        return None

    # ---- cells ----

    def _display(self, region: MemoryRegion, start: int, row: int, column: int) -> str:
        if column == self.COL_ADDRESS:
            return format_address(start, self._width)
        if self.is_word_column(column):
            address = start + (column - 1) * self._width
            return self._word_text(region, address)
        if column == self.col_ascii:
            data = region.view(start, min(self.bytes_per_row, region.end - start))
            return bytes(data).translate(_ASCII_TABLE).decode("ascii") if data is not None else ""
        if column == self.col_notes:
            return self._notes_text(start)
        return ""

    def _word_text(self, region: MemoryRegion, address: int) -> str:
        value = region.read_pointer(address, self._width)
        if value is not None:
            return f"{value:0{self._width * 2}x}"
        available = max(0, min(self._width, region.end - address))
        if available == 0:
            return ""
        data = bytes(region.view(address, available) or b"")
        digits = (data[::-1] if region.endian == "<" else data).hex()
        missing = "??" * (self._width - available)
        return missing + digits if region.endian == "<" else digits + missing

    def _row_notes(self, start: int) -> list[WordNote]:
        end = start + self.bytes_per_row
        found: list[WordNote] = []
        for layer in self._layers.values():
            found.extend(layer.between(start, end))
        found.sort(key=lambda n: n.address)
        return found

    def _word_targets(self, start: int) -> list[tuple[int, PointerTarget]]:
        if self._describe is None:
            return []
        out = []
        for w in range(self._words_per_row):
            address = start + w * self._width
            value = self.word_value(address)
            if value is None:
                continue
            target = self._describe(value)
            if target is not None:
                out.append((address, target))
        return out

    def _notes_text(self, start: int) -> str:
        parts: list[str] = []
        several = self._words_per_row > 1

        def prefix(address: int) -> str:
            return f"+{address - start:x}: " if several else ""

        for note in self._row_notes(start):
            parts.append(f"{prefix(note.address)}{note.text}")
        for address, target in self._word_targets(start):
            parts.append(f"{prefix(address)}→ {target.text}")
        return "   ".join(parts)

    def _band_at(self, address: int) -> FrameBand | None:
        i = bisect_right(self._band_starts, address) - 1
        if i < 0:
            return None
        band = self._bands[i]
        return band if address < band.end else None

    def _background(self, start: int) -> object:
        notes = self._row_notes(start)
        if any(n.kind is NoteKind.RULE_READ for n in notes):
            return self._theme.focus_row
        if any(n.kind is NoteKind.STACK_POINTER for n in notes):
            return self._theme.sp_row
        if any(n.kind is NoteKind.REGISTER for n in notes):
            return self._theme.register_row
        band = self._band_at(start)
        if band is None:
            return None
        if band.frame_index == self._selected_band:
            return self._theme.band_selected
        return self._theme.band_odd if band.frame_index % 2 else self._theme.band_even

    def _word_color(self, row: int, column: int) -> object:
        address = self.word_address(row, column)
        value = None if address is None else self.word_value(address)
        if value is None or value == 0:
            return self._theme.muted
        target = self._describe(value) if self._describe is not None else None
        return self._theme.pointer_color(target)

    def _tooltip(self, start: int, row: int, column: int) -> str | None:
        if self.is_word_column(column):
            address = self.word_address(row, column)
            if address is None:
                return None
            value = self.word_value(address)
            lines = [f"{format_address(address, self._width)}"]
            if value is None:
                lines.append("(the word runs past the end of the region)")
            else:
                lines.append(f"value {value:#x} ({value})")
                target = self._describe(value) if self._describe is not None else None
                if target is not None:
                    lines.append(f"points into {target.text}")
                    if target.kind is PointerKind.STACK:
                        lines.append("double-click to follow")
            lines.extend(f"{n.kind.value}: {n.text}" for n in self._row_notes(start) if n.address == address)
            return "\n".join(lines)
        if column == self.col_notes:
            text = self._notes_text(start)
            return text.replace("   ", "\n") or None
        return None
