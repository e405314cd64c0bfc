"""A dump and symbol paths → `ProcessState` (every thread walked), as a generator of events.

`process_events(dump, options, cancel=)` yields, in order:

* `DumpLoaded(state)` — right after the dump is read: system and crash info, modules,
  memory, and every thread with only its context frame (nothing unwound yet);
* while walking (crashing thread first, then the others in dump order):
  `SymbolsLoaded(module_index, symbols)` when a module's symbols were looked for, and
  with symbol servers also whenever its download changes (queued, downloading with
  the bytes received, downloaded, not on server, failed);
  `FrameWalked(thread_index, frame)` for every frame as soon as it is known,
  `ThreadWalked(thread_index, call_stack)` when a thread is done, and
  `Progress(...)` after each thread (and, with servers, as downloads go);
* `Finished(state)` with everything.

Threads that start from the same registers on the same stack bytes share one walk (its
frames are yielded again for each of them), and the frames of all threads together are
capped (`WalkOptions.dump_frame_limit`, 250 000): a hostile dump can point thousands of
threads at one long stack. A walk cut short by that cap or by the per-thread frame limit
ends with its `Termination` and is named in `problems`. The cancel token is checked
between frames (`Cancelled` is raised). Every event carries only frozen data, so a GUI
worker can forward it to the UI thread as it is. `process(...)` drains the generator and
returns the final state.

With symbol servers (`ProcessOptions.symbol_servers`), the modules that the threads'
registers and stack words point into are queued for download before the walk starts
(`ServerSymbolSupplier.prefetch`, at most `parallel` at once), and the walk runs on a
helper thread so that download events keep coming while it waits for a file; downloads
the walk did not need are stopped when it is done.

rust-minidump refuses a dump without a readable thread list or system info stream; we
report whatever the dump still holds, with the damage in `problems` (a dump without a
thread list still has its modules and crash reason; without system info the CPU is taken
from the thread contexts' flags, and if they do not tell it either, no thread has
registers). Only a dump in which none of the system info, thread list, module list and
exception streams can be read raises `MinidumpError` (`BadData`), before anything is
yielded and before any symbol server is contacted.
"""

from __future__ import annotations

import enum
import logging
import os
import queue
import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.dumpfile import as_microdump, open_any_dump
from inspector.core.minidump import (
    CpuContext,
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
    DownloadState,
    DownloadStatus,
    IndexCache,
    ModuleSymbols,
    Symbolizer,
    SymbolMatch,
    SymbolStatus,
    SymbolSupplier,
    module_key,
)
from inspector.core.types import AddressRange, Cpu, Os

if TYPE_CHECKING:
    from inspector.core.analysis import CodeBytesProvider, CrashAnalysis
    from inspector.core.microdump.dump import MicrodumpInfo
    from inspector.core.symbols.server_supplier import ServerSymbolSupplier, SymbolServerOptions
from inspector.core.unwind import (
    CallStack,
    CallStackInfo,
    FrameTrust,
    StackFrame,
    Termination,
    TerminationReason,
    WalkEnvironment,
    WalkOptions,
    WalkPolicy,
    walk_stack,
)

log = logging.getLogger(__name__)


# ---- options -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProcessOptions:
    """What to process a dump with.

    `symbols_cache`: the index cache directory (None: the user cache directory);
    `use_symbols_cache=False` keeps no cache. `code_id_fallback`: also look symbols up by
    code id for modules that have a debug id (rust-minidump does that only with a symbol
    server, so it is off by default; modules without a debug id are always looked up by code id).
    `symbol_servers`: servers to download missing symbol files from, into a download
    cache searched after the symbol paths (None or no servers and no cache: none).
    `microdump_policy`: the walk policy for microdumps, which only Breakpad reads (None:
    `walk.policy`, as for minidumps).
    """

    symbol_paths: tuple[str | os.PathLike[str], ...] = ()
    symbols_cache: str | os.PathLike[str] | None = None
    use_symbols_cache: bool = True
    code_id_fallback: bool = False
    walk: WalkOptions = field(default_factory=WalkOptions)
    symbol_servers: SymbolServerOptions | None = None
    #: where the crash analysis reads code the dump lacks (None: module files at their recorded
    #: path or by name in the symbol paths, identity checked; () reads none)
    code_providers: tuple[CodeBytesProvider, ...] | None = None
    microdump_policy: WalkPolicy | None = WalkPolicy.BREAKPAD

    @property
    def uses_servers(self) -> bool:
        return self.symbol_servers is not None and self.symbol_servers.enabled

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
    download: DownloadStatus | None = None  # symbol servers: the module's download, even if not requested
    match: SymbolMatch | None = None  # loaded: matched by debug id or code id, and what the file says it is

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
        )

    @property
    def status_text(self) -> str:
        """One line for people: the symbol state, with the download's when there is one."""
        download = self.download
        if download is None:
            return self.state.value
        if self.state is SymbolState.NOT_REQUESTED or not download.state.settled:
            return download.text
        if self.loaded and download.state is DownloadState.CACHED:
            return f"{self.state.value} (download cache{', ' + self.symbol_url if self.symbol_url else ''})"
        if self.loaded:
            return f"{self.state.value}, {download.text}"
        return download.text


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
    analysis: CrashAnalysis | None = None  # the crashing instruction & co. (inspector.core.analysis)
    microdump: MicrodumpInfo | None = None  # what only a microdump says (None for a minidump)

    @property
    def main_module(self) -> int | None:
        """rust-minidump's main module: the first of the module list (none in a microdump, as in Breakpad)."""
        return 0 if self.modules and self.microdump is None else None

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
    downloads_active: int = 0  # queued or running
    downloads_done: int = 0  # finished, whatever the outcome
    downloads_failed: int = 0


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
    opened = open_any_dump(dump)
    try:
        yield from _process(opened, options, cancel)
    finally:
        opened.close()


def _process(dump: Minidump, options: ProcessOptions, cancel: CancelToken) -> Iterator[ProcessEvent]:
    dump.parse_all()
    if as_microdump(dump) is not None and options.microdump_policy is not None:
        # Breakpad's microdump_stackwalk is the reference for microdumps (rust-minidump reads none)
        options = replace(options, walk=replace(options.walk, policy=options.microdump_policy))
    _check_usable(dump)
    # With servers the walk runs on a helper thread; its own token lets us stop it when
    # our consumer stops early (the caller's token cancels it too).
    walk_cancel = cancel.child() if options.uses_servers else cancel
    supplier: SymbolSupplier
    server_supplier: ServerSymbolSupplier | None = None
    servers = options.symbol_servers
    if servers is not None and options.uses_servers:
        from inspector.core.symbols.server_supplier import ServerSymbolSupplier  # HTTP only when needed

        supplier = server_supplier = ServerSymbolSupplier(
            options.symbol_paths,
            servers,
            cache=options.index_cache(),
            code_id_fallback=options.code_id_fallback,
            cancel=walk_cancel,
        )
    else:
        supplier = SymbolSupplier(
            options.symbol_paths, cache=options.index_cache(), code_id_fallback=options.code_id_fallback
        )
    # Without symbol paths (or servers) there is no symbolizer at all (as minidump-stackwalk):
    # no module counts as "looked for", so none is reported missing.
    symbolizer = (
        Symbolizer(supplier, cancel=walk_cancel) if options.symbol_paths or options.uses_servers else None
    )
    try:
        starts = _thread_starts(dump)
        state = _unwalked_state(dump, options, supplier, starts)
        yield DumpLoaded(state)
        order = list(range(len(state.threads)))
        if state.requesting_thread is not None:
            order.remove(state.requesting_thread)
            order.insert(0, state.requesting_thread)
        if server_supplier is not None and server_supplier.options.prefetch:
            server_supplier.prefetch(_modules_pointed_at(dump, order, starts))
        tracker = _SymbolTracker(state, symbolizer, server_supplier)
        walk = _walk_threads(
            dump,
            state=state,
            starts=starts,
            order=order,
            symbolizer=symbolizer,
            options=options,
            cancel=walk_cancel,
        )
        if server_supplier is None:
            threads = yield from _forward(walk, tracker)
        else:
            threads = yield from _forward_from_thread(walk, tracker, cancel, walk_cancel)
            # downloads the walk did not need in the end are stopped, not waited for
            server_supplier.stop_downloads()
        yield from tracker.changes()
        modules = tuple(replace(entry, symbols=tracker.summary(entry.index)) for entry in state.modules)
        problems = state.problems + _symbol_problems(modules) + _walk_problems(threads)
        final = replace(state, threads=tuple(threads), modules=modules, problems=problems, walked=True)
        yield Finished(final)
    finally:
        if symbolizer is not None:
            symbolizer.close()
        else:
            supplier.close()


class _SymbolTracker:
    """Turns the symbolizer's and the downloads' states into `SymbolsLoaded` / `Progress` events."""

    def __init__(
        self, state: ProcessState, symbolizer: Symbolizer | None, supplier: ServerSymbolSupplier | None
    ) -> None:
        self.symbolizer = symbolizer
        self.supplier = supplier
        self.key_of = {entry.index: module_key(entry.module) for entry in state.modules}
        self.key_to_index: dict[tuple[str, str, str, str], list[int]] = {}
        for index, key in self.key_of.items():
            self.key_to_index.setdefault(key, []).append(index)
        self.requested: dict[int, ModuleSymbolSummary] = {}
        self.shown: dict[int, ModuleSymbolSummary] = {}
        self.downloads: dict[tuple[str, str, str, str], DownloadStatus] = {}
        self.seen_loaded = 0
        self.seen_downloads = -1
        self.threads_walked = 0
        self.threads_total = len(state.threads)

    def summary(self, index: int) -> ModuleSymbolSummary:
        """The module's final summary: what the walk asked for, with its latest download."""
        return self.shown.get(index, NOT_REQUESTED)

    def changes(self) -> Iterator[ProcessEvent]:
        """Events for what changed since the last call (cheap when nothing did)."""
        changed: set[int] = set()
        symbolizer = self.symbolizer
        if symbolizer is not None:
            progress = symbolizer.progress
            if progress.loaded != self.seen_loaded:
                self.seen_loaded = progress.loaded
                for key, symbols in symbolizer.statuses().items():
                    for index in self.key_to_index.get(key, ()):
                        if index not in self.requested:
                            self.requested[index] = ModuleSymbolSummary.of(symbols)
                            changed.add(index)
        if self.supplier is not None and self.supplier.download_version != self.seen_downloads:
            version, statuses = self.supplier.download_statuses()
            if version != self.seen_downloads:
                self.seen_downloads = version
                for key, status in statuses.items():
                    if self.downloads.get(key) != status:
                        self.downloads[key] = status
                        changed.update(self.key_to_index.get(key, ()))
                for key in self.downloads.keys() - statuses.keys():  # dropped prefetches
                    del self.downloads[key]
                    changed.update(self.key_to_index.get(key, ()))
        for index in sorted(changed):
            summary = self.requested.get(index, NOT_REQUESTED)
            download = self.downloads.get(self.key_of[index])
            if download is not None and (summary.download is None or not summary.requested):
                summary = replace(summary, download=download)
            if self.shown.get(index) != summary:
                self.shown[index] = summary
                yield SymbolsLoaded(index, summary)
        if changed and self.supplier is not None:
            yield self.progress()

    def progress(self) -> Progress:
        requested = loaded = 0
        if self.symbolizer is not None:
            p = self.symbolizer.progress
            requested, loaded = p.requested, p.loaded
        active = done = failed = 0
        for status in self.downloads.values():
            if not status.state.settled:
                active += 1
            elif status.state in (DownloadState.DOWNLOADED, DownloadState.NOT_ON_SERVER):
                done += 1
            elif status.state is DownloadState.FAILED:
                done += 1
                failed += 1
        return Progress(requested, loaded, self.threads_walked, self.threads_total, active, done, failed)


@dataclass(frozen=True, slots=True)
class _ThreadDone:
    """The walk finished a thread (the progress event is made by the tracker)."""


_WalkItem = FrameWalked | ThreadWalked | _ThreadDone


def _walk_threads(
    dump: Minidump,
    *,
    state: ProcessState,
    starts: list[_ThreadStart],
    order: list[int],
    symbolizer: Symbolizer | None,
    options: ProcessOptions,
    cancel: CancelToken,
) -> Generator[_WalkItem, None, list[CallStack]]:
    env = WalkEnvironment(
        cpu=dump.cpu, os=dump.os, modules=dump.modules, symbolizer=symbolizer, options=options.walk
    )
    threads = list(state.threads)
    budget = options.walk.dump_frame_limit
    # Threads starting from the same registers on the same stack bytes have the same walk: a
    # hostile dump may point thousands of threads at one long stack. Walked once, shared.
    walks: dict[tuple[object, ...], tuple[tuple[StackFrame, ...], Termination | None]] = {}
    for thread_index in order:
        stack = threads[thread_index]
        if stack.info is CallStackInfo.OK:
            context, region = starts[thread_index].context, starts[thread_index].stack
            assert context is not None
            key = (
                context.layout,
                context.values,
                context.valid,
                None if region is None else (region.base, region.size, region.rva),
            )
            termination: Termination | None = None
            frames: tuple[StackFrame, ...]
            if key in walks:
                frames, termination = walks[key]
                for frame in frames:
                    yield FrameWalked(thread_index, frame)
            else:
                walked: list[StackFrame] = []
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
                    walked.append(event)
                    yield FrameWalked(thread_index, event)
                frames = tuple(walked)
                budget -= len(frames)
                walks[key] = (frames, termination)
            stack = replace(stack, frames=frames, termination=termination)
            threads[thread_index] = stack
        yield ThreadWalked(thread_index, stack)
        yield _ThreadDone()
    return threads


def _forward(
    walk: Generator[_WalkItem, None, list[CallStack]], tracker: _SymbolTracker
) -> Generator[ProcessEvent, None, list[CallStack]]:
    """The walk's events in this thread, each preceded by the symbol changes it caused."""
    while True:
        try:
            item = next(walk)
        except StopIteration as stop:
            threads: list[CallStack] = stop.value
            return threads
        yield from _emit(item, tracker)


def _emit(item: _WalkItem, tracker: _SymbolTracker) -> Iterator[ProcessEvent]:
    yield from tracker.changes()
    if isinstance(item, _ThreadDone):
        tracker.threads_walked += 1
        yield tracker.progress()
    else:
        yield item


_POLL_SECONDS = 0.1


def _forward_from_thread(
    walk: Generator[_WalkItem, None, list[CallStack]],
    tracker: _SymbolTracker,
    cancel: CancelToken,
    walk_cancel: CancelToken,
) -> Generator[ProcessEvent, None, list[CallStack]]:
    """Run the walk on a helper thread; forward its events, and download events while it waits."""
    items: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=256)

    def put(kind: str, value: object) -> None:
        while True:
            try:
                items.put((kind, value), timeout=_POLL_SECONDS)
                return
            except queue.Full:
                if walk_cancel.cancelled:
                    return

    def run() -> None:
        try:
            while True:
                try:
                    item = next(walk)
                except StopIteration as stop:
                    put("done", stop.value)
                    return
                put("item", item)
        except BaseException as exc:  # handed to the consuming thread, which raises it
            put("error", exc)

    worker = threading.Thread(target=run, name="stackwalk", daemon=True)
    worker.start()
    try:
        while True:
            try:
                kind, value = items.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if cancel.cancelled:
                    walk_cancel.cancel()
                yield from tracker.changes()
                continue
            if kind == "done":
                return value  # type: ignore[return-value]
            if kind == "error":
                assert isinstance(value, BaseException)
                raise value
            yield from _emit(value, tracker)  # type: ignore[arg-type]
    finally:
        if worker.is_alive():  # our consumer stopped early: stop the walk too
            walk_cancel.cancel()
        worker.join()


def _modules_pointed_at(
    dump: Minidump, order: list[int], starts: list[_ThreadStart], stack_bytes: int = 64 * 1024
) -> list[Module]:
    """Modules a walk is likely to need, most urgent first: for each thread (crashing first)
    the module of its instruction pointer, of its other registers, then of the words on its
    stack from the stack pointer up (the return addresses CFI, frame pointers and scans read).
    """
    modules = dump.modules
    out: list[Module] = []
    seen: set[int] = set()
    looked: set[int] = set()
    # A hostile dump may point thousands of threads at one long stack (as for shared walks):
    # each stack window is read once, and each value looked up once.
    scanned: set[tuple[int, int, int]] = set()

    def add(value: int) -> None:
        if value in looked:
            return
        looked.add(value)
        index = modules.index_at(value)
        if index is not None and index not in seen:
            seen.add(index)
            out.append(modules[index])

    width = 4 if dump.cpu.pointer_width == 4 else 8
    for thread_index in order:
        context, region = starts[thread_index].context, starts[thread_index].stack
        if context is None:
            continue
        ip = context.instruction_pointer
        if ip is not None:
            add(ip)
        for _, value in context.valid_registers():
            add(value)
        sp = context.stack_pointer
        if sp is None or region is None or not region.contains(sp):
            continue
        start = sp - region.base
        start -= start % width
        window = (region.base, region.rva, start)
        if window in scanned:
            continue
        scanned.add(window)
        data = region.data[start : start + stack_bytes]
        data = data[: len(data) - len(data) % width]
        words = data.cast("I" if width == 4 else "Q") if region.endian == "<" else ()
        for value in dict.fromkeys(words):
            add(value)
    return out


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


def _unwalked_state(
    dump: Minidump, options: ProcessOptions, supplier: SymbolSupplier, starts: list[_ThreadStart]
) -> ProcessState:
    system = _system_summary(dump)
    crash = None
    analysis = None
    problems_from_analysis: list[Problem] = []
    exception = dump.exception
    # A damaged exception stream whose record could be read (e.g. one said to run past the end
    # of the file) still tells the crash; rust-minidump would drop it with the stream.
    if exception is not None:
        reason, address = dump.crash_reason, dump.crash_address
        assert reason is not None and address is not None
        crash = CrashSummary(reason, address, exception.thread_id)
        analysis = _crash_analysis(dump, system, crash, options)
        problems_from_analysis = [Problem("dump", p.code, p.message) for p in analysis.problems]
    requesting = dump.crashing_thread_index
    threads = tuple(_unwalked_thread(dump, thread, starts[thread.index]) for thread in dump.threads)
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
    problems += problems_from_analysis
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
        analysis=analysis,
        microdump=None if (microdump := as_microdump(dump)) is None else microdump.info,
    )


def _crash_analysis(
    dump: Minidump, system: SystemSummary, crash: CrashSummary, options: ProcessOptions
) -> CrashAnalysis:
    """The crashing instruction and what follows from it (the disassemblers load only now)."""
    from inspector.core.analysis.from_dump import analyze_dump, module_file_finder

    providers = options.code_providers
    if providers is None:
        providers = (module_file_finder(options.symbol_paths),)
    return analyze_dump(
        dump,
        cpu=system.cpu,
        os_=system.os,
        reason=crash.reason,
        address=crash.address,
        code_providers=providers,
    )


def _usable(dump: Minidump, stream_type: int) -> bool:
    return dump.entry(stream_type) is not None and not dump.strictly_rejected(stream_type)


@dataclass(frozen=True, slots=True)
class _ThreadStart:
    """Where a walk of a thread starts: its context (the exception's for the crashing thread) and stack."""

    context: CpuContext | None
    stack: MemoryRegion | None


def _thread_starts(dump: Minidump) -> list[_ThreadStart]:
    """Each thread's start, worked out once for the unwalked state, the prefetch and the walk."""
    starts = []
    for thread in dump.threads:
        context = dump.thread_context(thread)
        starts.append(_ThreadStart(context, dump.stack_region_for(thread, context)))
    return starts


def _unwalked_thread(dump: Minidump, thread: Thread, start: _ThreadStart) -> CallStack:
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
    context, region = start.context, start.stack
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
