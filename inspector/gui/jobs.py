"""The analysis job the worker runs: open the dump, report what it holds, load each module's symbols.

A job is any callable `job(cancel) -> Iterator[event]` (its `return` value,
if any, becomes the worker's `finished` payload); `JobWorker` runs it on its
thread and knows nothing about the events. `Session.apply` is the one place
that interprets them.

Phase 1 (no stackwalker yet) yields, in order:

    DumpLoaded(snapshot, symbol path problems)   threads, modules, memory, summary: before any symbol work
    SymbolsLoading(module index)                  one module's lookup starts
    SymbolsLoaded(module index, state)            ... and its outcome
    Progress(symbols requested/loaded, threads walked/total)
    Finished(outcome)

The event names and `Progress` fields are those of `inspector.core.process`
(being written), so when it lands `run_analysis` becomes "open the dump,
build a `Symbolizer`, `yield from` the core's generator" and `Session.apply`
gains cases for `FrameWalked` / `ThreadWalked`.

Everything here runs on the worker thread: no Qt, only immutable values leave.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass

from inspector.core.cancel import CancelToken
from inspector.core.minidump import Minidump
from inspector.core.symbols import (
    DownloadStatus,
    IndexCache,
    PathProblem,
    ServerSymbolSupplier,
    Symbolizer,
    SymbolSupplier,
)
from inspector.core.symbols.symbolizer import module_key
from inspector.core.types import ModuleIdentity
from inspector.gui.document import AnalysisRequest, DumpSnapshot, ModuleSymbolState

log = logging.getLogger(__name__)

#: What the worker runs: called on the worker thread with the run's cancel token.
Job = Callable[[CancelToken], Iterator[object]]


@dataclass(frozen=True, slots=True, eq=False)
class DumpLoaded:
    """The dump is open and parsed: everything that needs no unwinding."""

    snapshot: DumpSnapshot
    symbol_path_problems: tuple[PathProblem, ...] = ()


@dataclass(frozen=True, slots=True)
class SymbolsLoading:
    module_index: int


@dataclass(frozen=True, slots=True)
class SymbolsLoaded:
    module_index: int
    state: ModuleSymbolState


@dataclass(frozen=True, slots=True)
class Progress:
    symbols_requested: int
    symbols_loaded: int
    threads_walked: int = 0
    threads_total: int = 0
    downloads_active: int = 0  # symbol files queued or downloading
    downloads_done: int = 0

    @property
    def fraction(self) -> float | None:
        """Done / to do over symbols and threads; None before anything is known."""
        todo = self.symbols_requested + self.threads_total
        if todo == 0:
            return None
        return (self.symbols_loaded + self.threads_walked) / todo


@dataclass(frozen=True, slots=True, eq=False)
class AnalysisOutcome:
    """Phase 1's final state: the snapshot and every module's symbol state (by module index)."""

    snapshot: DumpSnapshot
    symbols: tuple[ModuleSymbolState, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Finished:
    state: AnalysisOutcome


#: Events that are worth showing at once (the worker's batching never holds these back).
MILESTONES = (DumpLoaded, Finished)


def run_analysis(request: AnalysisRequest, cancel: CancelToken) -> Generator[object, None, AnalysisOutcome]:
    """Open `request.dump_path` and load every module's symbols, yielding events as it goes.

    Raises the reader's `MinidumpError` when the file cannot be used at all
    (the worker turns it into `failed`), `Cancelled` when `cancel` is set.
    A damaged dump is not an error: the snapshot lists its problems.
    """
    cancel.check()
    dump = Minidump.open(request.dump_path)
    try:
        snapshot = DumpSnapshot.from_dump(dump)
    except BaseException:
        dump.close()
        raise
    cache = IndexCache(request.cache_dir)
    supplier: SymbolSupplier
    servers = request.symbol_servers
    if servers is not None and servers.enabled:
        supplier = ServerSymbolSupplier(request.symbol_paths, servers, cache=cache, cancel=cancel)
    else:
        supplier = SymbolSupplier(request.symbol_paths, cache=cache)
    yield DumpLoaded(snapshot, supplier.problems)
    symbolizer = Symbolizer(supplier, cancel=cancel)
    states: list[ModuleSymbolState] = []
    modules = snapshot.modules
    downloads = _DownloadWatch(supplier, modules)
    try:
        if isinstance(supplier, ServerSymbolSupplier):
            supplier.prefetch(modules)  # every module, in parallel: phase 1 looks all of them up
        for index, module in enumerate(modules):
            cancel.check()
            yield SymbolsLoading(index)
            if isinstance(supplier, ServerSymbolSupplier):
                # keep the other modules' download states coming while this one arrives
                while not supplier.wait_for(module, 0.1):
                    cancel.check()
                    yield from downloads.changes(index, len(modules))
            state = ModuleSymbolState.from_result(symbolizer.status(module))
            states.append(state)
            log.debug("symbols of %s: %s", module.filename, state.text)
            yield SymbolsLoaded(index, state)
            yield from downloads.changes(index + 1, len(modules))
            yield downloads.progress(len(modules), index + 1)
    finally:
        # Phase 1 keeps no symbol file open: the GUI shows the statuses only.
        symbolizer.close()
    outcome = AnalysisOutcome(snapshot, tuple(states))
    yield Finished(outcome)
    return outcome


class _DownloadWatch:
    """Download states of the modules not looked up yet, as `SymbolsLoaded(pending + download)` events."""

    def __init__(self, supplier: SymbolSupplier, modules: Iterable[ModuleIdentity]) -> None:
        self.supplier = supplier if isinstance(supplier, ServerSymbolSupplier) else None
        self.index_of = {module_key(m): i for i, m in reversed(list(enumerate(modules)))}
        self.version = -1
        self.latest: dict[int, DownloadStatus] = {}

    def changes(self, first_pending: int, count: int) -> Iterator[object]:
        if self.supplier is None:
            return
        version, statuses = self.supplier.download_statuses()
        if version == self.version:
            return
        self.version = version
        changed = False
        for key, status in statuses.items():
            index = self.index_of.get(key)
            if index is None or self.latest.get(index) == status:
                continue
            self.latest[index] = status
            changed = True
            if index >= first_pending:
                yield SymbolsLoaded(index, ModuleSymbolState.downloading(status))
        if changed:
            yield self.progress(count, first_pending)

    def progress(self, requested: int, loaded: int) -> Progress:
        active = sum(1 for s in self.latest.values() if not s.state.settled)
        return Progress(requested, loaded, downloads_active=active, downloads_done=len(self.latest) - active)


def analysis_job(request: AnalysisRequest) -> Job:
    """The job for `request`, ready for `JobRunner.start`."""
    return functools.partial(run_analysis, request)
