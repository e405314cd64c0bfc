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
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from inspector.core.errors import InspectorError
from inspector.core.symbols import SymbolServerOptions
from inspector.gui.document import (
    LOADING,
    AnalysisRequest,
    AnalysisStatus,
    Document,
    ModuleSymbolState,
    SymbolLoadState,
    ThreadEntry,
)
from inspector.gui.jobs import (
    DumpLoaded,
    Finished,
    Job,
    Progress,
    SymbolsLoaded,
    SymbolsLoading,
    analysis_job,
)
from inspector.gui.worker import JobRunner

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FrameRef:
    """A selected frame: thread index, frame index in its stack, inline depth (0 = the physical frame)."""

    thread: int
    frame: int
    inline: int = 0


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


def _discard(event: object) -> None:
    """Release what a dropped (stale) event holds."""
    if isinstance(event, DumpLoaded):
        event.snapshot.close()


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
    symbol_paths_changed = Signal(list)
    # the selection
    thread_selected = Signal(int)
    frame_selected = Signal(object)
    module_selected = Signal(int)
    #: an address to show (a Python int: 64-bit addresses do not fit the C++ int of Signal(int))
    address_requested = Signal(object)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        symbol_paths: Iterable[Path] = (),
        cache_dir: Path | None = None,
        symbol_servers: SymbolServerOptions | None = None,
        job_factory: Callable[[AnalysisRequest], Job] = analysis_job,
        interval_ms: int | None = None,
    ) -> None:
        super().__init__(parent)
        self._symbol_paths: tuple[Path, ...] = tuple(symbol_paths)
        self.cache_dir = cache_dir
        self.symbol_servers = symbol_servers
        self.job_factory = job_factory
        extra = {} if interval_ms is None else {"interval_ms": interval_ms}
        self.runner = JobRunner(self, discard=_discard, **extra)
        self.runner.events.connect(self._on_events)
        self.runner.finished.connect(self._on_finished)
        self.runner.cancelled.connect(self._on_cancelled)
        self.runner.failed.connect(self._on_failed)
        self._document: Document | None = None
        self._document_generation = 0
        self._request: AnalysisRequest | None = None
        self._progress: Progress | None = None
        self._thread = -1
        self._frame: FrameRef | None = None
        self._module = -1
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
    def progress(self) -> Progress | None:
        return self._progress

    @property
    def symbol_paths(self) -> tuple[Path, ...]:
        return self._symbol_paths

    @property
    def selected_thread(self) -> int:
        """Index of the selected thread, -1 when none."""
        return self._thread

    @property
    def selected_thread_entry(self) -> ThreadEntry | None:
        doc = self._document
        if doc is None or not 0 <= self._thread < len(doc.snapshot.threads):
            return None
        return doc.snapshot.threads[self._thread]

    @property
    def selected_frame(self) -> FrameRef | None:
        return self._frame

    @property
    def selected_module(self) -> int:
        return self._module

    def frame_count(self, thread_index: int) -> int | None:
        """Frames walked for a thread so far; None until the stackwalker has walked it (phase 2)."""
        return None

    # ---- analysis ----

    def open_dump(self, path: Path | str) -> int:
        """Start analysing `path` with the current symbol paths; returns the run's generation."""
        request = AnalysisRequest(Path(path), self._symbol_paths, self.cache_dir, self.symbol_servers)
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
        self.symbol_paths_changed.emit(list(new))
        if reanalyze and (self._document is not None or self.is_busy):
            self.reanalyze()
        return True

    def shutdown(self) -> None:
        """Stop the worker and release the document (the application is closing). Idempotent."""
        self.runner.shutdown()
        if self._document is not None:
            self._document.snapshot.close()

    def _start(self, request: AnalysisRequest) -> int:
        was_busy = self.is_busy
        doc = self._document
        if was_busy and doc is not None and self._document_generation == self.runner.generation:
            self._stop_document(doc, AnalysisStatus.CANCELLED)
        self._request = request
        self._progress = None
        generation = self.runner.start(self.job_factory(request))
        log.info("analysing %s (run %d)", request.dump_path, generation)
        self.analysis_started.emit(request)
        if not was_busy:
            self.busy_changed.emit(True)
        return generation

    def _stop_document(self, doc: Document, status: AnalysisStatus) -> None:
        doc.status = status
        changed = doc.settle_unfinished()
        if changed:
            self.symbols_updated.emit(changed)

    # ---- applying events (GUI thread) ----

    @Slot(int, list)
    def _on_events(self, generation: int, events: list[object]) -> None:
        self.apply(generation, events)

    def apply(self, generation: int, events: Iterable[object]) -> None:
        """Apply one batch of a run's events in order, then announce what changed."""
        changed_symbols: list[int] = []
        problems_changed = False
        progress: Progress | None = None
        for event in events:
            if isinstance(event, DumpLoaded):
                if changed_symbols or progress:  # announce the old document's updates first
                    self._announce(changed_symbols, problems_changed, progress)
                    changed_symbols, problems_changed, progress = [], False, None
                self._show(generation, event)
                continue
            doc = self._document
            if doc is None or self._document_generation != generation:
                continue  # nothing of this run is shown yet (its DumpLoaded was dropped or failed)
            if isinstance(event, SymbolsLoading):
                if doc.set_symbol_state(event.module_index, LOADING):
                    changed_symbols.append(event.module_index)
            elif isinstance(event, SymbolsLoaded):
                if doc.set_symbol_state(event.module_index, event.state):
                    changed_symbols.append(event.module_index)
                    problems_changed |= _is_problem(event.state)
            elif isinstance(event, Progress):
                progress = event
            elif isinstance(event, Finished):
                pass  # the session has collected everything already; `finished` ends the run
            else:
                log.debug("ignoring event %r", event)
        self._announce(changed_symbols, problems_changed, progress)

    def _announce(
        self, changed_symbols: list[int], problems_changed: bool, progress: Progress | None
    ) -> None:
        if changed_symbols:
            self.symbols_updated.emit(sorted(set(changed_symbols)))
        if problems_changed:
            self.problems_changed.emit()
        if progress is not None:
            self._progress = progress
            self.progress_changed.emit(progress)

    def _show(self, generation: int, event: DumpLoaded) -> None:
        old = self._document
        request = self._request or AnalysisRequest(event.snapshot.path)
        doc = Document(request, event.snapshot, event.symbol_path_problems)
        keep_thread = (
            self._thread
            if old is not None and old.path == doc.path and self._thread < len(doc.snapshot.threads)
            else -1
        )
        self._document = doc
        self._document_generation = generation
        self._thread, self._frame, self._module = -1, None, -1
        self.document_changed.emit()
        self.problems_changed.emit()
        if old is not None:
            old.snapshot.close()
        threads = doc.snapshot.threads
        if keep_thread >= 0:
            self.select_thread(keep_thread)
        elif doc.snapshot.crashing_thread is not None:
            self.select_thread(doc.snapshot.crashing_thread.index)
        elif threads:
            self.select_thread(0)

    @Slot(int, object)
    def _on_finished(self, generation: int, result: object) -> None:
        doc = self._document
        if doc is not None and self._document_generation == generation:
            doc.status = AnalysisStatus.FINISHED
            changed = doc.settle_unfinished()
            if changed:
                self.symbols_updated.emit(changed)
        self.busy_changed.emit(False)
        self.analysis_finished.emit()

    @Slot(int)
    def _on_cancelled(self, generation: int) -> None:
        doc = self._document
        if doc is not None and self._document_generation == generation:
            self._stop_document(doc, AnalysisStatus.CANCELLED)
        self.busy_changed.emit(False)
        self.analysis_cancelled.emit()

    @Slot(int, object)
    def _on_failed(self, generation: int, error: object) -> None:
        assert isinstance(error, BaseException)
        doc = self._document
        shown = doc is not None and self._document_generation == generation
        if shown:
            assert doc is not None
            doc.error = describe_error(error)
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
        """Select thread `index` (-1: none); out-of-range indexes are ignored."""
        doc = self._document
        count = len(doc.snapshot.threads) if doc is not None else 0
        if index != -1 and not 0 <= index < count:
            return
        if index == self._thread or self._busy_announcing("thread"):
            return
        self._thread = index
        with self._announcing_change("thread"):
            self.thread_selected.emit(index)
        frames = self.frame_count(index) if index >= 0 else None
        self._set_frame(FrameRef(index, 0) if frames else None)

    def select_frame(self, ref: FrameRef | None) -> None:
        """Select a frame (and its thread); None clears the frame selection."""
        if ref == self._frame:
            return
        if ref is not None and ref.thread != self._thread:
            self.select_thread(ref.thread)
            if self._thread != ref.thread:
                return
        self._set_frame(ref)

    def _set_frame(self, ref: FrameRef | None) -> None:
        if ref == self._frame or self._busy_announcing("frame"):
            return
        self._frame = ref
        with self._announcing_change("frame"):
            self.frame_selected.emit(ref)

    def select_module(self, index: int) -> None:
        doc = self._document
        count = len(doc.snapshot.modules) if doc is not None else 0
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


def _is_problem(state: ModuleSymbolState) -> bool:
    return state.state in (SymbolLoadState.DAMAGED, SymbolLoadState.UNREADABLE)
