"""Running a batch: in this process, in worker processes, or on an existing Dask cluster.

`run_batch(found, options, workers=, scheduler=)` yields `(index, CrashTriage)` as dumps
are done, `index` being the dump's place in `found`; every way of running calls the same
`triage_chunk` → `triage_dump`, so the results are the same wherever they were computed.

Work is sent in chunks of consecutive dumps after sorting them by their main module's
identity (`FoundDump.route`): the dumps of one build go to one worker together, where
the symbol files the first one opened are still open for the others. The pool hands the
next chunk to whichever worker is free (no scheduler of our own): on one machine
`concurrent.futures.ProcessPoolExecutor`, beyond it `dask.distributed`
(`Client(address).map`). Workers are given absolute paths (a Dask worker runs in another
folder, or on another machine with the same shared folders); the results are renamed
back to the paths as found.

Ctrl+C or a cancelled token stops handing out chunks; what is done has been yielded.
Worker processes ignore SIGINT, so that the parent alone decides what happens then.
"""

from __future__ import annotations

import importlib
import math
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.errors import Cancelled, InspectorError
from inspector.core.triage.discover import FoundDump
from inspector.core.triage.dump import (
    CrashTriage,
    TriageOptions,
    preload,
    renamed,
    triage_chunk,
    triage_dump,
    unreadable,
)

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

#: The most dumps in one chunk: small enough that Ctrl+C waits little and progress moves often.
MAX_CHUNK = 16

#: Seconds to wait for a Dask scheduler to answer.
CONNECT_TIMEOUT = 10.0

INSTALL_HINT = "pip install 'crash-inspector[cluster]' (or: pip install 'dask[distributed]')"


class ClusterUnavailable(InspectorError):
    """`dask.distributed` is not installed, or its scheduler cannot be reached."""

    code = "ClusterUnavailable"


Chunk = list[tuple[int, str]]
Results = Iterator[tuple[int, CrashTriage]]


def plan_chunks(found: Sequence[FoundDump], workers: int) -> list[Chunk]:
    """(index, absolute path) chunks of the dumps, sorted by main module; chunks end between builds
    when they can. About four chunks per worker, so that a slow chunk does not hold the others up."""
    order = sorted((i for i, f in enumerate(found) if f.problem is None), key=lambda i: (found[i].route, i))
    target = max(1, min(MAX_CHUNK, math.ceil(len(order) / (max(1, workers) * 4))))
    chunks: list[Chunk] = []
    current: Chunk = []
    for i in order:
        new_build = bool(current) and found[i].route != found[current[-1][0]].route
        if len(current) >= 2 * target or (len(current) >= target and new_build):
            chunks.append(current)
            current = []
        current.append((i, os.path.abspath(found[i].path)))
    if current:
        chunks.append(current)
    return chunks


def run_batch(
    found: Sequence[FoundDump],
    options: TriageOptions,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    cancel: CancelToken = NEVER,
    mp_context: BaseContext | None = None,
) -> Results:
    """Triage every dump of `found`; yields (index in `found`, result) as each is done.

    `workers`: processes on this machine (default: the CPU count; 1: in this process).
    `scheduler`: a `dask.distributed` scheduler address instead (`tcp://host:8786`).
    Raises `ClusterUnavailable` when Dask is missing or its scheduler does not answer
    (before any dump is triaged), `Cancelled` when `cancel` is set.
    """
    for index, item in enumerate(found):
        if item.problem is not None:
            yield index, unreadable(item.path, "UnreadableFolder", item.problem)
    workers = workers or os.cpu_count() or 1
    chunks = plan_chunks(found, 1 if scheduler is None and workers == 1 else workers)
    if scheduler is not None:
        results = _on_dask(chunks, options, scheduler, cancel)
    elif workers == 1:
        results = _here(chunks, options, cancel)
    else:
        results = _in_processes(chunks, options, workers, cancel, mp_context)
    for index, result in results:
        yield index, renamed(result, found[index].path)


def _here(chunks: list[Chunk], options: TriageOptions, cancel: CancelToken) -> Results:
    for chunk in chunks:
        for index, path in chunk:
            cancel.check()
            yield index, triage_dump(path, options, cancel=cancel)


def _worker_start() -> None:
    """Worker processes leave Ctrl+C to the parent, which stops handing out work."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _default_context() -> BaseContext:
    # fork starts a worker at no cost (the engine is already imported), but is safe only
    # while this process has a single thread (the CLI); the window's process has many.
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _failed(chunk: Chunk, why: str) -> list[tuple[int, CrashTriage]]:
    return [(index, unreadable(path, "WorkerFailed", f"{path}: {why}")) for index, path in chunk]


def _in_processes(
    chunks: list[Chunk],
    options: TriageOptions,
    workers: int,
    cancel: CancelToken,
    mp_context: BaseContext | None,
) -> Results:
    context = mp_context or _default_context()
    if context.get_start_method() == "fork":
        preload()  # forked workers inherit siggen and the reports, ready
    pool = ProcessPoolExecutor(
        max_workers=min(workers, max(1, len(chunks))), mp_context=context, initializer=_worker_start
    )
    finished = False
    try:
        pending: dict[Future[list[tuple[int, CrashTriage]]], Chunk] = {
            pool.submit(triage_chunk, chunk, options): chunk for chunk in chunks
        }
        while pending:
            done, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            for future in done:
                chunk = pending.pop(future)
                try:
                    yield from future.result()
                except BrokenProcessPool:
                    yield from _failed(chunk, "the worker process stopped unexpectedly while triaging it")
                except Exception as exc:  # the task itself never raises for a bad dump
                    yield from _failed(chunk, f"triage failed in the worker ({type(exc).__name__}: {exc})")
            if cancel.cancelled:
                raise Cancelled()
        finished = True
    finally:
        # stopped early (Ctrl+C, cancel, the consumer gone): drop the queued chunks and do not
        # wait for the running ones
        pool.shutdown(wait=finished, cancel_futures=True)


def _on_dask(chunks: list[Chunk], options: TriageOptions, address: str, cancel: CancelToken) -> Results:
    try:
        # untyped to mypy on purpose: an optional dependency, called in few places
        distributed: Any = importlib.import_module("distributed")
    except ImportError:
        raise ClusterUnavailable(
            f"--scheduler needs dask.distributed, which is not installed: {INSTALL_HINT}"
        ) from None
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterUnavailable(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    futures: dict[object, Chunk] = {}
    try:
        # pure=False: a chunk is walked again on every run (its symbols may have changed)
        submitted = client.map(triage_chunk, chunks, options=options, pure=False)
        futures = dict(zip(submitted, chunks, strict=True))
        for future in distributed.as_completed(list(futures), loop=client.loop):
            chunk = futures.pop(future)
            try:
                yield from future.result()
            except Exception as exc:  # a lost worker, a killed task: its dumps are reported, the rest go on
                yield from _failed(chunk, f"the Dask task failed ({type(exc).__name__}: {exc})")
            if cancel.cancelled:
                raise Cancelled()
    finally:
        if futures:
            client.cancel(list(futures))
        client.close()
