"""Disassembly pane: the instructions around the selected frame's instruction, the frame's one marked.

Frame 0 shows the crashing instruction, a caller the call before its return address. Each
memory operand is evaluated with the selected frame's registers (unknown registers say so,
with where the known ones came from); direct branch targets and each instruction's function
are named from the symbol files. The line under the table links the selected instruction's
operand addresses (they select the address in Stack Memory) and registers (they select the
register in Registers); double-clicking a row follows its first address. When no code
bytes are available it says why and what would help.

The listing is made on the pane's background thread (`gui/background.py`): decoding a
window of ~64 instructions takes a few milliseconds, but the code may come from a module
file on a slow disk, and naming branch targets may open a symbol file.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from PySide6.QtCore import QModelIndex, Qt, QTimer, Slot
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QAbstractItemView, QLabel, QSizePolicy, QWidget

from inspector.core.analysis.listing import Listing, full_register
from inspector.core.analysis.model import CodeOrigin
from inspector.core.explain import register_provenance
from inspector.core.explain.triage import report_number
from inspector.core.types import Cpu, format_address
from inspector.gui.background import BackgroundCalls
from inspector.gui.listing_job import ListingMaker, ListingRequest
from inspector.gui.models.listing_model import ListingModel, operand_note
from inspector.gui.models.roles import AddressRole
from inspector.gui.panes.frame_follower import FrameFollower
from inspector.gui.panes.table_view import DataTableView
from inspector.gui.session import FrameRef, Session
from inspector.gui.theme import Theme

_LINK_ADDRESS = "address:"
_LINK_REGISTER = "register:"


class DisassemblyPane(FrameFollower):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(session, parent, object_name="disassemblyPane")
        self._theme = theme
        self.model = ListingModel(theme, self)
        self.background = BackgroundCalls(self)
        self._maker: ListingMaker | None = None
        #: thread, frame and inline depth shown (the depth gives the frame's number in the title)
        self._shown: tuple[int, int, int] | None = None
        #: what the listing is of, for the title (set when it is asked for)
        self._about = ""
        #: what the listed instruction is to the frame ("the crashing instruction", …)
        self._what = ""

        self.title = QLabel("No frame selected", self)
        self.title.setObjectName("disassemblyTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.view = DataTableView(self, object_name="disassemblyView")
        self.view.setModel(self.model)
        self.view.set_row_font(theme.mono, theme.mono_bold)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.fit_columns(
            {
                ListingModel.COL_ADDRESS: ("▶ 0x00007ffff7e5af16", theme.mono_bold),
                ListingModel.COL_WHERE: ("render_worker_main + 0x1a4", None),
                ListingModel.COL_BYTES: ("48 8b 05 e9 6a 00 00", theme.mono),
                ListingModel.COL_INSTRUCTION: ("mov rax, qword [rip + 0x6abd00]", theme.mono_bold),
            },
            padding=12,
        )
        self.links = QLabel(self)
        self.links.setObjectName("disassemblyLinks")
        self.links.setWordWrap(True)
        self.links.setTextFormat(Qt.TextFormat.RichText)
        self.links.setTextInteractionFlags(
            Qt.TextInteractionFlag.LinksAccessibleByMouse | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.links.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.links.linkActivated.connect(self.follow_link)
        self.setFocusProxy(self.view)
        self._stack(self.title, self.view, self.links)

        self.view.selectionModel().currentChanged.connect(self._on_current_changed)
        self.view.doubleClicked.connect(self._on_double_clicked)
        session.document_changed.connect(self._on_document_changed)

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.model.set_theme(theme)
        self.view.set_row_font(theme.mono, theme.mono_bold)

    # ---- following the session ----

    @Slot()
    def _on_document_changed(self) -> None:
        self.background.cancel()
        maker, self._maker = self._maker, None
        if maker is not None:
            # closed on the pane's thread, after any listing still using its files
            self.background.pool.start(maker.close)
        self._shown = None
        self._show_message("No frame selected")

    @property
    def showing(self) -> bool:
        return self._shown is not None

    def show_frame(self, ref: FrameRef | None) -> None:
        """List the code around frame `ref`'s instruction (on the background thread)."""
        doc = self.session.document
        frames = doc.frames(ref.thread) if doc is not None and ref is not None else []
        if doc is None or ref is None or not 0 <= ref.frame < len(frames):
            self._shown = None
            self._show_message("No frame selected")
            return
        if self._shown is not None and self._shown[:2] == (ref.thread, ref.frame):
            if self._shown[2] != ref.inline:
                # another inline frame of the same physical frame: the same code, another number
                self._shown = (ref.thread, ref.frame, ref.inline)
                self._about = f"Frame {report_number(frames, ref.frame, ref.inline)}: {self._what}"
                if self.model.listing is not None:  # else the pending listing's title uses it
                    self._set_title(self.model.listing)
            return
        self._shown = (ref.thread, ref.frame, ref.inline)
        state = doc.state
        frame = frames[ref.frame]
        thread = doc.thread(ref.thread)
        callee = frames[ref.frame - 1] if ref.frame > 0 else None
        provenance = register_provenance(
            frame, callee, context_source=thread.context_source if thread is not None else "context"
        )
        cpu = state.system.cpu
        thumb = cpu is Cpu.ARM and bool(frame.return_address & 1 or _thumb_state(frame.context.fields()))
        request = ListingRequest(
            cpu=cpu,
            address=frame.instruction,
            context=frame.context,
            memory=state.memory,
            modules=state.module_list,
            symbol_files=tuple(s.path if s.loaded else None for s in doc.symbols),
            function_start=frame.function_base,
            thumb=thumb,
        )
        what = "the crashing instruction" if ref.frame == 0 and state.crashed else "the frame's instruction"
        if ref.frame > 0:
            what = "the call before the return address"
        self._what = what
        self._about = f"Frame {report_number(frames, ref.frame, ref.inline)}: {what}"
        if self._maker is None:
            self._maker = ListingMaker(self.session.symbol_paths, self.session.cache_dir)
        maker = self._maker
        self.title.setText(
            f"{self._about} — disassembling {format_address(frame.instruction, state.pointer_width)}…"
        )
        self.background.submit(
            lambda: maker.make(request),
            self._on_listing,
            state.pointer_width,
            provenance,
        )

    def _on_listing(
        self, listing: object, error: Exception | None, width: int, provenance: dict[str, str]
    ) -> None:
        if error is not None or not isinstance(listing, Listing):
            self._show_message(f"{self._about}: the code could not be disassembled ({error})")
            return
        self.model.set_listing(listing, width=width, provenance=provenance)
        self._set_title(listing)
        if listing.message is not None:
            self.links.setText("")
            return
        row = listing.marked_row
        if row is not None:
            with self.syncing():
                self.view.select_row(self.model.index(row, 0))
            self._center()
            self._show_links(row)

    def _set_title(self, listing: Listing) -> None:
        if listing.message is not None:
            self.title.setText(f"{self._about}. {listing.message}")
            return
        source = (
            "the dump's memory" if listing.origin is CodeOrigin.DUMP else f"the module file {listing.path}"
        )
        self.title.setText(f"{self._about} (▶), code from {source}")

    def _center(self) -> None:
        """The marked instruction in the middle, with the code before it above (again once shown)."""
        listing = self.model.listing
        row = None if listing is None else listing.marked_row
        if row is not None:
            self.view.scrollTo(self.model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self._center)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._center()

    def _show_message(self, text: str) -> None:
        self.model.set_listing(None)
        self.title.setText(text)
        self.links.setText("")

    # ---- links ----

    def _show_links(self, row: int) -> None:
        line = self.model.line(row)
        listing = self.model.listing
        if line is None or listing is None:
            self.links.setText("")
            return
        width = 8 if self.session.document is None else self.session.document.state.pointer_width
        parts = []
        for value in line.memory:
            note = html.escape(operand_note(value, width))
            if value.address is not None:
                note = f'<a href="{_LINK_ADDRESS}{value.address}">{note}</a>'
            parts.append(note)
        registers = dict.fromkeys(r for v in line.memory for r in v.registers)
        for op in line.instruction.operands if line.instruction is not None else ():
            if op.register is not None:
                registers.setdefault(op.register)
        if registers:
            unknown = {r for v in line.memory for r in v.unknown}
            links = []
            for r in registers:
                note = html.escape(self.model.register_note(r, r not in unknown))
                links.append(
                    f'<a href="{_LINK_REGISTER}{html.escape(r)}" title="{note}">{html.escape(r)}</a>'
                )
            parts.append("registers: " + " ".join(links))
        if line.branch_target is not None:
            parts.append(f"target: {html.escape(line.branch_target)}")
        self.links.setText(" · ".join(parts) if parts else "")

    @Slot(QModelIndex, QModelIndex)
    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self._show_links(current.row())

    @Slot(QModelIndex)
    def _on_double_clicked(self, index: QModelIndex) -> None:
        address = index.data(AddressRole)
        if isinstance(address, int):
            self.session.show_address(address)

    @Slot(str)
    def follow_link(self, link: str) -> None:
        """An operand's address selects it in Stack Memory; a register selects it in Registers."""
        if link.startswith(_LINK_ADDRESS):
            self.session.show_address(int(link[len(_LINK_ADDRESS) :]))
        elif link.startswith(_LINK_REGISTER):
            name = link[len(_LINK_REGISTER) :]
            doc = self.session.document
            cpu = doc.state.system.cpu if doc is not None else Cpu.UNKNOWN
            full, _ = full_register(cpu, name)
            self.session.show_register(full or name)


def _thumb_state(fields: Mapping[str, object]) -> bool:
    """The T bit of an ARM context's cpsr (the crashing frame of a Thumb function)."""
    cpsr = fields.get("cpsr", 0)
    return isinstance(cpsr, int) and bool(cpsr & 0x20)
