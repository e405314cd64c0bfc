"""The state of a processed dump: system, crash, threads and frames, modules and symbols, problems.

Everything is frozen: a state (and each part of it) can be handed to another thread as it is.
`ProcessState` is what the reports render and what the window shows; while a walk runs the
window holds the unwalked state of `DumpLoaded` and adds the frames as they arrive.
"""

from __future__ import annotations

from inspector.core.enums import Enum
from inspector.core.minidump import (
    CpuContext,
    DirectoryEntry,
    MemoryRegion,
    MemoryView,
    Module,
    ModuleList,
    UnloadedModule,
    windows_error_name,
)
from inspector.core.record import Record, field
from inspector.core.symbols import (
    DamageReport,
    DownloadState,
    DownloadStatus,
    ModuleSymbols,
    SymbolMatch,
    SymbolStatus,
)
from inspector.core.types import Cpu, Os
from inspector.core.unwind import CallStack, WalkOptions

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.analysis import CrashAnalysis
    from inspector.core.arguments import FunctionArguments
    from inspector.core.microdump.dump import MicrodumpInfo
    from inspector.core.minidump import HandleData, MacBootargs, MacCrashInfo
    from inspector.core.minidump.mozilla import ProcLimit


class SystemSummary(Record):
    os: Os
    os_name: str  # JSON `system_info.os`
    os_version: str | None  # JSON `os_ver` ("version build")
    cpu: Cpu
    cpu_arch: str
    cpu_info: str | None
    cpu_count: int
    cpu_microcode_version: int | None

    @property
    def pointer_width(self) -> int:
        return 8 if self.cpu is Cpu.UNKNOWN else self.cpu.pointer_width


class CrashSummary(Record):
    """The exception: rust-minidump's `crash_info` type and address."""

    reason: str
    address: int
    thread_id: int


class SymbolState(Enum):
    NOT_REQUESTED = "not requested"
    LOADED = "loaded"
    DAMAGED = "loaded with damaged lines"
    MISSING = "not found"
    NO_IDENTIFIER = "no debug or code identifier"
    UNREADABLE = "unreadable"


_NOT_REQUESTED, _LOADED, _DAMAGED = SymbolState.NOT_REQUESTED, SymbolState.LOADED, SymbolState.DAMAGED

_STATE_BY_STATUS = {
    SymbolStatus.LOADED: SymbolState.LOADED,
    SymbolStatus.DAMAGED: SymbolState.DAMAGED,
    SymbolStatus.NOT_FOUND: SymbolState.MISSING,
    SymbolStatus.NO_IDENTIFIER: SymbolState.NO_IDENTIFIER,
    SymbolStatus.UNREADABLE: SymbolState.UNREADABLE,
}


class ModuleSymbolSummary(Record):
    """What became of a module's symbols (frozen; the open symbol file itself stays in the Symbolizer)."""

    state: SymbolState
    path: str | None = None
    tried: tuple[str, ...] = ()
    found_by: str | None = None
    damage: DamageReport | None = None
    error: str | None = None
    symbol_url: str | None = None
    load_seconds: float = 0.0
    rust_minidump_rejects: bool = False  # rust-minidump would refuse this file (we read it)
    download: DownloadStatus | None = None  # symbol servers: the module's download, even if not requested
    match: SymbolMatch | None = None  # loaded: matched by debug id or code id, and what the file says it is
    source: str | None = None  # ".sym file", "DWARF in the binary (symbol path)", … (`ModuleSymbols.source`)
    objects: tuple[str, ...] = ()  # the binaries and debug files the symbols were made from
    cfi_sources: tuple[str, ...] = ()  # ".sym", ".eh_frame", ".debug_frame", "PE unwind info", …
    help: str | None = None  # without symbols: the module's identity and the files that would do
    functions: int | None = None  # FUNC records in the loaded file (0: PUBLIC names only); None: no file

    # Each reads `state` itself (the JSON report asks three of them for every module).

    @property
    def requested(self) -> bool:
        return self.state is not _NOT_REQUESTED

    @property
    def loaded(self) -> bool:
        state = self.state
        return state is _LOADED or state is _DAMAGED

    @property
    def corrupt(self) -> bool:
        """Damaged lines were skipped, or rust-minidump would refuse the file (JSON `corrupt_symbols`)."""
        state = self.state
        return state is _DAMAGED or (state is _LOADED and self.rust_minidump_rejects)

    @property
    def missing(self) -> bool:
        """Looked for and not loaded (rust-minidump's `missing_symbols`)."""
        state = self.state
        return not (state is _NOT_REQUESTED or state is _LOADED or state is _DAMAGED)

    @classmethod
    def of(cls, symbols: ModuleSymbols) -> ModuleSymbolSummary:
        return cls(
            _STATE_BY_STATUS[symbols.status],
            None if symbols.path is None else str(symbols.path),
            symbols.tried,
            symbols.found_by,
            symbols.damage,
            symbols.error,
            symbols.symbol_url if symbols.symbol_file is not None else None,
            symbols.load_seconds,
            symbols.rust_minidump_corrupt,
            symbols.download,
            symbols.match,
            symbols.source,
            symbols.objects,
            symbols.cfi_sources,
            symbols.help,
            symbols.symbol_file.counts.functions if symbols.symbol_file is not None else None,
        )

    @property
    def status_text(self) -> str:
        """One line for people: the symbol state, with the download's when there is one."""
        download = self.download
        if download is None:
            if self.loaded and self.source is not None and self.objects:
                return f"{self.state.value}: {self.source}"
            return self.state.value
        if self.state is SymbolState.NOT_REQUESTED or not download.state.settled:
            return download.text
        if self.loaded and download.state is DownloadState.CACHED:
            return f"{self.state.value} (download cache{', ' + self.symbol_url if self.symbol_url else ''})"
        if self.loaded:
            return f"{self.state.value}, {download.text}"
        return download.text


NOT_REQUESTED = ModuleSymbolSummary(SymbolState.NOT_REQUESTED)


class ModuleEntry(Record):
    index: int
    module: Module
    symbols: ModuleSymbolSummary = NOT_REQUESTED


class LsbRelease(Record):
    id: str
    release: str
    codename: str
    description: str


class Problem(Record):
    """Damage found in the inputs: in the dump (with its offset) or in a symbol file, or a walk cut short.

    `where`, for people: the stream of the dump, the module, the path or the thread it is
    about (None: the dump as a whole). The JSON's `inspector_problems` has the other four.
    """

    source: str  # "dump", "symbols", "symbol path", "walk"
    code: str
    message: str
    offset: int | None = None
    where: str | None = None
    #: the dump stream the damage is in (None: not in one stream, or not about the dump)
    stream_type: int | None = None


class ContextSource(Enum):
    """Where a thread's starting registers come from."""

    EXCEPTION = "exception record"
    THREAD = "thread list"


class ThreadStart(Record):
    """Where a walk of a thread starts: its context (the exception's for the crashing thread), where
    that context comes from, and the stack memory the walk reads. Known for every thread, also for
    those that are not walked (no context, or the thread that wrote the dump)."""

    context: CpuContext | None
    stack: MemoryRegion | None
    source: ContextSource | None = None
    #: the thread list names stack bytes the file does not hold (all or part of them): a cut or
    #: damaged dump, not a thread without a stack
    stack_cut: bool = False


class ProcessState(Record):
    path: str | None
    dump_time: int
    system: SystemSummary
    crash: CrashSummary | None
    requesting_thread: int | None
    threads: tuple[CallStack, ...]
    modules: tuple[ModuleEntry, ...]
    unloaded_modules: tuple[UnloadedModule, ...]
    memory: MemoryView
    assertion: str | None = None  # Breakpad's assertion text (rust-minidump 0.25 never reports one)
    process_id: int | None = None
    process_create_time: int | None = None
    process_uptime: int | None = None
    linux_memory_map_count: int | None = None
    lsb_release: LsbRelease | None = None
    mac_crash_info: MacCrashInfo | None = None
    mac_boot_args: MacBootargs | None = None
    proc_limits: tuple[ProcLimit, ...] | None = None
    soft_errors: object = None  # parsed JSON, or None
    handles: HandleData | None = None
    unimplemented_streams: tuple[DirectoryEntry, ...] = ()
    unknown_streams: tuple[DirectoryEntry, ...] = ()
    problems: tuple[Problem, ...] = ()
    walk_options: WalkOptions = field(default_factory=WalkOptions)
    walked: bool = False
    analysis: CrashAnalysis | None = None  # the crashing instruction & co. (inspector.core.analysis)
    microdump: MicrodumpInfo | None = None  # what only a microdump says (None for a minidump)
    #: each thread's start, by thread index (its context and stack even when it is not walked)
    thread_starts: tuple[ThreadStart, ...] = ()
    #: the modules by address (lookups of the module that holds an address)
    module_list: ModuleList = field(default_factory=lambda: ModuleList(()))
    #: bytes in the dump file
    dump_size: int = 0
    #: symbol paths or servers were given: a module whose symbols were never looked up was not needed
    #: (without them nothing is looked up at all)
    symbols_searched: bool = False
    #: `--evil-json`'s certificate subjects: (module file name, subject) pairs (rust-minidump's
    #: `cert_info`); pairs rather than a dict keep the state hashable
    cert_subjects: tuple[tuple[str, str], ...] = ()
    #: `--recover-function-args`: ((thread index, frame index), guessed x86 arguments) pairs
    function_arguments: tuple[tuple[tuple[int, int], FunctionArguments], ...] = ()

    @property
    def main_module(self) -> int | None:
        """The main module's index: the first of the module list, as rust-minidump says (None: no modules,
        and none in a microdump, as in Breakpad).

        The JSON writes `"main_module": 0` for a minidump whatever its modules, as rust-minidump 0.25 does.
        """
        return 0 if self.modules and self.microdump is None else None

    @property
    def pointer_width(self) -> int:
        return self.system.pointer_width

    @property
    def crashed(self) -> bool:
        return self.crash is not None

    @property
    def crashing_thread(self) -> CallStack | None:
        return None if self.requesting_thread is None else self.threads[self.requesting_thread]


#: What the report says about a dump whose SystemInfo stream cannot be read.
UNKNOWN_SYSTEM = SystemSummary(Os.UNKNOWN, "unknown", None, Cpu.UNKNOWN, "unknown", None, 0, None)


def last_error_name(value: int | None) -> str | None:
    """JSON `last_error_value`: the Windows error name rust-minidump prints, None when not captured."""
    return None if value is None else windows_error_name(value)
