"""`ListingModel`: a disassembly listing (`core.analysis.listing`) as rows, the frame's instruction marked.

Columns: address, function + offset, bytes, instruction, and what its operands are with the
frame's registers: each memory operand's address (or which register is unknown) and a
direct branch's target by name. Tooltips say where each register's value came from (the
Registers pane's provenance) or why it is unknown.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt

from inspector.core.analysis.listing import Listing, ListingLine, OperandValue
from inspector.core.types import format_address
from inspector.gui.models.headered_model import HeaderedTableModel
from inspector.gui.models.roles import AddressRole, ItemRole
from inspector.gui.theme import Theme

_ROLE = Qt.ItemDataRole


def operand_note(value: OperandValue, width: int) -> str:
    """`[rax + 0x10] = 0x10`, or `[rbx + 0x8] = ? (rbx unknown)`."""
    if value.address is None:
        return f"{value.text} = ? ({', '.join(value.unknown)} unknown)"
    return f"{value.text} = {format_address(value.address, width)}"


class ListingModel(HeaderedTableModel):
    COL_ADDRESS = 0
    COL_WHERE = 1
    COL_BYTES = 2
    COL_INSTRUCTION = 3
    COL_VALUES = 4
    HEADERS = ("Address", "Function", "Bytes", "Instruction", "Operands with this frame's registers")
    TOOLTIPS = (
        "The instruction's address (▶: the frame's instruction: the crashing one in frame 0, "
        "the call in a caller)",
        "The function holding it, and the offset into it (from the symbol files)",
        "The instruction's bytes",
        "The instruction (Intel syntax on x86, Capstone's on ARM)",
        "Each memory operand's address with the selected frame's registers (? where a register is "
        "unknown in this frame), and a direct branch's target by name. Click a row to see its links",
    )

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._listing: Listing | None = None
        self._width = 8
        self._provenance: Mapping[str, str] = {}

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._all_changed()

    @property
    def listing(self) -> Listing | None:
        return self._listing

    def set_listing(
        self, listing: Listing | None, *, width: int = 8, provenance: Mapping[str, str] | None = None
    ) -> None:
        self.beginResetModel()
        self._listing = listing
        self._width = width
        self._provenance = dict(provenance or {})
        self.endResetModel()

    def line(self, row: int) -> ListingLine | None:
        listing = self._listing
        return listing.lines[row] if listing is not None and 0 <= row < len(listing.lines) else None

    def values_text(self, line: ListingLine) -> str:
        parts = [operand_note(v, self._width) for v in line.memory]
        if line.branch_target is not None:
            parts.append(f"→ {line.branch_target}")
        return "; ".join(parts)

    def register_note(self, name: str, known: bool) -> str:
        if known:
            how = self._provenance.get(name)
            return f"{name}: from {how}" if how else f"{name}: known"
        return f"{name}: unknown in this frame (the unwind did not recover it), so the address is unknown"

    # ---- HeaderedTableModel ----

    def _row_count(self) -> int:
        return 0 if self._listing is None else len(self._listing.lines)

    def _cell(self, row: int, column: int, role: int) -> object:
        assert self._listing is not None
        line = self._listing.lines[row]
        if role == _ROLE.DisplayRole:
            if column == self.COL_ADDRESS:
                return ("▶ " if line.marked else "   ") + format_address(line.address, self._width)
            if column == self.COL_WHERE:
                return line.function or ""
            if column == self.COL_BYTES:
                return line.raw.hex(" ")
            if column == self.COL_INSTRUCTION:
                return line.text
            if column == self.COL_VALUES:
                return self.values_text(line)
            return None
        if role == ItemRole:
            return line
        if role == AddressRole:
            return next((v.address for v in line.memory if v.address is not None), None)
        if role == _ROLE.FontRole:
            return self._theme.mono_bold if line.marked else self._theme.mono
        if role == _ROLE.BackgroundRole and line.marked:
            return self._theme.focus_row
        if role == _ROLE.ForegroundRole:
            if line.marked and column in (self.COL_ADDRESS, self.COL_INSTRUCTION):
                return self._theme.crash
            if line.instruction is None or (
                column == self.COL_VALUES and any(v.address is None for v in line.memory)
            ):
                return self._theme.muted
            return None
        if role == _ROLE.ToolTipRole:
            notes = [self.register_note(r, r not in v.unknown) for v in line.memory for r in v.registers]
            text = "\n".join([line.text, *dict.fromkeys(notes)])
            if line.instruction is None:
                text = "These bytes do not decode as an instruction"
            return text
        return None
