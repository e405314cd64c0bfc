"""The Crash Set job the worker thread runs: find the dumps under some folders, triage each, stream results.

`run_crash_set(request, cancel)` yields

    CrashSetFound(count)          the dumps (and bad entries) found, before any is walked
    CrashTriaged(index, crash)    one result, `index` being its place among those found

A set of more than `IN_PROCESS_AT_MOST` dumps is triaged in worker processes (started
with "spawn": this process has threads), the same `run_batch` the `triage` command uses;
a smaller one on the worker thread itself, where starting processes would cost more than
the walks. Everything here runs on the worker thread: no Qt, only frozen values leave.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from inspector.core.cancel import CancelToken
from inspector.core.triage import CrashTriage, TriageOptions, find_dumps, run_batch
from inspector.gui.jobs import Job

#: Sets up to this size are triaged on the worker thread, larger ones in worker processes.
IN_PROCESS_AT_MOST = 24


@dataclass(frozen=True, slots=True)
class CrashSetRequest:
    inputs: tuple[Path, ...]
    options: TriageOptions
    #: worker processes (None: the CPU count for a large set, this thread for a small one)
    workers: int | None = None


@dataclass(frozen=True, slots=True)
class CrashSetFound:
    count: int


@dataclass(frozen=True, slots=True)
class CrashTriaged:
    index: int
    crash: CrashTriage


def run_crash_set(request: CrashSetRequest, cancel: CancelToken) -> Iterator[object]:
    found = []
    for item in find_dumps(request.inputs):
        found.append(item)
        if len(found) % 64 == 0:
            cancel.check()
    yield CrashSetFound(len(found))
    workers = request.workers
    if workers is None:
        workers = 1 if len(found) <= IN_PROCESS_AT_MOST else os.cpu_count() or 1
    for index, crash in run_batch(found, request.options, workers=workers, cancel=cancel):
        yield CrashTriaged(index, crash)


def crash_set_job(request: CrashSetRequest) -> Job:
    return functools.partial(run_crash_set, request)
