"""`Session`: the open document, the analysis that fills it, and the selection every pane follows.

Panes never talk to each other. They forward user selections to the
session's `select_*` methods and follow its signals. Setters are
idempotent (no signal when nothing changes), and a selection change made
while the same kind of change is being announced is ignored, so
view → session → view feedback cannot loop.

The session owns a `JobRunner` (worker thread). `open_dump` starts a run of
`job_factory(request)`; the run's events are applied here, in order, on
the GUI thread (`apply`). A new run cancels the previous one; the document
on screen stays until the new run's `DumpLoaded` replaces it, so a dump
that cannot be opened leaves the previous one shown.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from inspector.core.errors import InspectorError
from inspector.core.explain import Decision, TraceNode, report_number
from inspector.core.process import (
    DumpLoaded,
    Finished,
    FrameWalked,
    ModuleSymbolSummary,
    Progress,
    SymbolsLoaded,
    SymbolState,
    ThreadWalked,
)
from inspector.core.symbols import SymbolServerOptions
from inspector.core.unwind import WalkOptions
from inspector.gui.document import AnalysisRequest, AnalysisStatus, Document, ThreadView
from inspector.gui.jobs import Job, analysis_job
from inspector.gui.stepper import DecisionPosition, node_reading, position_of, step_target
from inspector.gui.worker import JobRunner

log = logging.getLogger(__name__)

#: Longest the session applies events in one turn of the event loop before letting it paint.
SLICE_SECONDS = 0.008
#: Most events applied in one go (a slice checks its time between these steps).
MAX_EVENTS_PER_STEP = 16


@dataclass(frozen=True, slots=True)
class FrameRef:
    """A selected frame: thread index, frame index in its stack, inline depth (0 = the physical frame)."""

    thread: int
    frame: int
    inline: int = 0


@dataclass(frozen=True, slots=True)
class TraceFocus:
    """A line of a frame's unwind trace: thread, frame, and the node's path in `Document.trace_tree`."""

    thread: int
    frame: int
    path: tuple[int, ...]


@dataclass(frozen=True, slots=True, eq=False)
class LoadFailure:
    """An analysis that failed: which file, a sentence for people, the error itself.

    `document_shown` is True when the dump had already been shown (the failure
    came later, e.g. while loading symbols); otherwise the previous document is
    still on screen.
    """

    path: Path
    message: str
    error: BaseException
    document_shown: bool = False


def describe_error(error: BaseException) -> str:
    """One clear sentence about why a dump could not be analysed."""
    if isinstance(error, InspectorError):
        return str(error)
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        return f"{where}{error.strerror or error}"
    return f"internal error ({type(error).__name__}: {error}); see the log for details"


class Session(QObject):
    # the document
    document_changed = Signal()
    symbols_updated = Signal(list)
    problems_changed = Signal()
    progress_changed = Signal(object)
    # the analysis
    analysis_started = Signal(object)
    analysis_finished = Signal()
    analysis_cancelled = Signal()
    analysis_failed = Signal(object)
    busy_changed = Signal(bool)
    # the selection
    thread_selected = Signal(int)
    frame_selected = Signal(object)
    module_selected = Signal(int)
    #: an address to show (a Python int: 64-bit addresses do not fit the C++ int of Signal(int))
    address_requested = Signal(object)
    #: a register to show in the Registers pane (its name as a decoder prints it; a command)
    register_requested = Signal(str)
    #: the source-root mappings changed (Preferences); the Source pane looks for files again
    source_roots_changed = Signal()
    # the walk
    #: frames arrived for a thread: (thread index, index of the first new frame, how many)
    frames_added = Signal(int, int, int)
    #: a thread's walk is over (its frame count and termination are final)
    thread_walked = Signal(int)
    #: a line of the selected frame's unwind trace is focused (a `TraceFocus`), or None
    trace_focus_changed = Signal(object)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        symbol_paths: Iterable[Path] = (),
        cache_dir: Path | None = None,
        symbol_servers: SymbolServerOptions | None = None,
        walk_options: WalkOptions | None = None,
        job_factory: Callable[[AnalysisRequest], Job] = analysis_job,
        interval_ms: int | None = None,
    ) -> None:
        super().__init__(parent)
        self._symbol_paths: tuple[Path, ...] = tuple(symbol_paths)
        self.cache_dir = cache_dir
        self.symbol_servers = symbol_servers
        #: the walk's policy and options (Preferences › Stack walk)
        self.walk_options = walk_options or WalkOptions()
        #: where the sources named in symbol files are on this machine: (recorded prefix, local folder)
        self.source_roots: tuple[tuple[str, str], ...] = ()
        #: use the modules' own files on this machine (and /usr/lib/debug) when their identity matches
        self.local_modules = True
        self.job_factory = job_factory
        self.runner = JobRunner(self) if interval_ms is None else JobRunner(self, interval_ms=interval_ms)
        self.runner.events.connect(self._on_events)
        #: event batches not applied yet (applied in slices; see `_apply_queued`)
        self._queue: list[tuple[int, list[object]]] = []
        self._queue_timer = QTimer(self)
        self._queue_timer.setSingleShot(True)
        self._queue_timer.setInterval(0)
        self._queue_timer.timeout.connect(self._apply_queued)
        self._pending_end: Callable[[], None] | None = None
        #: the thread selection a new document waits for (see `_show`)
        self._select_next: tuple[int, _SelectThread] | None = None
        self.runner.finished.connect(self._on_finished)
        self.runner.cancelled.connect(self._on_cancelled)
        self.runner.failed.connect(self._on_failed)
        self._document: Document | None = None
        self._document_generation = 0
        self._request: AnalysisRequest | None = None
        self._thread = -1
        self._frame: FrameRef | None = None
        self._module = -1
        self._focus: TraceFocus | None = None
        self._announcing: set[str] = set()

    # ---- state ----

    @property
    def document(self) -> Document | None:
        return self._document

    @property
    def request(self) -> AnalysisRequest | None:
        """The latest analysis asked for (running or done)."""
        return self._request

    @property
    def is_busy(self) -> bool:
        return self.runner.is_running

    @property
    def symbol_paths(self) -> tuple[Path, ...]:
        return self._symbol_paths

    @property
    def selected_thread(self) -> int:
        """Index of the selected thread, -1 when none."""
        return self._thread

    @property
    def selected_thread_view(self) -> ThreadView | None:
        doc = self._document
        return None if doc is None else doc.thread(self._thread)

    @property
    def selected_frame(self) -> FrameRef | None:
        return self._frame

    @property
    def selected_module(self) -> int:
        return self._module

    def frame_count(self, thread_index: int) -> int | None:
        """Frames walked for a thread so far; None until the stackwalker reaches it."""
        doc = self._document
        if doc is None:
            return None
        frames = doc.frames(thread_index)
        return len(frames) if frames or doc.is_walked(thread_index) else None

    @property
    def trace_focus(self) -> TraceFocus | None:
        return self._focus

    def focused_node(self) -> TraceNode | None:
        focus, doc = self._focus, self._document
        if focus is None or doc is None:
            return None
        tree = doc.trace_tree(focus.thread, focus.frame)
        return None if tree is None else tree.at(focus.path)

    # ---- analysis ----

    def open_dump(self, path: Path | str) -> int:
        """Start analysing `path` with the current symbol paths; returns the run's generation."""
        request = AnalysisRequest(
            Path(path),
            self._symbol_paths,
            self.cache_dir,
            self.symbol_servers,
            self.walk_options,
            self.local_modules,
        )
        return self._start(request)

    def reanalyze(self) -> int | None:
        """Run the analysis of the current (or currently loading) dump again; None without one."""
        path = self._request.dump_path if self._request is not None else None
        if path is None and self._document is not None:
            path = self._document.path
        return None if path is None else self.open_dump(path)

    def cancel(self) -> None:
        self.runner.cancel()

    def set_symbol_paths(self, paths: Sequence[Path], *, reanalyze: bool = True) -> bool:
        """Use these symbol paths from now on and (by default) re-run the analysis of the open dump.

        Returns whether they changed; nothing is re-run when they did not.
        """
        new = tuple(Path(p) for p in paths)
        if new == self._symbol_paths:
            return False
        self._symbol_paths = new
        if reanalyze and (self._document is not None or self.is_busy):
            self.reanalyze()
        return True

    def shutdown(self) -> None:
        """Stop the worker and release the document (the application is closing). Idempotent."""
        self._discard_queue()
        self._pending_end = None
        self.runner.shutdown()

    def _start(self, request: AnalysisRequest) -> int:
        # The old run is about to be cancelled: applying its queued events now would update (or,
        # for a queued DumpLoaded, build and show) a document that is replaced anyway, all in one
        # turn of the event loop. Drop them, and an end still waiting for them: that run is stopped.
        self._discard_queue()
        was_busy = self.is_busy or self._pending_end is not None
        self._pending_end = None
        doc = self._document
        if was_busy and doc is not None and self._document_generation == self.runner.generation:
            self._stop_document(doc, AnalysisStatus.CANCELLED)
        self._request = request
        generation = self.runner.start(self.job_factory(request))
        log.info("analysing %s (run %d)", request.dump_path, generation)
        self.analysis_started.emit(request)
        if not was_busy:
            self.busy_changed.emit(True)
        return generation

    def _stop_document(self, doc: Document, status: AnalysisStatus) -> None:
        doc.status = status
        changed = doc.symbols_in_flux()  # their status reads differently once the analysis is over
        if changed:
            self.symbols_updated.emit(changed)

    # ---- applying events (GUI thread) ----

    @contextmanager
    def window_work(self) -> Iterator[None]:
        """Around a paint or layout of the window: a running walk steps aside until it is done."""
        self.runner.window_work_started()
        try:
            yield
        finally:
            self.runner.window_work_done()

    @Slot(int, list)
    def _on_events(self, generation: int, events: list[object]) -> None:
        self._queue.append((generation, list(events)))
        self._apply_queued()

    @Slot()
    def _apply_queued(self) -> None:
        """Apply queued events for at most `SLICE_SECONDS`, then let the event loop paint and come back.

        A slice also ends right after a `DumpLoaded` (a new document: every pane resets and repaints),
        so no single turn of the event loop both rebuilds the window and applies a long walk, and
        right after the new document's thread is selected: the panes that follow the thread fill in
        and paint in one turn, those that follow the first frame (Registers, Stack Memory, Unwind,
        Disassembly, the plot) in the next (both in one turn were the heaviest of the torch walk).
        """
        deadline = time.monotonic() + SLICE_SECONDS
        while self._queue:
            generation, events = self._queue[0]
            cut = len(events)
            for i, event in enumerate(events):
                if isinstance(event, _ENDS_SLICE):
                    cut = i + 1
                    break
            cut = min(cut, MAX_EVENTS_PER_STEP)
            self.apply(generation, events[:cut])
            if cut < len(events):
                self._queue[0] = (generation, events[cut:])
            else:
                self._queue.pop(0)
            if self._select_next is not None:  # a new document: its thread is selected next slice
                select_generation, select = self._select_next
                self._select_next = None
                self._queue.insert(0, (select_generation, [select]))
            if self._queue and (time.monotonic() >= deadline or isinstance(events[cut - 1], _ENDS_SLICE)):
                self.runner.hold_worker()  # until this slice is painted and the rest applied
                self._queue_timer.start()
                return
        self._end_if_pending()

    def _discard_queue(self) -> None:
        """Drop every event not applied yet, releasing what they hold."""
        self._queue_timer.stop()
        self._queue.clear()

    def _end_if_pending(self) -> None:
        end, self._pending_end = self._pending_end, None
        if end is not None:
            end()

    def apply(self, generation: int, events: Iterable[object]) -> None:
        """Apply one batch of a run's events in order, then announce what changed."""
        pending = _Pending()
        for event in events:
            if isinstance(event, DumpLoaded):
                self._announce(pending)  # the old document's updates first
                pending = _Pending()
                self._show(generation, event)
                continue
            if isinstance(event, _SelectThread):
                if self._document is event.document and self._thread == -1:
                    self.select_thread(event.index)
                continue
            doc = self._document
            if doc is None or self._document_generation != generation:
                continue  # nothing of this run is shown yet (its DumpLoaded was dropped or failed)
            if isinstance(event, FrameWalked):
                index = doc.add_frame(event.thread_index, event.frame)
                first, count = pending.frames.get(event.thread_index, (index, 0))
                pending.frames[event.thread_index] = (first, count + 1)
            elif isinstance(event, ThreadWalked):
                before = len(doc.frames(event.thread_index))
                doc.finish_thread(event.call_stack)
                added = len(doc.frames(event.thread_index)) - before
                if added:
                    first, count = pending.frames.get(event.thread_index, (before, 0))
                    pending.frames[event.thread_index] = (first, count + added)
                pending.walked.append(event.thread_index)
            elif isinstance(event, SymbolsLoaded):
                if doc.set_symbols(event.module_index, event.symbols):
                    pending.symbols.append(event.module_index)
                    pending.problems |= _is_problem(event.symbols)
            elif isinstance(event, Progress):
                pending.progress = event
            elif isinstance(event, Finished):  # every thread's ThreadWalked came before
                pending.symbols.extend(doc.finish(event.state))
                pending.problems = True
            else:
                log.debug("ignoring event %r", event)
        self._announce(pending)

    def _announce(self, pending: _Pending) -> None:
        if pending.symbols:
            self.symbols_updated.emit(sorted(set(pending.symbols)))
        if pending.problems:
            self.problems_changed.emit()
        for thread_index, (first, count) in pending.frames.items():
            self.frames_added.emit(thread_index, first, count)
        for thread_index in pending.walked:
            self.thread_walked.emit(thread_index)
        if pending.frames.get(self._thread) and self._frame is None:
            self._set_frame(FrameRef(self._thread, 0))  # the selected thread's first frame has arrived
        if pending.progress is not None:
            self.progress_changed.emit(pending.progress)

    def _show(self, generation: int, event: DumpLoaded) -> None:
        old = self._document
        doc = Document(event.state)
        keep_thread = (
            self._thread
            if old is not None and old.path == doc.path and self._thread < doc.thread_count
            else -1
        )
        self._document = doc
        self._document_generation = generation
        self._thread, self._frame, self._module = -1, None, -1
        self._focus = None
        self.document_changed.emit()
        self.problems_changed.emit()
        crashing = doc.crashing_thread
        if keep_thread >= 0:
            thread = keep_thread
        elif crashing is not None:
            thread = crashing.index
        else:
            thread = 0 if doc.thread_count else -1
        if thread >= 0:
            # Selected in the next slice, before the run's next events: every pane that follows the
            # selected thread fills in then, so the window is not both rebuilt and filled (and
            # painted) in one turn of the event loop.
            self._select_next = (generation, _SelectThread(doc, thread))

    def _end(self, end: Callable[[], None]) -> None:
        """Announce how the run ended, after its last events have been applied."""
        if self._queue:
            self._pending_end = end
        else:
            end()

    @Slot(int, object)
    def _on_finished(self, generation: int, result: object) -> None:
        self._end(lambda: self._finished(generation))

    def _finished(self, generation: int) -> None:
        doc = self._document
        if doc is not None and self._document_generation == generation:
            self._stop_document(doc, AnalysisStatus.FINISHED)
        self.busy_changed.emit(False)
        self.analysis_finished.emit()

    @Slot(int)
    def _on_cancelled(self, generation: int) -> None:
        self._end(lambda: self._cancelled(generation))

    def _cancelled(self, generation: int) -> None:
        doc = self._document
        if doc is not None and self._document_generation == generation:
            self._stop_document(doc, AnalysisStatus.CANCELLED)
        self.busy_changed.emit(False)
        self.analysis_cancelled.emit()

    @Slot(int, object)
    def _on_failed(self, generation: int, error: object) -> None:
        self._end(lambda: self._failed(generation, error))

    def _failed(self, generation: int, error: object) -> None:
        assert isinstance(error, BaseException)
        doc = self._document
        shown = doc is not None and self._document_generation == generation
        if shown:
            assert doc is not None
            self._stop_document(doc, AnalysisStatus.FAILED)
        path = self._request.dump_path if self._request is not None else Path()
        self.busy_changed.emit(False)
        self.analysis_failed.emit(LoadFailure(path, describe_error(error), error, shown))

    # ---- selection ----

    @contextmanager
    def _announcing_change(self, kind: str) -> Iterator[None]:
        self._announcing.add(kind)
        try:
            yield
        finally:
            self._announcing.discard(kind)

    def _busy_announcing(self, kind: str) -> bool:
        if kind in self._announcing:
            log.debug("ignoring a %s selection made while one is being announced", kind)
            return True
        return False

    def select_thread(self, index: int) -> None:
        """Select thread `index` (-1: none) and its first frame; out-of-range indexes are ignored."""
        self._select_thread(index, None)

    def _select_thread(self, index: int, frame: FrameRef | None) -> None:
        doc = self._document
        count = doc.thread_count if doc is not None else 0
        if index != -1 and not 0 <= index < count:
            return
        if index == self._thread or self._busy_announcing("thread"):
            return
        self._thread = index
        with self._announcing_change("thread"):
            self.thread_selected.emit(index)
        if frame is None:
            frames = self.frame_count(index) if index >= 0 else None
            frame = FrameRef(index, 0) if frames else None
        self._set_frame(frame)

    def select_frame(self, ref: FrameRef | None) -> None:
        """Select a frame (and its thread); None clears the frame selection."""
        if ref == self._frame:
            return
        if ref is not None and ref.thread != self._thread:
            self._select_thread(ref.thread, ref)
            return
        self._set_frame(ref)

    def _set_frame(self, ref: FrameRef | None) -> None:
        if ref == self._frame or self._busy_announcing("frame"):
            return
        self._frame = ref
        focus = self._focus
        drop_focus = focus is not None and (
            ref is None or (ref.thread, ref.frame) != (focus.thread, focus.frame)
        )
        if drop_focus:
            self._focus = None
        with self._announcing_change("frame"):
            self.frame_selected.emit(ref)
        if drop_focus:
            self.trace_focus_changed.emit(None)

    # ---- the unwind trace and the decision stepper ----

    def focus_trace(self, focus: TraceFocus | None) -> None:
        """Focus a line of a frame's trace (selecting that frame first); None clears the focus."""
        if focus == self._focus or self._busy_announcing("trace"):
            return
        doc = self._document
        if focus is not None:
            tree = doc.trace_tree(focus.thread, focus.frame) if doc is not None else None
            if tree is None or tree.at(focus.path) is None:
                return
        self._focus = focus
        if focus is not None:
            ref = FrameRef(focus.thread, focus.frame)
            if self._frame is None or (self._frame.thread, self._frame.frame) != (ref.thread, ref.frame):
                self.select_frame(ref)
        with self._announcing_change("trace"):
            self.trace_focus_changed.emit(focus)

    def focus_trace_word(self, address: int) -> bool:
        """Focus the trace line that read the stack word at `address`: in the selected frame's trace
        if it has one, else in the first frame of the selected thread whose trace read it."""
        doc, ref = self._document, self._frame
        if doc is None or self._thread < 0:
            return False
        count = len(doc.frames(self._thread))
        order = list(range(count))
        if ref is not None and ref.thread == self._thread and 0 <= ref.frame < count:
            order.remove(ref.frame)
            order.insert(0, ref.frame)
        for frame in order:
            tree = doc.trace_tree(self._thread, frame)
            if tree is None:
                continue
            node = node_reading(tree, address)
            if node is not None:
                self.focus_trace(TraceFocus(self._thread, frame, node.path))
                return True
        return False

    def decisions(self) -> list[Decision]:
        """Every decision of the selected thread's walk, in order."""
        doc = self._document
        if doc is None or self._thread < 0:
            return []
        return doc.decisions(self._thread)

    def decision_position(self) -> DecisionPosition | None:
        """The focused decision (or the one whose trace line holds the focus), None without a focus."""
        focus = self._focus
        position = None if focus is None else position_of(self.decisions(), focus.frame, focus.path)
        doc = self._document
        if position is None or doc is None:
            return position
        frames = doc.frames(self._thread)
        if not 0 <= position.decision.frame < len(frames):
            return position
        return replace(position, frame_number=report_number(frames, position.decision.frame))

    def step_decision(self, delta: int) -> DecisionPosition | None:
        """Go to the next (+1) or previous (-1) decision of the selected thread's walk."""
        decisions = self.decisions()
        if not decisions:
            return None
        frame = self._frame.frame if self._frame is not None and self._frame.thread == self._thread else 0
        focus_path = self._focus.path if self._focus else None
        decision = step_target(decisions, self.decision_position(), focus_path, frame, delta)
        self.focus_trace(TraceFocus(self._thread, decision.frame, decision.path))
        return self.decision_position()

    def step_frame(self, delta: int) -> None:
        """Select the next (+1) or previous (-1) frame of the selected thread."""
        count = self.frame_count(self._thread) if self._thread >= 0 else None
        if not count:
            return
        current = self._frame.frame if self._frame is not None and self._frame.thread == self._thread else -1
        target = max(0, min(count - 1, current + delta if current >= 0 else 0))
        self.select_frame(FrameRef(self._thread, target))

    def select_module(self, index: int) -> None:
        doc = self._document
        count = len(doc.state.modules) if doc is not None else 0
        if index != -1 and not 0 <= index < count:
            return
        if index == self._module or self._busy_announcing("module"):
            return
        self._module = index
        with self._announcing_change("module"):
            self.module_selected.emit(index)

    def show_address(self, address: int) -> None:
        """Ask the memory pane to show `address` (a command: announced every time)."""
        self.address_requested.emit(address)

    def show_register(self, name: str) -> None:
        """Ask the Registers pane to select register `name` (a command: announced every time)."""
        self.register_requested.emit(name)

    def set_source_roots(self, roots: Sequence[tuple[str, str]]) -> None:
        new = tuple((str(a), str(b)) for a, b in roots)
        if new != self.source_roots:
            self.source_roots = new
            self.source_roots_changed.emit()


@dataclass(frozen=True, slots=True)
class _SelectThread:
    """Select this thread of this document when applied (queued by `Session._show`)."""

    document: Document
    index: int


#: Events after which `_apply_queued` ends its slice (the window paints before the next one).
_ENDS_SLICE = (DumpLoaded, _SelectThread)


@dataclass
class _Pending:
    """What one batch of events changed, announced after the whole batch is applied."""

    symbols: list[int] = field(default_factory=list)
    problems: bool = False
    progress: Progress | None = None
    frames: dict[int, tuple[int, int]] = field(default_factory=dict)
    walked: list[int] = field(default_factory=list)


def _is_problem(symbols: ModuleSymbolSummary) -> bool:
    """The summary makes a problem of its own (see `process.problems.symbol_problems`)."""
    return symbols.state in (SymbolState.DAMAGED, SymbolState.UNREADABLE) or (
        symbols.loaded and symbols.rust_minidump_rejects
    )
