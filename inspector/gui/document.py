"""What the GUI knows about the open dump: immutable snapshots from the worker, collected on the GUI thread.

Nothing here imports Qt. The worker builds a `DumpSnapshot` (threads with
their starting contexts and stack regions, modules, memory, the crash summary
and the reader's problems) and `ModuleSymbolState`s, and forwards the
stackwalker's frames and call stacks; all are frozen and safe to hand across
threads. `Document` is the GUI thread's collection of them for one analysis,
updated only by `Session` as events arrive; it also keeps the trace trees
built from the frames (`unwind_trace`), built when a pane first asks.
"""

from __future__ import annotations

import datetime
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from inspector.core.dumpfile import as_microdump
from inspector.core.minidump import CpuContext, MemoryRegion, MemoryView, Minidump, ModuleList
from inspector.core.minidump.errors import StreamProblem
from inspector.core.minidump.format import StreamType, stream_type_name
from inspector.core.process import ModuleSymbolSummary, SymbolState
from inspector.core.process import Problem as WalkProblem
from inspector.core.symbols import (
    DownloadState,
    DownloadStatus,
    MatchedBy,
    PathProblem,
    SymbolMatch,
    SymbolServerOptions,
)
from inspector.core.types import Cpu, Os, format_address
from inspector.core.unwind import CallStack, ScanDetail, StackFrame, Termination, UnwindStep
from inspector.gui.unwind_trace import (
    Decision,
    StackMark,
    TraceNode,
    build_frame_trace,
    decisions_of,
    frame_extents,
    stack_marks,
)


@dataclass(frozen=True, slots=True)
class AnalysisRequest:
    """What to analyse: a dump, the symbol paths to search (in order), where symbol indexes are
    cached, and the symbol servers to download missing files from (None: none)."""

    dump_path: Path
    symbol_paths: tuple[Path, ...] = ()
    cache_dir: Path | None = None
    symbol_servers: SymbolServerOptions | None = None


# ---- the dump as the reader saw it ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CrashSummary:
    """The facts of the summary header; None where the dump does not say."""

    os_name: str | None
    os_version: str | None
    cpu_arch: str | None
    cpu_info: str | None
    cpu_count: int | None
    crash_reason: str | None
    crash_address: int | None
    crashing_thread: int | None
    assertion: str | None
    process_id: int | None
    process_uptime: int | None
    dump_time: int | None


class ContextSource(enum.Enum):
    """Where a thread's starting registers come from."""

    EXCEPTION = "exception record"
    THREAD = "thread list"
    NONE = "no context"


@dataclass(frozen=True, slots=True, eq=False)
class ThreadEntry:
    """One thread before any unwinding: its registers and the stack memory a walk would read."""

    index: int
    thread_id: int
    name: str | None
    context: CpuContext | None
    context_source: ContextSource
    stack: MemoryRegion | None
    is_crashing: bool

    @property
    def instruction_pointer(self) -> int | None:
        return None if self.context is None else self.context.instruction_pointer

    @property
    def stack_pointer(self) -> int | None:
        return None if self.context is None else self.context.stack_pointer

    @property
    def label(self) -> str:
        """`#2 renderer` (or `#2` without a name)."""
        return f"#{self.index} {self.name}" if self.name else f"#{self.index}"


class PointerKind(enum.Enum):
    MODULE = "module"
    STACK = "stack"


@dataclass(frozen=True, slots=True)
class PointerTarget:
    """What a word that looks like a pointer points into."""

    kind: PointerKind
    text: str
    module_index: int | None = None
    thread_index: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class DumpSnapshot:
    """Everything the reader got out of one dump, parsed completely in the worker.

    After `Minidump.parse_all()` every stream is cached, so reading these
    fields (and the memory regions, read-only views of the mapping) from the
    GUI thread does no parsing and no file I/O beyond touching mapped pages.
    """

    path: Path
    file_size: int
    cpu: Cpu
    os: Os
    pointer_width: int
    summary: CrashSummary
    threads: tuple[ThreadEntry, ...]
    modules: ModuleList
    memory: MemoryView
    problems: tuple[StreamProblem, ...]
    dump: Minidump | None = field(default=None, repr=False)

    @classmethod
    def from_dump(cls, dump: Minidump) -> DumpSnapshot:
        """Parse every stream of `dump` and collect what the panes show (runs in the worker)."""
        dump.parse_all()
        info = dump.system_info
        crashing = dump.crashing_thread_index
        exception_context = dump.exception.context if dump.exception is not None else None
        threads = []
        for thread in dump.threads:
            context = dump.thread_context(thread)
            if context is None:
                source = ContextSource.NONE
            elif thread.index == crashing and context is exception_context:
                source = ContextSource.EXCEPTION
            else:
                source = ContextSource.THREAD
            threads.append(
                ThreadEntry(
                    index=thread.index,
                    thread_id=thread.thread_id,
                    name=dump.thread_name(thread),
                    context=context,
                    context_source=source,
                    stack=dump.stack_region_for(thread, context),
                    is_crashing=thread.index == crashing,
                )
            )
        assertion = dump.assertion
        if assertion is not None and not (
            assertion.type or assertion.expression or assertion.function or assertion.file or assertion.line
        ):
            # Some writers (Electron/Crashpad on Windows) emit an all-zero AssertionInfo stream: it says
            # nothing, and "Unknown assertion type 0x00000000" in the header would only mislead.
            assertion = None
        summary = CrashSummary(
            os_name=info.os_name if info else None,
            os_version=info.os_ver if info else None,
            cpu_arch=info.cpu_arch if info else None,
            cpu_info=info.cpu_info if info else None,
            cpu_count=info.cpu_count if info else None,
            crash_reason=dump.crash_reason,
            crash_address=dump.crash_address,
            crashing_thread=crashing,
            assertion=assertion.describe() if assertion is not None else None,
            process_id=dump.process_id,
            process_uptime=dump.process_uptime,
            dump_time=dump.header.time_date_stamp or None,
        )
        return cls(
            path=dump.path or Path("<memory>"),
            file_size=dump.size,
            cpu=dump.cpu,
            os=dump.os,
            pointer_width=dump.pointer_width,
            summary=summary,
            threads=tuple(threads),
            modules=dump.modules,
            memory=dump.memory,
            problems=dump.problems,
            dump=dump,
        )

    def close(self) -> None:
        """Release the dump's mapping (views still held elsewhere keep it alive until dropped)."""
        if self.dump is not None:
            self.dump.close()

    # ---- lookups for the panes ----

    def format_address(self, value: int) -> str:
        return format_address(value, self.pointer_width)

    def module_index_at(self, address: int) -> int | None:
        return self.modules.index_at(address)

    def describe_code_address(self, address: int) -> str:
        """`libc.so.6 + 0x85f16`, or the bare address when no module holds it."""
        module = self.modules.module_at(address)
        if module is None:
            return self.format_address(address)
        return f"{module.filename} + {address - module.base:#x}"

    def thread_with_stack_at(self, address: int) -> ThreadEntry | None:
        for thread in self.threads:
            if thread.stack is not None and thread.stack.contains(address):
                return thread
        return None

    def describe_pointer(self, value: int) -> PointerTarget | None:
        """What `value` points into if it is an address in a module or in a thread's stack."""
        if value < 0x1000:
            return None
        index = self.modules.index_at(value)
        if index is not None:
            module = self.modules[index]
            return PointerTarget(
                PointerKind.MODULE, f"{module.filename} + {value - module.base:#x}", module_index=index
            )
        thread = self.thread_with_stack_at(value)
        if thread is not None:
            return PointerTarget(PointerKind.STACK, f"stack of {thread.label}", thread_index=thread.index)
        return None

    @property
    def crashing_thread(self) -> ThreadEntry | None:
        index = self.summary.crashing_thread
        if index is None or not 0 <= index < len(self.threads):
            return None
        return self.threads[index]

    @property
    def dump_time_text(self) -> str | None:
        stamp = self.summary.dump_time
        if stamp is None:
            return None
        try:
            when = datetime.datetime.fromtimestamp(stamp, tz=datetime.UTC)
        except (OverflowError, OSError, ValueError):
            return f"{stamp:#x} (not a valid time)"
        return when.strftime("%Y-%m-%d %H:%M:%S UTC")


# ---- symbols as the GUI shows them ----------------------------------------------------------------


class SymbolLoadState(enum.Enum):
    PENDING = "pending"
    LOADED = "loaded"
    DAMAGED = "damaged"
    MISSING = "missing"
    NO_IDENTIFIER = "no identifier"
    UNREADABLE = "unreadable"
    NOT_LOADED = "not loaded"
    NOT_NEEDED = "not needed"

    @property
    def lacks_symbols(self) -> bool:
        """Symbols were looked for and none are usable."""
        return self in _LACKING

    @property
    def settled(self) -> bool:
        """The lookup is over (whatever its outcome)."""
        return self is not SymbolLoadState.PENDING


_LACKING = frozenset({SymbolLoadState.MISSING, SymbolLoadState.NO_IDENTIFIER, SymbolLoadState.UNREADABLE})

_STATE_OF_SUMMARY = {
    SymbolState.LOADED: SymbolLoadState.LOADED,
    SymbolState.DAMAGED: SymbolLoadState.DAMAGED,
    SymbolState.MISSING: SymbolLoadState.MISSING,
    SymbolState.NO_IDENTIFIER: SymbolLoadState.NO_IDENTIFIER,
    SymbolState.UNREADABLE: SymbolLoadState.UNREADABLE,
}

#: downloads that end without a file: the Symbols column says why rather than just "missing"
_DOWNLOAD_FAILURES = frozenset(
    {DownloadState.NOT_ON_SERVER, DownloadState.FAILED, DownloadState.OFFLINE, DownloadState.CANCELLED}
)


def _match_text(match: SymbolMatch) -> str:
    """One tooltip line: how the file was matched, and by what identity."""
    file = match.file
    if match.by is MatchedBy.CODE_ID:
        return f"Matched by code file and code id ({file.code_file} {file.code_id}): no debug id in the dump"
    return f"Matched by debug id ({file.debug_file} {file.debug_id})"


@dataclass(frozen=True, slots=True)
class ModuleSymbolState:
    """A module's symbol lookup as the Modules pane shows it (no open file: safe across threads)."""

    state: SymbolLoadState
    path: Path | None = None
    tried: tuple[str, ...] = ()
    found_by: str | None = None
    damaged_lines: int = 0
    damage_summary: str = ""
    error: str | None = None
    #: symbol servers: the module's download (queued, downloading, downloaded, not on server, failed)
    download: DownloadStatus | None = None
    symbol_url: str | None = None
    #: loaded files: matched to the module by debug id or by code file + code id
    match: SymbolMatch | None = None

    @classmethod
    def from_summary(
        cls, summary: ModuleSymbolSummary, *, searched: bool, walk_over: bool
    ) -> ModuleSymbolState:
        """The stackwalker's outcome for one module, as the Modules pane shows it.

        `searched`: symbol paths or servers were given (without them nothing is looked up,
        and every module is "missing"). `walk_over`: the walk has ended, so a module it never
        asked for was not needed (until then it is pending). Servers prefetch the modules that
        registers and stack words point into, so a module the walk did not ask for may still
        carry a download; it is kept, so the pane shows it.
        """
        download = summary.download
        if summary.state is SymbolState.NOT_REQUESTED:
            if not searched:
                return cls(SymbolLoadState.MISSING)
            return cls(
                SymbolLoadState.NOT_NEEDED if walk_over else SymbolLoadState.PENDING, download=download
            )
        damage = summary.damage
        return cls(
            state=_STATE_OF_SUMMARY[summary.state],
            path=None if summary.path is None else Path(summary.path),
            tried=summary.tried,
            found_by=summary.found_by,
            damaged_lines=damage.total if damage is not None else 0,
            damage_summary=damage.summary() if damage is not None and damage.damaged else "",
            error=summary.error,
            download=download,
            # a local file's `INFO URL` line is not a download: name a URL only for the servers' files
            symbol_url=summary.symbol_url if download is not None else None,
            match=summary.match,
        )

    @property
    def matched_text(self) -> str:
        """The Modules pane's "Matched by" column: `debug id`, `code id`, `not matched` or ''."""
        if self.match is not None:
            return self.match.by.value
        return "not matched" if self.state.lacks_symbols else ""

    @property
    def text(self) -> str:
        """The Symbols column: `loaded`, `missing`, `damaged (3 lines)`, `unreadable: …`, and with
        servers `queued for download`, `downloading (40 %)`, `loaded, downloaded from URL`,
        `loaded from the download cache`, `not on server`, `failed: …`, `not needed, …`."""
        download = self.download
        if download is None:
            return self._plain_text()
        if not self.state.settled or not download.state.settled:
            return download.text
        if self.state in (SymbolLoadState.NOT_NEEDED, SymbolLoadState.NOT_LOADED):
            return f"{self.state.value}, {_short_download_text(download)}"
        if download.state in _DOWNLOAD_FAILURES and self.state is SymbolLoadState.MISSING:
            return download.text
        if self.state in (SymbolLoadState.LOADED, SymbolLoadState.DAMAGED):
            if download.state is DownloadState.DOWNLOADED:
                return f"{self._plain_text()}, {_short_download_text(download)}"
            if download.state is DownloadState.CACHED:
                return f"{self._plain_text()} from the download cache"
        return self._plain_text()

    def _plain_text(self) -> str:
        state = self.state
        if state is SymbolLoadState.DAMAGED:
            lines = "line" if self.damaged_lines == 1 else "lines"
            return f"damaged ({self.damaged_lines} {lines})"
        if state is SymbolLoadState.UNREADABLE and self.error:
            return f"unreadable: {self.error}"
        return state.value

    @property
    def details(self) -> str:
        """A few lines for a tooltip: where the file is, or everywhere it was looked for."""
        state = self.state
        download = self.download
        lines: list[str] = []
        if state in (SymbolLoadState.LOADED, SymbolLoadState.DAMAGED) and self.path is not None:
            lines.append(f"Loaded from {self.path}")
            if self.found_by:
                lines.append(f"(found by {self.found_by})")
            if self.match is not None:
                lines.append(_match_text(self.match))
            if self.symbol_url:
                lines.append(f"Downloaded from {self.symbol_url}")
            if self.damage_summary:
                lines.append(self.damage_summary)
        elif state in (SymbolLoadState.NOT_NEEDED, SymbolLoadState.NOT_LOADED) and download is not None:
            lines.append(_NOT_LOOKED_UP[state])
            lines.append("A register or stack word points into it, so it was fetched ahead of the walk:")
            lines.append(f"  {download.text}")
            lines.extend(self._requests())
        elif download is not None and state in (SymbolLoadState.PENDING, SymbolLoadState.MISSING):
            lines.append(download.text[:1].upper() + download.text[1:])
            lines.extend(self._requests())
            if state is SymbolLoadState.MISSING and self.tried:
                lines.append("Paths tried:")
                lines.extend(f"  {p}" for p in self.tried if "://" not in p)
        elif state is SymbolLoadState.MISSING:
            lines.append("No symbol file found. Paths tried:" if self.tried else "No symbol paths are set.")
            lines.extend(f"  {p}" for p in self.tried)
        elif state is SymbolLoadState.NO_IDENTIFIER:
            lines.append("The module record has no debug id and no code id to look symbols up by.")
        elif state is SymbolLoadState.UNREADABLE:
            lines.append(f"{self.path}: {self.error or 'cannot be read'}")
        elif state in _NOT_LOOKED_UP:
            lines.append(_NOT_LOOKED_UP[state])
        else:
            lines.append(f"Symbols {state.value}")
        return "\n".join(lines)

    def _requests(self) -> list[str]:
        download = self.download
        if download is None or not download.attempts:
            return []
        return [
            "Requests:",
            *(f"  {a.url}: {a.outcome}{f' ({a.reason})' if a.reason else ''}" for a in download.attempts),
        ]


_NOT_LOOKED_UP = {
    SymbolLoadState.NOT_NEEDED: "No frame is in this module, so the stackwalker did not look its symbols up.",
    SymbolLoadState.NOT_LOADED: "The analysis stopped before this module's symbols were looked for.",
}


def _short_download_text(download: DownloadStatus) -> str:
    """`downloaded from URL` without the URL's query: it repeats the module's code file and id
    (the tooltip has the whole URL)."""
    if download.state is DownloadState.DOWNLOADED and download.url:
        return f"downloaded from {download.url.partition('?')[0]}"
    return download.text


PENDING = ModuleSymbolState(SymbolLoadState.PENDING)
NOT_LOADED = ModuleSymbolState(SymbolLoadState.NOT_LOADED)


class AnalysisStatus(enum.Enum):
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Problem:
    """One row of the Problems pane."""

    source: str
    where: str
    message: str
    code: str


class Document:
    """One analysis of one dump, as far as it has got. Lives on the GUI thread; `Session` updates it."""

    def __init__(self, snapshot: DumpSnapshot, symbol_path_problems: Sequence[PathProblem] = ()) -> None:
        self.snapshot = snapshot
        self.symbol_path_problems = tuple(symbol_path_problems)
        self.symbols: list[ModuleSymbolState] = [PENDING] * len(snapshot.modules)
        self.status = AnalysisStatus.RUNNING
        #: why the dump could not be walked at all (shown as a problem), None when it was
        self.walk_error: str | None = None
        #: what the stackwalker alone found (no thread list or system info, walks cut short)
        self.walk_problems: tuple[WalkProblem, ...] = ()
        self._frames: dict[int, list[StackFrame]] = {}
        self._stacks: dict[int, CallStack] = {}
        #: modules holding a frame's instruction or a scanned candidate word (by module index)
        self._modules_used: set[int] = set()
        self._trees: dict[tuple[int, int, bool], TraceNode] = {}
        self._decisions: dict[tuple[int, int, bool], list[Decision]] = {}
        self._marks: dict[tuple[int, int, bool], list[StackMark]] = {}
        self._extents: dict[tuple[int, int, bool, int | None], list[tuple[int, int, int]]] = {}

    @property
    def path(self) -> Path:
        return self.snapshot.path

    def set_symbol_state(self, module_index: int, state: ModuleSymbolState) -> bool:
        """Record a module's symbol state; False if the index is out of range or nothing changed."""
        if not 0 <= module_index < len(self.symbols) or self.symbols[module_index] == state:
            return False
        self.symbols[module_index] = state
        return True

    def settle_unfinished(self) -> list[int]:
        """Mark lookups that never finished as not loaded (the analysis stopped); their indexes."""
        changed = []
        for i, state in enumerate(self.symbols):
            if not state.state.settled:
                # a prefetch that had ended still says what came of it; one still running was stopped
                download = state.download
                self.symbols[i] = replace(
                    NOT_LOADED, download=download if download and download.state.settled else None
                )
                changed.append(i)
        return changed

    def modules_lacking_symbols(self) -> list[int]:
        """Modules the walk used (a frame or a scanned word is in them) that have no usable symbols."""
        return [i for i in sorted(self._modules_used) if self.symbols[i].state.lacks_symbols]

    @property
    def modules_used(self) -> frozenset[int]:
        """Modules that hold a frame's instruction or a word the stack scan examined."""
        return frozenset(self._modules_used)

    # ---- frames (filled in as the stackwalker reports them) ----

    def add_frame(self, thread_index: int, frame: StackFrame) -> int:
        """Record a walked frame; returns its index in the thread's stack."""
        frames = self._frames.setdefault(thread_index, [])
        frames.append(frame)
        self._note_modules(frame.module_index, frame.found_by)
        return len(frames) - 1

    def finish_thread(self, stack: CallStack) -> None:
        """A thread's walk is over: keep its call stack (frames and why the walk stopped)."""
        self._stacks[stack.thread_index] = stack
        frames = self._frames.setdefault(stack.thread_index, [])
        if len(frames) < len(stack.frames):  # threads that are never walked still have their context frame
            for frame in stack.frames[len(frames) :]:
                self.add_frame(stack.thread_index, frame)
        if stack.termination is not None:
            self._note_modules(None, stack.termination.step)

    def _note_modules(self, module_index: int | None, step: UnwindStep | None) -> None:
        if module_index is not None:
            self._modules_used.add(module_index)
        if step is None:
            return
        for attempt in step.attempts:
            if isinstance(attempt.detail, ScanDetail):
                for candidate in attempt.detail.candidates:
                    if candidate.module is None:  # before the lookup: this runs per frame on the GUI thread
                        continue
                    index = self.snapshot.module_index_at(candidate.value)
                    if index is not None:
                        self._modules_used.add(index)

    def frames(self, thread_index: int) -> list[StackFrame]:
        """The frames walked so far (innermost first); empty before the walk reaches the thread."""
        return self._frames.get(thread_index, [])

    def is_walked(self, thread_index: int) -> bool:
        return thread_index in self._stacks

    def call_stack(self, thread_index: int) -> CallStack | None:
        return self._stacks.get(thread_index)

    def termination(self, thread_index: int) -> Termination | None:
        stack = self._stacks.get(thread_index)
        return None if stack is None else stack.termination

    # ---- the trace, as the Unwind pane and the stepper read it ----

    def trace_tree(self, thread_index: int, frame_index: int) -> TraceNode | None:
        """The trace tree of one frame (cached; the last frame's gains the termination once walked)."""
        frames = self.frames(thread_index)
        if not 0 <= frame_index < len(frames):
            return None
        last = frame_index == len(frames) - 1 and self.is_walked(thread_index)
        key = (thread_index, frame_index, last)
        tree = self._trees.get(key)
        if tree is None:
            thread = (
                self.snapshot.threads[thread_index] if thread_index < len(self.snapshot.threads) else None
            )
            source = thread.context_source.value if thread is not None else "context"
            termination = self.termination(thread_index) if last else None
            tree = build_frame_trace(frames, frame_index, termination=termination, context_source=source)
            self._trees[key] = tree
        return tree

    def _walk_key(self, thread_index: int) -> tuple[int, int, bool]:
        """What results derived from a thread's walk depend on: the thread, its frame count, walk over."""
        return (thread_index, len(self.frames(thread_index)), self.is_walked(thread_index))

    def decisions(self, thread_index: int) -> list[Decision]:
        """Every decision of a thread's walk so far, in order (see `unwind_trace.decisions_of`)."""
        key = self._walk_key(thread_index)
        count = key[1]
        found = self._decisions.get(key)
        if found is None:
            trees = [self.trace_tree(thread_index, i) for i in range(count)]
            found = decisions_of([t for t in trees if t is not None])
            self._decisions = {key: found}  # only the latest list is worth keeping
        return found

    # The memory pane and the stack plot both redraw on every `frames_added`: they share these.

    def stack_marks(self, thread_index: int) -> list[StackMark]:
        """The stack words a thread's walk used so far (see `unwind_trace.stack_marks`)."""
        key = self._walk_key(thread_index)
        found = self._marks.get(key)
        if found is None:
            found = stack_marks(self.frames(thread_index), self.termination(thread_index))
            self._marks = {key: found}
        return found

    def frame_extents(self, thread_index: int, stack_end: int | None) -> list[tuple[int, int, int]]:
        """Each walked frame's part of a thread's stack (see `unwind_trace.frame_extents`)."""
        walk = self._walk_key(thread_index)
        key = (*walk, stack_end)
        found = self._extents.get(key)
        if found is None:
            found = frame_extents(self.frames(thread_index), stack_end)
            # each pane asks with its own stack end: keep theirs for the latest walk state
            self._extents = {k: v for k, v in self._extents.items() if k[:3] == walk}
            self._extents[key] = found
        return found

    def problems(self) -> list[Problem]:
        """The reader's problems, unusable symbol paths, the stackwalker's, damaged or unreadable symbols."""
        # a microdump's problems are about its lines (the message says which), not a directory
        dump = self.snapshot.dump
        unstreamed = "microdump" if dump is not None and as_microdump(dump) is not None else "directory"
        out = [
            Problem(
                "dump",
                unstreamed if p.stream_type is None else _stream_name(p.stream_type),
                p.message,
                p.code,
            )
            for p in self.snapshot.problems
        ]
        out.extend(Problem("symbol path", p.path, p.reason, "SymbolPath") for p in self.symbol_path_problems)
        if self.walk_error is not None:
            out.append(Problem("stack walk", "every thread", self.walk_error, "NotWalked"))
        for p in self.walk_problems:
            where = _WALK_PROBLEM_WHERE.get(p.code, "frame limit")
            out.append(Problem("stack walk" if p.source == "walk" else p.source, where, p.message, p.code))
        for module, state in zip(self.snapshot.modules, self.symbols, strict=False):
            if state.state is SymbolLoadState.DAMAGED:
                out.append(Problem("symbols", module.filename, state.damage_summary, "DamagedSymbols"))
            elif state.state is SymbolLoadState.UNREADABLE:
                out.append(
                    Problem("symbols", module.filename, f"{state.path}: {state.error}", "UnreadableSymbols")
                )
        return out


def _stream_name(stream_type: int) -> str:
    name = stream_type_name(stream_type)
    return f"{name} ({stream_type:#x})" if name != "unknown" else f"stream {stream_type:#x}"


_WALK_PROBLEM_WHERE = {
    "NoThreadList": _stream_name(StreamType.ThreadListStream),
    "NoSystemInfo": _stream_name(StreamType.SystemInfoStream),
}
