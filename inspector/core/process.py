"""A dump and symbol paths → `ProcessState` (every thread walked), as a generator of events.

`process_events(dump, options, cancel=)` yields, in order:

* `DumpLoaded(state)` — right after the dump is read: system and crash info, modules,
  memory, and every thread with only its context frame (nothing unwound yet);
* while walking (crashing thread first, then the others in dump order):
  `SymbolsLoaded(module_index, symbols)` when a module's symbols were looked for,
  `FrameWalked(thread_index, frame)` for every frame as soon as it is known,
  `ThreadWalked(thread_index, call_stack)` when a thread is done, and
  `Progress(...)` after each thread;
* `Finished(state)` with everything.

Threads that start from the same registers on the same stack bytes share one walk, and the
frames of all threads together are capped (`WalkOptions.dump_frame_limit`): a hostile dump can
point thousands of threads at one long stack. The cancel token is checked between frames
(`Cancelled` is raised). Every event carries
only frozen data, so a GUI worker can forward it to the UI thread as it is. `process(...)`
drains the generator and returns the final state.

rust-minidump refuses a dump without a readable thread list or system info stream; we
report whatever the dump still holds (a dump without a thread list still has its modules
and crash reason; without system info the CPU is unknown, so no thread has registers) with
the damage in `problems`. Only a dump in which none of the system info, thread list,
module list and exception streams can be read raises `MinidumpError` (`BadData`), before
anything is yielded.
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.minidump import (
    DirectoryEntry,
    HandleData,
    MacBootargs,
    MacCrashInfo,
    MemoryRegion,
    MemoryView,
    Minidump,
    Module,
    StreamType,
    Thread,
    UnloadedModule,
    windows_error_name,
)
from inspector.core.minidump.errors import BadData
from inspector.core.minidump.mozilla import ProcLimit
from inspector.core.symbols import (
    DamageReport,
    IndexCache,
    ModuleSymbols,
    Symbolizer,
    SymbolStatus,
    SymbolSupplier,
    module_key,
)
from inspector.core.types import AddressRange, Cpu, Os
from inspector.core.unwind import (
    CallStack,
    CallStackInfo,
    FrameTrust,
    StackFrame,
    Termination,
    TerminationReason,
    WalkEnvironment,
    WalkOptions,
    walk_stack,
)

log = logging.getLogger(__name__)


# ---- options -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProcessOptions:
    """What to process a dump with.

    `symbols_cache`: the index cache directory (None: the user cache directory);
    `use_symbols_cache=False` keeps no cache. `code_id_fallback`: also look symbols up by
    code id (rust-minidump does that only with a symbol server, so it is off by default).
    """

    symbol_paths: tuple[str | os.PathLike[str], ...] = ()
    symbols_cache: str | os.PathLike[str] | None = None
    use_symbols_cache: bool = True
    code_id_fallback: bool = False
    walk: WalkOptions = field(default_factory=WalkOptions)

    def index_cache(self) -> IndexCache:
        if not self.use_symbols_cache:
            return IndexCache(None)
        if self.symbols_cache is not None:
            return IndexCache(self.symbols_cache)
        return IndexCache.default()


# ---- the state ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SystemSummary:
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


@dataclass(frozen=True, slots=True)
class CrashSummary:
    """The exception: rust-minidump's `crash_info` type and address."""

    reason: str
    address: int
    thread_id: int


class SymbolState(enum.Enum):
    NOT_REQUESTED = "not requested"
    LOADED = "loaded"
    DAMAGED = "loaded with damaged lines"
    MISSING = "not found"
    NO_IDENTIFIER = "no debug or code identifier"
    UNREADABLE = "unreadable"


_STATE_BY_STATUS = {
    SymbolStatus.LOADED: SymbolState.LOADED,
    SymbolStatus.DAMAGED: SymbolState.DAMAGED,
    SymbolStatus.NOT_FOUND: SymbolState.MISSING,
    SymbolStatus.NO_IDENTIFIER: SymbolState.NO_IDENTIFIER,
    SymbolStatus.UNREADABLE: SymbolState.UNREADABLE,
}


@dataclass(frozen=True, slots=True)
class ModuleSymbolSummary:
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

    @property
    def requested(self) -> bool:
        return self.state is not SymbolState.NOT_REQUESTED

    @property
    def loaded(self) -> bool:
        return self.state in (SymbolState.LOADED, SymbolState.DAMAGED)

    @property
    def corrupt(self) -> bool:
        """Damaged lines were skipped, or rust-minidump would refuse the file (JSON `corrupt_symbols`)."""
        return self.state is SymbolState.DAMAGED or (self.loaded and self.rust_minidump_rejects)

    @property
    def missing(self) -> bool:
        """Looked for and not loaded (rust-minidump's `missing_symbols`)."""
        return self.requested and not self.loaded

    @classmethod
    def of(cls, symbols: ModuleSymbols) -> ModuleSymbolSummary:
        url = None
        if symbols.symbol_file is not None:
            url = symbols.symbol_file.info.url
        return cls(
            _STATE_BY_STATUS[symbols.status],
            None if symbols.path is None else str(symbols.path),
            symbols.tried,
            symbols.found_by,
            symbols.damage,
            symbols.error,
            url,
            symbols.load_seconds,
            symbols.rust_minidump_corrupt,
        )


NOT_REQUESTED = ModuleSymbolSummary(SymbolState.NOT_REQUESTED)


@dataclass(frozen=True, slots=True)
class ModuleEntry:
    index: int
    module: Module
    symbols: ModuleSymbolSummary = NOT_REQUESTED


@dataclass(frozen=True, slots=True)
class LsbRelease:
    id: str
    release: str
    codename: str
    description: str


@dataclass(frozen=True, slots=True)
class Problem:
    """Damage found in the inputs: in the dump (with its offset) or in a symbol file."""

    source: str  # "dump", "symbols", "symbol path"
    code: str
    message: str
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class ProcessState:
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

    @property
    def main_module(self) -> int | None:
        """rust-minidump's main module: the first of the module list."""
        return 0 if self.modules else None

    @property
    def crashed(self) -> bool:
        return self.crash is not None

    @property
    def crashing_thread(self) -> CallStack | None:
        return None if self.requesting_thread is None else self.threads[self.requesting_thread]


# ---- events ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DumpLoaded:
    """The dump is read; threads have only their context frame, nothing is unwound yet."""

    state: ProcessState


@dataclass(frozen=True, slots=True)
class SymbolsLoaded:
    module_index: int
    symbols: ModuleSymbolSummary


@dataclass(frozen=True, slots=True)
class FrameWalked:
    thread_index: int
    frame: StackFrame


@dataclass(frozen=True, slots=True)
class ThreadWalked:
    thread_index: int
    call_stack: CallStack


@dataclass(frozen=True, slots=True)
class Progress:
    symbols_requested: int
    symbols_loaded: int
    threads_walked: int
    threads_total: int


@dataclass(frozen=True, slots=True)
class Finished:
    state: ProcessState


ProcessEvent = DumpLoaded | SymbolsLoaded | FrameWalked | ThreadWalked | Progress | Finished


# ---- processing ------------------------------------------------------------------------------


def process(
    dump: Minidump | str | os.PathLike[str],
    options: ProcessOptions | None = None,
    *,
    cancel: CancelToken = NEVER,
) -> ProcessState:
    """Process a dump completely (drains `process_events`)."""
    state: ProcessState | None = None
    for event in process_events(dump, options, cancel=cancel):
        if isinstance(event, Finished):
            state = event.state
    assert state is not None
    return state


def process_events(
    dump: Minidump | str | os.PathLike[str],
    options: ProcessOptions | None = None,
    *,
    cancel: CancelToken = NEVER,
) -> Iterator[ProcessEvent]:
    """Process a dump, yielding events (see the module docstring). A path is opened and closed here."""
    options = options or ProcessOptions()
    if isinstance(dump, Minidump):
        yield from _process(dump, options, cancel)
        return
    opened = Minidump.open(dump)
    try:
        yield from _process(opened, options, cancel)
    finally:
        opened.close()


def _process(dump: Minidump, options: ProcessOptions, cancel: CancelToken) -> Iterator[ProcessEvent]:
    dump.parse_all()
    _check_usable(dump)
    supplier = SymbolSupplier(
        options.symbol_paths, cache=options.index_cache(), code_id_fallback=options.code_id_fallback
    )
    # Without symbol paths there is no symbolizer at all (as minidump-stackwalk): no module
    # counts as "looked for", so none is reported missing.
    symbolizer = Symbolizer(supplier, cancel=cancel) if options.symbol_paths else None
    state = _unwalked_state(dump, options, supplier)
    yield DumpLoaded(state)
    env = WalkEnvironment(
        cpu=dump.cpu, os=dump.os, modules=dump.modules, symbolizer=symbolizer, options=options.walk
    )
    key_to_index: dict[tuple[str, str, str, str], list[int]] = {}
    for entry in state.modules:
        key_to_index.setdefault(module_key(entry.module), []).append(entry.index)
    module_symbols: dict[int, ModuleSymbolSummary] = {}
    seen_loaded = 0

    def new_symbols() -> Iterator[SymbolsLoaded]:
        nonlocal seen_loaded
        if symbolizer is None:
            return
        progress = symbolizer.progress
        if progress.loaded == seen_loaded:
            return
        seen_loaded = progress.loaded
        for key, symbols in symbolizer.statuses().items():
            for index in key_to_index.get(key, ()):
                if index not in module_symbols:
                    summary = ModuleSymbolSummary.of(symbols)
                    module_symbols[index] = summary
                    yield SymbolsLoaded(index, summary)

    threads = list(state.threads)
    order = list(range(len(threads)))
    if state.requesting_thread is not None:
        order.remove(state.requesting_thread)
        order.insert(0, state.requesting_thread)
    walked = 0
    budget = options.walk.dump_frame_limit
    # Threads starting from the same registers on the same stack bytes have the same walk: a
    # hostile dump may point thousands of threads at one long stack. Walked once, shared.
    walks: dict[tuple[object, ...], tuple[tuple[StackFrame, ...], Termination | None]] = {}
    try:
        for thread_index in order:
            stack = threads[thread_index]
            if stack.info is CallStackInfo.OK:
                thread = dump.threads[thread_index]
                context = dump.thread_context(thread)
                assert context is not None
                region = dump.stack_region_for(thread, context)
                key = (
                    context.layout,
                    context.values,
                    context.valid,
                    None if region is None else (region.base, region.size, region.rva),
                )
                termination: Termination | None = None
                frames: list[StackFrame] = []
                if key in walks:
                    shared, termination = walks[key]
                    frames = list(shared)
                    for frame in shared:
                        yield FrameWalked(thread_index, frame)
                else:
                    for event in walk_stack(
                        context,
                        region,
                        env,
                        unloaded_modules=dump.unloaded_modules,
                        cancel=cancel,
                        frame_budget=max(1, budget),
                    ):
                        if isinstance(event, Termination):
                            termination = event
                            break
                        frames.append(event)
                        yield from new_symbols()
                        yield FrameWalked(thread_index, event)
                    budget -= len(frames)
                    walks[key] = (tuple(frames), termination)
                stack = replace(
                    stack,
                    frames=tuple(frames),
                    termination=termination,
                    stack_region=None if region is None else AddressRange(region.base, region.end),
                )
                threads[thread_index] = stack
            walked += 1
            yield ThreadWalked(thread_index, stack)
            if symbolizer is None:
                yield Progress(0, 0, walked, len(threads))
            else:
                progress = symbolizer.progress
                yield Progress(progress.requested, progress.loaded, walked, len(threads))
        yield from new_symbols()
        modules = tuple(
            replace(entry, symbols=module_symbols.get(entry.index, NOT_REQUESTED)) for entry in state.modules
        )
        problems = state.problems + _symbol_problems(modules) + _walk_problems(threads)
        final = replace(state, threads=tuple(threads), modules=modules, problems=problems, walked=True)
        yield Finished(final)
    finally:
        if symbolizer is not None:
            symbolizer.close()


#: What the report says about a dump whose SystemInfo stream cannot be read.
UNKNOWN_SYSTEM = SystemSummary(Os.UNKNOWN, "unknown", None, Cpu.UNKNOWN, "unknown", None, 0, None)

#: Streams of which at least one must be readable for a dump to be worth a report.
_USEFUL_STREAMS = (
    StreamType.SystemInfoStream,
    StreamType.ThreadListStream,
    StreamType.ModuleListStream,
    StreamType.ExceptionStream,
)


def _check_usable(dump: Minidump) -> None:
    """Raise `BadData` when none of the streams a report is made of could be read.

    rust-minidump refuses a dump without a readable thread list or system info. We report
    whatever is left instead (a dump cut off after its module list still names the modules
    and the crash), and refuse only a dump with none of them.
    """
    parsed = {
        StreamType.SystemInfoStream: dump.system_info,
        StreamType.ThreadListStream: dump.thread_list,
        StreamType.ModuleListStream: dump.module_list,
        StreamType.ExceptionStream: dump.exception,
    }
    if any(value is not None for value in parsed.values()):
        return
    first = next((p for p in dump.problems if p.stream_type in _USEFUL_STREAMS), None)
    why = "it has no system info, thread list, module list or exception stream"
    if first is not None:
        why = f"none of its system info, thread list, module list and exception streams can be read ({first})"
    raise BadData(f"nothing in the dump can be reported: {why}")


def _system_summary(dump: Minidump) -> SystemSummary:
    info = dump.system_info
    if info is None:  # the CPU may still be known from the thread contexts
        cpu = dump.cpu
        return replace(
            UNKNOWN_SYSTEM, cpu=cpu, cpu_arch=cpu.value, cpu_microcode_version=dump.cpu_microcode_version
        )
    version, build = info.os_parts
    return SystemSummary(
        info.os,
        info.os_name,
        f"{version} {build}" if build is not None else version,
        info.cpu,
        info.cpu_arch,
        info.cpu_info,
        info.cpu_count,
        dump.cpu_microcode_version,
    )


def _unwalked_state(dump: Minidump, options: ProcessOptions, supplier: SymbolSupplier) -> ProcessState:
    system = _system_summary(dump)
    crash = None
    exception = dump.exception
    # A damaged exception stream whose record could be read (e.g. one said to run past the end
    # of the file) still tells the crash; rust-minidump would drop it with the stream.
    if exception is not None:
        reason, address = dump.crash_reason, dump.crash_address
        assert reason is not None and address is not None
        crash = CrashSummary(reason, address, exception.thread_id)
    requesting = dump.crashing_thread_index
    threads = tuple(_unwalked_thread(dump, thread) for thread in dump.threads)
    modules = tuple(ModuleEntry(i, module) for i, module in enumerate(dump.modules))
    lsb = dump.lsb_release if _usable(dump, StreamType.LinuxLsbRelease) else None
    limits = dump.linux_limits if _usable(dump, StreamType.MozLinuxLimits) else None
    soft = dump.soft_errors if _usable(dump, StreamType.MozSoftErrors) else None
    problems = [Problem("dump", p.code, p.message, p.offset) for p in dump.problems]
    if dump.thread_list is None:
        problems.append(
            Problem("dump", "NoThreadList", "the dump has no readable thread list: no thread is shown")
        )
    if dump.system_info is None and dump.cpu is Cpu.UNKNOWN:
        problems.append(
            Problem(
                "dump",
                "NoSystemInfo",
                "the dump has no readable system info: the OS and CPU are unknown, "
                "so no thread has registers",
            )
        )
    problems += [Problem("symbol path", "SymbolPath", f"{p.path}: {p.reason}") for p in supplier.problems]
    return ProcessState(
        path=None if dump.path is None else str(dump.path),
        dump_time=dump.header.time_date_stamp,
        system=system,
        crash=crash,
        requesting_thread=requesting,
        threads=threads,
        modules=modules,
        unloaded_modules=tuple(dump.unloaded_modules),
        memory=dump.memory,
        assertion=dump.assertion.describe()
        if dump.assertion is not None and _usable(dump, StreamType.AssertionInfoStream)
        else None,
        process_id=dump.process_id,
        process_create_time=dump.process_create_time,
        process_uptime=dump.process_uptime,
        linux_memory_map_count=dump.linux_memory_map_count,
        lsb_release=None
        if lsb is None
        else LsbRelease(lsb["id"], lsb["release"], lsb["codename"], lsb["description"]),
        mac_crash_info=dump.mac_crash_info if _usable(dump, StreamType.MozMacosCrashInfoStream) else None,
        mac_boot_args=dump.mac_bootargs if _usable(dump, StreamType.MozMacosBootargsStream) else None,
        proc_limits=None if limits is None else tuple(limits.limits()),
        soft_errors=None if soft is None else soft.value,
        handles=dump.handle_data if _usable(dump, StreamType.HandleDataStream) else None,
        unimplemented_streams=tuple(dump.unimplemented_streams()),
        unknown_streams=tuple(dump.unknown_streams()),
        problems=tuple(problems),
        walk_options=options.walk,
    )


def _usable(dump: Minidump, stream_type: int) -> bool:
    return dump.entry(stream_type) is not None and not dump.strictly_rejected(stream_type)


def _unwalked_thread(dump: Minidump, thread: Thread) -> CallStack:
    name = dump.thread_name(thread)
    if thread.thread_id == dump.dump_thread_id:
        # rust-minidump: the thread that wrote the dump (Breakpad's handler thread) is not walked.
        return CallStack(
            thread.index,
            thread.thread_id,
            None,
            (),
            CallStackInfo.DUMP_THREAD_SKIPPED,
            Termination(
                TerminationReason.DUMP_THREAD_SKIPPED, "this thread wrote the dump; it is not walked"
            ),
        )
    last_error = dump.last_error_value(thread)
    context = dump.thread_context(thread)
    if context is None:
        return CallStack(
            thread.index,
            thread.thread_id,
            name,
            (),
            CallStackInfo.MISSING_CONTEXT,
            Termination(TerminationReason.NO_CONTEXT, "the thread has no readable CPU context"),
            last_error_value=last_error,
        )
    ip = context.value(context.register_set.instruction_pointer)
    frame = StackFrame(0, FrameTrust.CONTEXT, context, ip, ip)
    region: MemoryRegion | None = dump.stack_region_for(thread, context)
    return CallStack(
        thread.index,
        thread.thread_id,
        name,
        (frame,),
        CallStackInfo.OK,
        None,
        None if region is None else AddressRange(region.base, region.end),
        last_error,
    )


def _symbol_problems(modules: tuple[ModuleEntry, ...]) -> tuple[Problem, ...]:
    out = []
    for entry in modules:
        symbols = entry.symbols
        name = entry.module.filename
        if symbols.state is SymbolState.DAMAGED and symbols.damage is not None:
            out.append(
                Problem("symbols", "DamagedSymbols", f"{name}: {symbols.path}: {symbols.damage.summary()}")
            )
        if symbols.loaded and symbols.rust_minidump_rejects and symbols.damage is not None:
            why = []
            if symbols.damage.missing_final_newline:
                why.append("no final newline")
            if symbols.damage.old_inline_syntax:
                why.append("old INLINE syntax")
            if symbols.damage.damaged:
                why.append("damaged lines")
            out.append(
                Problem(
                    "symbols",
                    "RustMinidumpRejects",
                    f"{name}: {symbols.path}: rust-minidump would refuse this file ({', '.join(why)}); "
                    "its names are shown, but the walk ignores it as rust-minidump does",
                )
            )
        elif symbols.state is SymbolState.UNREADABLE:
            out.append(Problem("symbols", "UnreadableSymbols", f"{name}: {symbols.path}: {symbols.error}"))
    return tuple(out)


def _walk_problems(threads: list[CallStack]) -> tuple[Problem, ...]:
    """Walks cut short by the frame limit (a runaway or hostile stack): the report must say so."""
    return tuple(
        Problem(
            "walk",
            "FrameLimit",
            f"thread {stack.thread_index} (id {stack.thread_id:#x}): {stack.termination.message}; "
            "the frames beyond it are not shown",
        )
        for stack in threads
        if stack.termination is not None
        and stack.termination.reason in (TerminationReason.MAX_FRAMES, TerminationReason.DUMP_FRAME_BUDGET)
    )


def last_error_name(value: int | None) -> str | None:
    """JSON `last_error_value`: the Windows error name rust-minidump prints, None when not captured."""
    return None if value is None else windows_error_name(value)
