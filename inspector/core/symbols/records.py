"""Value types the symbol package hands out.

All are frozen and slotted: a `SymbolFile` creates one only for a record a
lookup actually touched. Addresses are module-relative (`int`, u64 range).
Names are decoded as UTF-8 with replacement characters for invalid bytes.
"""

from __future__ import annotations

from inspector.core.enums import Enum, IntEnum
from inspector.core.record import Record, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Mapping


class ModuleRecord(Record):
    """`MODULE <os> <cpu> <debug id> <debug file>` (the debug file may contain spaces)."""

    os: str
    cpu: str
    debug_id: str
    debug_file: str


class SymbolInfo(Record):
    """The `INFO` lines: `CODE_ID <id> [<code file>]`, `GENERATOR <text>`, `URL <url>` (last one wins)."""

    code_id: str | None = None
    code_file: str | None = None
    generator: str | None = None
    url: str | None = None
    #: `INFO CFI_SOURCE <where>` lines (ours, for files made from objects): `.eh_frame`, …
    cfi_sources: tuple[str, ...] = ()
    #: `INFO NAMES mangled` (ours, for files made from objects): C++ names are demangled on lookup
    mangled_names: bool = False


class FunctionRecord(Record):
    """`FUNC [m] <address> <size> <parameter size> <name>`."""

    address: int
    size: int
    parameter_size: int
    name: str
    multiple: bool = False


class PublicRecord(Record):
    """`PUBLIC [m] <address> <parameter size> <name>`; PUBLICs have no size."""

    address: int
    parameter_size: int
    name: str
    multiple: bool = False


class SourceLine(Record):
    """A line record of the FUNC covering the address: `<address> <size> <line> <file id>`."""

    address: int
    size: int
    line: int
    file_id: int
    file: str | None


class InlineCall(Record):
    """One level of the inline chain at an address.

    `depth` 0 is the call made directly by the FUNC; `address`/`size` are the
    INLINE range that covers the address. `call_file`/`call_line` are the call
    site (inside the caller). `call_file_id` is None for the old INLINE syntax,
    which has no call-site file (Breakpad then uses the line record's file, and
    so does `SymbolFile.symbolize`).
    """

    depth: int
    address: int
    size: int
    origin_id: int
    name: str | None
    call_file_id: int | None
    call_file: str | None
    call_line: int


class InlineFrameSymbol(Record):
    """An inlined frame as rust-minidump's `fill_symbol` adds it (line `None` = unknown)."""

    function_name: str
    source_file: str | None
    source_line: int | None


class FrameSymbol(Record):
    """Exactly what rust-minidump's `fill_symbol` fills in for one frame.

    * From a FUNC: `function_name`/`function_base` of the FUNC, `parameter_size`
      from the STACK WIN FRAME_DATA record covering the address, else the FPO
      one, else the FUNC's own; source file/line/line base from the outermost
      location (the depth-0 INLINE's call site if there is one, else the line
      record), set only when that file id is known (the line may then be 0,
      as rust-minidump reports it); `inlines` innermost first (rust-minidump's
      order after `minidump-unwind` reverses them).
    * From a PUBLIC (no FUNC covers the address): name, address and parameter
      size of the PUBLIC; no source location, no inlines; `from_public` set.
    """

    function_name: str
    function_base: int
    parameter_size: int
    source_file: str | None = None
    source_line: int | None = None
    source_line_base: int | None = None
    inlines: tuple[InlineFrameSymbol, ...] = ()
    from_public: bool = False
    multiple: bool = False


class CfiRow(Record):
    """One STACK CFI row: the INIT row or a delta row. `rules` is the rule text as written."""

    address: int
    rules: str


class CfiLookup(Record):
    """The STACK CFI INIT block covering an address and the rules in force there.

    `rows` holds ALL delta rows of the block in rust-minidump's order (sorted by
    address, then rule text); the first `applied` of them have an address <= the
    looked-up address and are in force. `rules` composes INIT + applied rows
    (later rows override; register names without the `$`, `.cfa` and `.ra`
    kept as written), or is None when a row's rule text is malformed (`error`
    says which) — rust-minidump then fails the whole CFI step.
    """

    init: CfiRow
    size: int
    rows: tuple[CfiRow, ...]
    applied: int
    rules: Mapping[str, str] | None
    error: str | None = None

    @property
    def applied_rows(self) -> tuple[CfiRow, ...]:
        return self.rows[: self.applied]

    @property
    def active_row(self) -> CfiRow:
        """The last row in force (the INIT row when no delta applies): what the GUI highlights."""
        return self.rows[self.applied - 1] if self.applied else self.init


class StackWinType(IntEnum):
    FPO = 0
    FRAME_DATA = 4


class StackWinRecord(Record):
    """`STACK WIN <type> <address> <size> <prologue> <epilogue> <params> <saved regs> <locals>
    <max stack> <has program> <program string | allocates base pointer>`.

    `size` is the size in force after rust-minidump's overlap repair (a record
    followed by one starting inside it is truncated to end there);
    `declared_size` is what the line says.
    """

    type: StackWinType
    address: int
    size: int
    declared_size: int
    prologue_size: int
    epilogue_size: int
    parameter_size: int
    saved_register_size: int
    local_size: int
    max_stack_size: int
    has_program_string: bool
    program_string: str | None
    allocates_base_pointer: bool


#: Damaged lines kept as examples in a `DamageReport`, per kind (the rest are only counted).
MAX_EXAMPLES_PER_KIND = 3


class DamageKind(Enum):
    """Why a line was counted as damaged (the value is the label shown to people)."""

    EMPTY_FILE = "empty file"
    NO_MODULE_LINE = "first line is not MODULE"
    MODULE_NOT_FIRST = "MODULE line after the first line"
    BAD_MODULE = "malformed MODULE"
    BAD_FILE = "malformed FILE"
    BAD_INLINE_ORIGIN = "malformed INLINE_ORIGIN"
    BAD_FUNC = "malformed FUNC"
    BAD_PUBLIC = "malformed PUBLIC"
    BAD_LINE = "malformed line record"
    BAD_INLINE = "malformed INLINE"
    BAD_STACK_CFI_INIT = "malformed STACK CFI INIT"
    BAD_STACK_CFI = "malformed STACK CFI"
    BAD_STACK_WIN = "malformed STACK WIN"
    STACK_WIN_TYPE_MISMATCH = "STACK WIN type and program-string flag disagree"
    ORPHAN_LINE = "line record outside a FUNC"
    ORPHAN_INLINE = "INLINE outside a FUNC"
    ORPHAN_STACK_CFI = "STACK CFI row outside a STACK CFI INIT block"
    UNKNOWN_RECORD = "unrecognised line"


#: Kinds rust-minidump does not treat as fatal (it discards such a STACK WIN with a warning).
_RUST_MINIDUMP_TOLERATES = frozenset({DamageKind.STACK_WIN_TYPE_MISMATCH, DamageKind.NO_MODULE_LINE})


class DamagedLine(Record):
    line_number: int  # 1-based
    kind: DamageKind
    reason: str


class DamageReport(Record):
    """Damaged lines of one `.sym` file, by kind, with a few examples.

    Lines that start records the index covers (MODULE, INFO, FILE, INLINE_ORIGIN,
    FUNC, PUBLIC, STACK CFI INIT, STACK WIN), unrecognised lines and misplaced
    sub-lines are checked when the file is indexed. Line records, INLINE records
    and STACK CFI delta rows are checked when their block is first parsed;
    `SymbolFile.check_all()` parses every block to get the full count.

    `repairs` counts records dropped or adjusted by rust-minidump's rules
    (overlaps, zero sizes, STACK WIN truncation): not damage, but shown.
    """

    counts: Mapping[DamageKind, int] = field(default_factory=dict)
    examples: tuple[DamagedLine, ...] = ()
    missing_final_newline: bool = False
    old_inline_syntax: bool = False
    repairs: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def damaged(self) -> bool:
        return self.total > 0

    @property
    def rust_minidump_rejects(self) -> bool:
        """Best effort: rust-minidump would fail to parse this file and mark it corrupt.

        It rejects a file for any malformed line, a missing final newline, a
        MODULE line that is not the first line and the old INLINE syntax. We
        read such files anyway; the report layer uses this for `corrupt_symbols`.
        """
        if self.missing_final_newline or self.old_inline_syntax:
            return True
        return any(n and kind not in _RUST_MINIDUMP_TOLERATES for kind, n in self.counts.items())

    def summary(self) -> str:
        """One line for logs and the status bar: `3 damaged lines (2 unrecognised line, 1 malformed FUNC)`."""
        if not self.counts:
            return "no damaged lines"
        parts = ", ".join(
            f"{n} {kind.value}" for kind, n in sorted(self.counts.items(), key=lambda kv: -kv[1])
        )
        return f"{self.total} damaged line{'s' if self.total != 1 else ''} ({parts})"


class RecordCounts(Record):
    """How many records of each indexed kind a file has (after rust-minidump's filtering)."""

    functions: int
    publics: int
    cfi_blocks: int
    stack_win_frame_data: int
    stack_win_fpo: int
    files: int
    inline_origins: int
    lines: int  # lines in the file


class DownloadState(Enum):
    """Where a module's symbol download stands (symbol servers only)."""

    QUEUED = "queued for download"
    DOWNLOADING = "downloading"
    DOWNLOADED = "downloaded"
    CACHED = "in the download cache"
    NOT_ON_SERVER = "not on server"
    FAILED = "download failed"
    OFFLINE = "offline"
    CANCELLED = "download cancelled"

    @property
    def settled(self) -> bool:
        return self not in (DownloadState.QUEUED, DownloadState.DOWNLOADING)


class ServerAttempt(Record):
    """One request for a module's file: the URL (never a token), and what came of it."""

    url: str
    outcome: str  # "found", "not found", "not found (remembered)", "failed"
    reason: str | None = None


class DownloadStatus(Record):
    """A module's download: state, the URL the file came from, why it failed, what was tried.

    `received`/`total` are bytes (total None when the server did not say, or sent gzip).
    """

    state: DownloadState
    url: str | None = None
    reason: str | None = None
    attempts: tuple[ServerAttempt, ...] = ()
    received: int = 0
    total: int | None = None
    seconds: float = 0.0

    @property
    def text(self) -> str:
        """`downloading`, `downloaded from URL`, `not on server`, `failed: reason`, …"""
        state = self.state
        if state is DownloadState.DOWNLOADING:
            if self.total:
                return f"downloading ({self.received * 100 // max(1, self.total)} %)"
            if self.received:
                return f"downloading ({self.received / 1e6:.1f} MB)"
            return "downloading"
        if state is DownloadState.DOWNLOADED and self.url:
            return f"downloaded from {self.url}"
        if state is DownloadState.FAILED:
            return f"failed: {self.reason}" if self.reason else "failed"
        if state is DownloadState.OFFLINE:
            return "offline: not in the download cache"
        return str(state.value)
