"""The analysis job the worker runs: open the dump, show what it holds, then walk every thread.

A job is any callable `job(cancel) -> Iterator[event]` (its `return` value,
if any, becomes the worker's `finished` payload); `JobWorker` runs it on its
thread and knows nothing about the events. `Session.apply` is the one place
that interprets them.

`run_analysis` yields, in order:

    DumpLoaded(snapshot, symbol path problems)   threads, modules, memory, summary: before any symbol work
    then, from the stackwalker (`inspector.core.process.process_events`), as they come:
    SymbolsLoaded(module index, state)            a module's symbols were looked for (the walk needed
                                                  them), or its download changed (symbol servers)
    FrameWalked(thread index, frame)              one frame, as soon as it is known (the core's event)
    ThreadWalked(thread index, call stack)        a thread is done (the core's event)
    Progress(symbols, threads, downloads)         (the core's event)
    WalkUnavailable(message)                      instead, when the dump cannot be walked at all
    WalkProblems(problems)                        what only the stackwalker can tell: no readable thread
                                                  list or system info, walks cut short by a frame limit
    SymbolsLoaded(module index, state)            at the end, for modules whose state the end settles

The snapshot comes first and from the reader alone, so a dump the stackwalker
refuses (none of its system info, thread list, module list and exception can be
read) is still shown with its problems. A dump without a readable thread list or
system info is walked as far as it goes; the stackwalker says what is missing.

With symbol servers (`AnalysisRequest.symbol_servers`) the stackwalker downloads
missing files, prefetching the modules that registers and stack words point
into; their download states arrive as `SymbolsLoaded` (a prefetched module the
walk never asked for ends "not needed" with its download) and the running
downloads are counted in `Progress`. Cancel stops the downloads with the walk.

Everything here runs on the worker thread: no Qt, only immutable values leave.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from inspector.core import process as core
from inspector.core.cancel import CancelToken
from inspector.core.dumpfile import open_any_dump
from inspector.core.errors import Cancelled, InspectorError
from inspector.core.symbols import IndexCache, PathProblem, SymbolServerOptions, SymbolSupplier
from inspector.core.symbols.http_fetch import redacted
from inspector.gui.document import AnalysisRequest, DumpSnapshot, ModuleSymbolState, SymbolLoadState

log = logging.getLogger(__name__)

#: What the worker runs: called on the worker thread with the run's cancel token.
Job = Callable[[CancelToken], Iterator[object]]

#: The stackwalker's frame, thread and progress events, forwarded as they are (frozen core data).
FrameWalked = core.FrameWalked
ThreadWalked = core.ThreadWalked
Progress = core.Progress


@dataclass(frozen=True, slots=True, eq=False)
class DumpLoaded:
    """The dump is open and parsed: everything that needs no unwinding."""

    snapshot: DumpSnapshot
    symbol_path_problems: tuple[PathProblem, ...] = ()


@dataclass(frozen=True, slots=True)
class SymbolsLoaded:
    module_index: int
    state: ModuleSymbolState


def progress_fraction(progress: Progress) -> float | None:
    """Done / to do over symbols and threads; None before anything is known."""
    todo = progress.symbols_requested + progress.threads_total
    if todo == 0:
        return None
    return (progress.symbols_loaded + progress.threads_walked) / todo


def progress_text(progress: Progress) -> str:
    """`symbols 3/4 · threads 1/7 · 2 downloading` for the progress bar."""
    parts = []
    if progress.symbols_requested:
        parts.append(f"symbols {progress.symbols_loaded}/{progress.symbols_requested}")
    if progress.threads_total:
        parts.append(f"threads {progress.threads_walked}/{progress.threads_total}")
    if progress.downloads_active:
        parts.append(f"{progress.downloads_active} downloading")
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class WalkUnavailable:
    """The dump was read but cannot be walked (e.g. no thread list): why, in one sentence."""

    message: str


@dataclass(frozen=True, slots=True)
class WalkProblems:
    """Problems only the stackwalker finds (the reader's are in the snapshot, symbol files' in states)."""

    problems: tuple[core.Problem, ...]


#: The codes of `ProcessState.problems` that reach the window by no other route.
STACKWALKER_PROBLEMS = frozenset({"NoThreadList", "NoSystemInfo", "FrameLimit"})


#: Events that are worth showing at once (the worker's batching never holds these back).
MILESTONES = (DumpLoaded, WalkUnavailable)


def _server_problems(servers: SymbolServerOptions | None) -> tuple[PathProblem, ...]:
    """Server URLs that cannot be used (the walk skips them), with any token in them redacted."""
    if servers is None:
        return ()
    return tuple(PathProblem(redacted(s.url), p) for s in servers.servers if (p := s.problem()) is not None)


def run_analysis(request: AnalysisRequest, cancel: CancelToken) -> Iterator[object]:
    """Open `request.dump_path`, report it, then walk every thread, yielding events as it goes.

    Raises the reader's `MinidumpError` when the file cannot be used at all
    (the worker turns it into `failed`), `Cancelled` when `cancel` is set.
    A damaged dump is not an error: the snapshot lists its problems.
    """
    cancel.check()
    dump = open_any_dump(request.dump_path)  # a minidump, or the first microdump of a log
    try:
        snapshot = DumpSnapshot.from_dump(dump)
    except BaseException:
        dump.close()
        raise
    paths = request.symbol_paths
    servers = request.symbol_servers
    if servers is not None and not servers.enabled:
        servers = None
    # Path and server problems are known before any lookup: show them with the dump.
    problems = SymbolSupplier(paths, cache=IndexCache(None)).problems + _server_problems(servers)
    yield DumpLoaded(snapshot, problems)
    options = core.ProcessOptions(
        symbol_paths=paths,
        symbols_cache=request.cache_dir,
        use_symbols_cache=request.cache_dir is not None,
        symbol_servers=servers,
    )
    # Without paths or servers the walk looks nothing up: every module is then "missing".
    searched = bool(paths) or servers is not None
    shown: list[ModuleSymbolState | None] = [None] * len(snapshot.modules)
    final: core.ProcessState | None = None
    # With servers, `process_events` downloads on its own threads; closing it (below, also
    # when Cancel raises `Cancelled` here) stops them.
    events = core.process_events(dump, options, cancel=cancel)
    started = False
    try:
        for event in events:
            if isinstance(event, core.FrameWalked | core.ThreadWalked | core.Progress):
                yield event
            elif isinstance(event, core.SymbolsLoaded):
                state = ModuleSymbolState.from_summary(event.symbols, searched=searched, walk_over=False)
                if 0 <= event.module_index < len(shown):
                    shown[event.module_index] = state
                yield SymbolsLoaded(event.module_index, state)
            elif isinstance(event, core.DumpLoaded):
                started = True
            elif isinstance(event, core.Finished):
                final = event.state
    except Cancelled:
        raise
    except InspectorError as exc:
        if started:
            raise
        # The reader could show the dump but the walker refuses it (nothing it reports is readable):
        # the snapshot stays on screen and the reason becomes a problem, not a failure.
        log.info("cannot walk %s: %s", request.dump_path, exc)
        yield WalkUnavailable(str(exc))
    finally:
        close = getattr(events, "close", None)  # a generator: release the dump and symbol files it holds
        if close is not None:
            close()
    if final is not None:
        walk_problems = tuple(p for p in final.problems if p.code in STACKWALKER_PROBLEMS)
        if walk_problems:
            yield WalkProblems(walk_problems)
    # The walk is over (or could not start): a module it never asked for was not needed;
    # one that was prefetched keeps its download.
    for index in range(len(shown)):
        if final is None:
            state = ModuleSymbolState(SymbolLoadState.NOT_NEEDED)
        else:
            state = ModuleSymbolState.from_summary(
                final.modules[index].symbols, searched=searched, walk_over=True
            )
        if state != shown[index]:
            yield SymbolsLoaded(index, state)


def analysis_job(request: AnalysisRequest) -> Job:
    """The job for `request`, ready for `JobRunner.start`."""
    return functools.partial(run_analysis, request)
