"""The analysis job the worker runs: open the dump and forward the core's events as they come.

A job is any callable `job(cancel) -> Iterator[event]` (its `return` value,
if any, becomes the worker's `finished` payload); `JobWorker` runs it on its
thread and knows nothing about the events. `Session.apply` is the one place
that interprets them.

`run_analysis` yields exactly the core's events (`inspector.core.process.process_events`),
in its order: `DumpLoaded(state)` (threads, modules, memory, the crash: before any symbol
work), then as the walk goes `SymbolsLoaded`, `FrameWalked`, `ThreadWalked` and `Progress`,
and `Finished(state)` with the final state. A dump the stackwalker cannot walk at all (none
of its system info, thread list, module list and exception can be read) is still shown: the
core is asked not to refuse it (`usable_only=False`) and its state says why in a problem.

With symbol servers (`AnalysisRequest.symbol_servers`) the core downloads missing files,
prefetching the modules that registers and stack words point into; download states arrive
as `SymbolsLoaded` and the running downloads are counted in `Progress`. Cancel stops the
downloads with the walk.

Everything here runs on the worker thread: no Qt, only immutable values leave.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from inspector.core import process as core
from inspector.core.cancel import CancelToken
from inspector.core.dumpfile import open_any_dump
from inspector.gui.document import AnalysisRequest

#: What the worker runs: called on the worker thread with the run's cancel token.
Job = Callable[[CancelToken], Iterator[object]]

#: Events that are worth showing at once (the worker's batching never holds these back).
MILESTONES = (core.DumpLoaded,)


def progress_fraction(progress: core.Progress) -> float | None:
    """Done / to do over symbols and threads; None before anything is known."""
    todo = progress.symbols_requested + progress.threads_total
    if todo == 0:
        return None
    return (progress.symbols_loaded + progress.threads_walked) / todo


def progress_text(progress: core.Progress) -> str:
    """`symbols 3/4 · threads 1/7 · 2 downloading` for the progress bar."""
    parts = []
    if progress.symbols_requested:
        parts.append(f"symbols {progress.symbols_loaded}/{progress.symbols_requested}")
    if progress.threads_total:
        parts.append(f"threads {progress.threads_walked}/{progress.threads_total}")
    if progress.downloads_active:
        parts.append(f"{progress.downloads_active} downloading")
    return " · ".join(parts)


def run_analysis(request: AnalysisRequest, cancel: CancelToken) -> Iterator[object]:
    """Open `request.dump_path` and yield the core's events for it (see the module docstring).

    Raises the reader's `MinidumpError` when the file cannot be opened as a minidump (the
    worker turns it into `failed`), `Cancelled` when `cancel` is set. A damaged dump is not an
    error: its state lists the problems.
    """
    cancel.check()
    servers = request.symbol_servers
    options = core.ProcessOptions(
        symbol_paths=request.symbol_paths,
        symbols_cache=request.cache_dir,
        use_symbols_cache=request.cache_dir is not None,
        walk=request.walk,
        symbol_servers=servers if servers is not None and servers.enabled else None,
        local_modules=request.local_modules,
    )
    dump = open_any_dump(request.dump_path)  # a minidump, or the first microdump of a log
    # With servers, `process_events` downloads on its own threads; closing it (below, also when
    # Cancel raises `Cancelled` here) stops them and releases the symbol files it holds.
    events = core.process_events(dump, options, cancel=cancel, usable_only=False)
    try:
        yield from events
    finally:
        events.close()


def analysis_job(request: AnalysisRequest) -> Job:
    """The job for `request`, ready for `JobRunner.start`."""
    return functools.partial(run_analysis, request)
