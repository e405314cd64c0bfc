"""`RegisterTableModel`: one frame's registers: known or not, where each came from, what it points into.

`set_context` takes the frame's context, the provenance of each register
(`explain.register_provenance`: the context, a CFI rule, the callee,
the frame pointer, a scan), the registers whose value differs from the
callee's (highlighted), and, while stepping through the walk, the register
state at that decision (`explain.RegisterState`): the registers known then,
with their values and sources then, the ones a later rule decides ("pending"),
and the rest ("not yet").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from PySide6.QtCore import Qt

from inspector.core.explain import RegisterState, RegisterStatus
from inspector.core.minidump import CpuContext
from inspector.core.types import format_address
from inspector.gui.document import Document
from inspector.gui.lookups import PointerKind, PointerTarget, describe_pointer
from inspector.gui.models.headered_model import HeaderedTableModel
from inspector.gui.models.roles import AddressRole, ItemRole, SortRole
from inspector.gui.theme import Theme

_ROLE = Qt.ItemDataRole


class RegisterTableModel(HeaderedTableModel):
    COL_NAME = 0
    COL_VALUE = 1
    COL_STATE = 2
    COL_SOURCE = 3
    COL_POINTS_TO = 4
    HEADERS = ("Register", "Value", "Known", "From", "Points to")
    TOOLTIPS = (
        "Register name (Breakpad's spelling)",
        "Value, in the register's width (highlighted: differs from the callee's)",
        "Whether the value is known: valid in the context, or unknown (a leftover that must not be trusted)",
        "Where the value came from: the context, a CFI rule, the callee, the frame pointer, a scan",
        "The module or thread stack the value points into, if any",
    )

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._context: CpuContext | None = None
        self._rows: list[tuple[str, int, bool]] = []
        self._targets: list[PointerTarget | None] = []
        self._provenance: Mapping[str, str] = {}
        self._valid_label = "valid"
        self._changed: frozenset[str] = frozenset()
        self._so_far: RegisterState | None = None

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._all_changed()

    @property
    def context(self) -> CpuContext | None:
        return self._context

    def set_context(
        self,
        document: Document | None,
        context: CpuContext | None,
        *,
        provenance: Mapping[str, str] | None = None,
        valid_label: str = "valid",
        changed: Iterable[str] = (),
        known_so_far: RegisterState | None = None,
    ) -> None:
        """Show `context`'s registers (None: none). `provenance` maps register → how its value was found;
        `changed`: registers whose value differs from the callee's; `known_so_far`: while stepping, the
        register state at the decision (values and sources then; pending ones; the rest "not yet")."""
        self.beginResetModel()
        self._context = context
        self._provenance = dict(provenance or {})
        self._valid_label = valid_label
        self._changed = frozenset(changed)
        self._so_far = known_so_far
        if known_so_far is not None:
            self._provenance = {name: known.how for name, known in known_so_far.known.items()}
        if context is None:
            self._rows = []
        else:
            valid = context.valid
            order = context.register_set.print_order or context.names
            listed = set(order)
            names = [*order, *(n for n in context.names if n not in listed)]
            values = dict(context.registers())
            so_far = self._so_far
            if so_far is None:
                self._rows = [(n, values[n], n in valid) for n in names]
            else:
                self._rows = [(n, _value(so_far, n, values[n]), n in so_far.known) for n in names]
        self._targets = [
            describe_pointer(document, value) if document is not None and known else None
            for _, value, known in self._rows
        ]
        self.endResetModel()

    @property
    def stepping(self) -> bool:
        """Showing the registers known at one decision of the walk (not the frame's final ones)."""
        return self._so_far is not None

    def row_of(self, name: str) -> int | None:
        for i, (n, _, _) in enumerate(self._rows):
            if n == name:
                return i
        return None

    # ---- HeaderedTableModel ----

    def _state(self, name: str, known: bool) -> str:
        if known:
            return "known"
        if self._so_far is None:
            return "unknown"
        return "pending" if self._so_far.status(name) is RegisterStatus.PENDING else "not yet"

    def _row_count(self) -> int:
        return len(self._rows)

    def _cell(self, row: int, column: int, role: int) -> object:
        if self._context is None:
            return None
        name, value, known = self._rows[row]
        target = self._targets[row]
        if role == _ROLE.DisplayRole:
            if column == self.COL_NAME:
                return name
            if column == self.COL_VALUE:
                if not known and self._so_far is not None:
                    return "…"
                return format_address(value, self._context.pointer_width)
            if column == self.COL_STATE:
                return self._state(name, known)
            if column == self.COL_SOURCE:
                return self._provenance.get(name, self._valid_label) if known else ""
            if column == self.COL_POINTS_TO:
                return target.text if target is not None else ""
            return None
        if role == SortRole:
            source = self._provenance.get(name, "") if known else ""
            return (name, value, known, source, target.text if target else "")[column]
        if role == ItemRole:
            return (name, value, known)
        if role == AddressRole:
            return value if known else None
        if role == _ROLE.FontRole and column in (self.COL_NAME, self.COL_VALUE):
            return self._theme.mono_bold if known and name in self._changed else self._theme.mono
        if role == _ROLE.ForegroundRole:
            if not known:
                return self._theme.muted
            if column in (self.COL_NAME, self.COL_VALUE) and name in self._changed:
                return self._theme.changed
            if column in (self.COL_VALUE, self.COL_POINTS_TO):
                return self._theme.pointer_color(target)
            return None
        if role == _ROLE.ToolTipRole:
            text = f"{name} = {value:#x} ({value})"
            if not known and self._so_far is not None:
                text = (
                    f"{name}: a rule of this step decides it later; its value is not known yet"
                    if self._so_far.status(name) is RegisterStatus.PENDING
                    else f"{name}: not decided at this step of the walk"
                )
            elif not known:
                text += "\nNot valid in this context: the value is a leftover and must not be trusted."
            elif name in self._provenance:
                text += f"\nFrom: {self._provenance[name]}"
            if known and name in self._changed:
                text += "\nChanged: the callee's value differs"
            if target is not None:
                text += f"\nPoints into {target.text}"
                if target.kind is PointerKind.STACK:
                    text += " (double-click to show it in the stack memory pane)"
            return text
        return None


def _value(state: RegisterState, name: str, fallback: int) -> int:
    known = state.known.get(name)
    return fallback if known is None else known.value
