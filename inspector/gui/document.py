"""The open dump as the window holds it: the core's `ProcessState`, completed as the walk's events arrive.

Nothing here imports Qt. The analysis job forwards the core's events as they are
(`inspector.core.process`: `DumpLoaded`, `SymbolsLoaded`, `FrameWalked`, `ThreadWalked`,
`Progress`, `Finished`); `Session` applies them to the `Document` on the GUI thread. The
document is the core's state plus what arrived since (frames, symbol summaries) and the
caches the views share: the explanation trees (`inspector.core.explain`), built when a pane
first asks. When the walk is over the document holds the core's final state, so the window
shows exactly what the reports say (the Problems pane lists the JSON's `inspector_problems`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from pathlib import Path

from inspector.core.explain import (
    Decision,
    StackMark,
    TraceNode,
    build_frame_trace,
    decisions_of,
    frame_extents,
    stack_marks,
)
from inspector.core.minidump import CpuContext, MemoryRegion
from inspector.core.process import ModuleSymbolSummary, Problem, ProcessState, ThreadStart
from inspector.core.process.problems import symbol_problems, walk_problems
from inspector.core.symbols import SymbolServerOptions
from inspector.core.unwind import CallStack, ScanDetail, StackFrame, Termination, UnwindStep, WalkOptions


@dataclass(frozen=True, slots=True)
class AnalysisRequest:
    """What to analyse: a dump, the symbol paths to search (in order), where symbol indexes are
    cached, the symbol servers to download missing files from (None: none), and the walk's policy
    and options."""

    dump_path: Path
    symbol_paths: tuple[Path, ...] = ()
    cache_dir: Path | None = None
    symbol_servers: SymbolServerOptions | None = None
    walk: WalkOptions = field(default_factory=WalkOptions)
    local_modules: bool = True  # use the modules' own files on this machine when they match


class AnalysisStatus(enum.Enum):
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ThreadView:
    """One thread as the panes show it: the core's call stack and start, and whether it crashed."""

    stack: CallStack
    start: ThreadStart
    crashing: bool

    @property
    def index(self) -> int:
        return self.stack.thread_index

    @property
    def thread_id(self) -> int:
        return self.stack.thread_id

    @property
    def name(self) -> str | None:
        return self.stack.thread_name

    @property
    def context(self) -> CpuContext | None:
        return self.start.context

    @property
    def stack_region(self) -> MemoryRegion | None:
        return self.start.stack

    @property
    def context_source(self) -> str:
        """`exception record`, `thread list`, or `no context`."""
        return "no context" if self.start.source is None else self.start.source.value

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


class Document:
    """One analysis of one dump, as far as it has got. Lives on the GUI thread; `Session` updates it."""

    def __init__(self, state: ProcessState) -> None:
        #: the core's state: the unwalked one of `DumpLoaded`, then the final one of `Finished`
        self.state = state
        #: each module's symbols as the walk reported them so far (the core's summaries)
        self.symbols: list[ModuleSymbolSummary] = [entry.symbols for entry in state.modules]
        self.status = AnalysisStatus.RUNNING
        self._frames: dict[int, list[StackFrame]] = {}
        self._stacks: dict[int, CallStack] = {}
        #: modules holding a frame's instruction or a scanned candidate word (by module index)
        self._modules_used: set[int] = set()
        self._trees: dict[tuple[int, int, bool], TraceNode] = {}
        self._decisions: dict[tuple[int, int, bool], list[Decision]] = {}
        self._marks: dict[tuple[int, int, bool], list[StackMark]] = {}
        self._extents: dict[tuple[int, int, bool, int | None], list[tuple[int, int, int]]] = {}
        #: `overflow_reason` of walked threads
        self._overflow: dict[int, str | None] = {}

    @property
    def path(self) -> Path:
        return Path(self.state.path) if self.state.path is not None else Path("<memory>")

    @property
    def walk_error(self) -> str | None:
        """Why the dump could not be walked at all (it is shown with what the reader found), else None."""
        return next((p.message for p in self.state.problems if p.code == "NotWalked"), None)

    # ---- threads ----

    @property
    def thread_count(self) -> int:
        return len(self.state.threads)

    def thread(self, index: int) -> ThreadView | None:
        """Thread `index` (walked or not yet), None when there is no such thread."""
        state = self.state
        if not 0 <= index < len(state.threads):
            return None
        stack = self._stacks.get(index, state.threads[index])
        start = state.thread_starts[index] if index < len(state.thread_starts) else ThreadStart(None, None)
        return ThreadView(stack, start, index == state.requesting_thread)

    def threads(self) -> list[ThreadView]:
        return [view for i in range(self.thread_count) if (view := self.thread(i)) is not None]

    @property
    def crashing_thread(self) -> ThreadView | None:
        index = self.state.requesting_thread
        return None if index is None else self.thread(index)

    def thread_with_stack_at(self, address: int) -> ThreadView | None:
        for index, start in enumerate(self.state.thread_starts):
            if start.stack is not None and start.stack.contains(address):
                return self.thread(index)
        return None

    # ---- symbols ----

    def set_symbols(self, module_index: int, symbols: ModuleSymbolSummary) -> bool:
        """Record a module's symbol summary; False if the index is out of range or nothing changed."""
        if not 0 <= module_index < len(self.symbols) or self.symbols[module_index] == symbols:
            return False
        self.symbols[module_index] = symbols
        return True

    def finish(self, final: ProcessState) -> list[int]:
        """The walk is over: hold the core's final state; the modules whose summary changed."""
        self.state = final
        return [i for i, entry in enumerate(final.modules) if self.set_symbols(i, entry.symbols)]

    def symbols_in_flux(self) -> list[int]:
        """Modules whose shown status depends on whether the analysis still runs (never looked up,
        or a download not settled)."""
        return [
            i
            for i, s in enumerate(self.symbols)
            if not s.requested or (s.download is not None and not s.download.state.settled)
        ]

    def modules_lacking_symbols(self) -> list[int]:
        """Modules the walk used (a frame or a scanned word is in them) that have no usable symbols."""
        searched = self.state.symbols_searched
        return [i for i in sorted(self._modules_used) if self.symbols[i].missing or not searched]

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
        modules = self.state.module_list
        for attempt in step.attempts:
            detail = attempt.detail
            if isinstance(detail, ScanDetail):
                # the scan's words and verdicts as recorded, not `candidates`, which would be built
                # for every frame here on the GUI thread
                for value, verdict in zip(detail.values, detail.verdicts, strict=True):
                    if verdict.module is None:  # before the lookup
                        continue
                    index = modules.index_at(value)
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

    def overflow_reason(self, thread_index: int) -> str | None:
        """Why the crashing thread's stack is a stack overflow (`explain.triage.overflow_reason`), else
        None; decided once its walk is over (a deep stack's recursion scan is not redone per paint)."""
        if thread_index in self._overflow:
            return self._overflow[thread_index]
        thread = self.thread(thread_index)
        if thread is None or not thread.crashing or not self.is_walked(thread_index):
            return None
        from inspector.core.explain.triage import overflow_reason

        crash = self.state.crash
        reason = overflow_reason(
            self.frames(thread_index),
            self.termination(thread_index),
            crash.reason if crash is not None else None,
            crash.address if crash is not None else None,
        )
        self._overflow[thread_index] = reason
        return reason

    # ---- the explanation, as the Unwind pane and the stepper read it ----

    def trace_tree(self, thread_index: int, frame_index: int) -> TraceNode | None:
        """The explanation tree of one frame (cached; the last frame's gains the termination once walked)."""
        frames = self.frames(thread_index)
        if not 0 <= frame_index < len(frames):
            return None
        last = frame_index == len(frames) - 1 and self.is_walked(thread_index)
        key = (thread_index, frame_index, last)
        tree = self._trees.get(key)
        if tree is None:
            thread = self.thread(thread_index)
            source = thread.context_source if thread is not None else "context"
            termination = self.termination(thread_index) if last else None
            tree = build_frame_trace(frames, frame_index, termination=termination, context_source=source)
            self._trees[key] = tree
        return tree

    def _walk_key(self, thread_index: int) -> tuple[int, int, bool]:
        """What results derived from a thread's walk depend on: the thread, its frame count, walk over."""
        return (thread_index, len(self.frames(thread_index)), self.is_walked(thread_index))

    def decisions(self, thread_index: int) -> list[Decision]:
        """Every decision of a thread's walk so far, in order (see `explain.decisions_of`)."""
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
        """The stack words a thread's walk used so far (see `explain.stack_marks`)."""
        key = self._walk_key(thread_index)
        found = self._marks.get(key)
        if found is None:
            found = stack_marks(self.frames(thread_index), self.termination(thread_index))
            self._marks = {key: found}
        return found

    def frame_extents(self, thread_index: int, stack_end: int | None) -> list[tuple[int, int, int]]:
        """Each walked frame's part of a thread's stack (see `explain.frame_extents`)."""
        walk = self._walk_key(thread_index)
        key = (*walk, stack_end)
        found = self._extents.get(key)
        if found is None:
            found = frame_extents(self.frames(thread_index), stack_end)
            # each pane asks with its own stack end: keep theirs for the latest walk state
            self._extents = {k: v for k, v in self._extents.items() if k[:3] == walk}
            self._extents[key] = found
        return found

    # ---- problems ----

    def problems(self) -> tuple[Problem, ...]:
        """The core's problems: once the walk is over exactly the reports' (`inspector_problems`);
        while it runs, the dump's and the symbol paths', and those of the symbol files and walks so far."""
        state = self.state
        if state.walked or self.walk_error is not None:
            return state.problems
        modules = tuple(replace(entry, symbols=self.symbols[entry.index]) for entry in state.modules)
        return state.problems + symbol_problems(modules) + walk_problems(list(self._stacks.values()))
