"""Runs damaged inputs through the engine in-process, with a time limit, and keeps what came out.

`run_library(path, symbol_paths, cache)` does what the command line does — open the dump, print
the dump report, process it with symbols, render the JSON, human (with `--trace`) and machine
reports — and returns an `Outcome` with the facts the robustness tests compare (never the
objects themselves, so no mapping stays open). An exception that is not an `InspectorError`
is caught and kept as text: the tests fail on it with the variant's name.

`assert_nothing_lost(outcome, original, expected)` checks that what a damaged dump still holds
(`damage.survivors`) is in its outcome, equal to the undamaged original's.

`time_limit(seconds)` interrupts pure-Python work that runs too long (SIGPROF in the main
thread): a hang becomes `Hang`, a `BaseException` our `except Exception` clauses cannot
swallow. The limit counts this process's CPU time, not wall time: a hang spins, while a machine
busy with other work only makes an honest run wait longer (wall-clock limits failed that way).
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.dumpfile import open_any_dump
from inspector.core.errors import InspectorError
from inspector.core.microdump.dump import Microdump
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.report.dump_text import render_dump
from inspector.core.report.human import render_human
from inspector.core.report.json_report import json_document, render_json
from inspector.core.report.machine import render_machine
from inspector.core.report.microdump_text import render_microdump
from inspector.core.unwind import WalkOptions
from tests.robustness.damage import Survivors

#: Most CPU time one input may take in-process (a few milliseconds is usual).
IN_PROCESS_SECONDS = 5.0


class Hang(BaseException):
    """An input ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


#: (instruction, trust, module file name, function name) of one frame
FrameFact = tuple[int, str, str | None, str | None]


@dataclass
class Outcome:
    """What the engine made of one input."""

    seconds: float = 0.0
    open_error: InspectorError | None = None
    process_error: InspectorError | None = None
    foreign: str | None = None  # traceback of an exception that is not ours
    reader_problems: int = 0
    os_cpu: tuple[str, str] | None = None
    crash: tuple[str, int] | None = None
    modules: list[tuple[int, int, str, str]] = field(default_factory=list)
    threads: dict[int, list[FrameFact]] = field(default_factory=dict)  # thread id -> frames
    crashing_thread_frames: int = 0
    problems: list[str] = field(default_factory=list)  # messages of ProcessState.problems
    json_problems: list[str] = field(default_factory=list)
    human: str = ""

    @property
    def refused(self) -> bool:
        return self.open_error is not None or self.process_error is not None

    @property
    def noticed(self) -> bool:
        """The damage was seen: the input was refused, or a problem was recorded."""
        return self.refused or bool(self.problems) or self.reader_problems > 0


def options_for(symbol_paths: tuple[Path, ...], cache: Path | None) -> ProcessOptions:
    return ProcessOptions(
        symbol_paths=symbol_paths,
        symbols_cache=cache,
        use_symbols_cache=cache is not None,
        walk=WalkOptions(),
    )


def facts(state: ProcessState, outcome: Outcome) -> None:
    system = state.system
    outcome.os_cpu = (system.os_name, system.cpu_arch)
    outcome.crash = None if state.crash is None else (state.crash.reason, state.crash.address)
    outcome.modules = [
        (e.module.base, e.module.size, e.module.code_file, e.module.debug_id) for e in state.modules
    ]
    outcome.threads = {
        stack.thread_id: [
            (f.instruction, f.trust.value, None if f.module is None else f.module.filename, f.function_name)
            for f in stack.frames
        ]
        for stack in state.threads
    }
    crashing = state.crashing_thread
    outcome.crashing_thread_frames = 0 if crashing is None else len(crashing.frames)
    outcome.problems = [p.message for p in state.problems]


def run_library(path: Path, symbol_paths: tuple[Path, ...], cache: Path | None) -> Outcome:
    """Everything the command line does with a dump, in-process; never raises (but `Hang`)."""
    outcome = Outcome()
    started = time.perf_counter()
    try:
        with time_limit(IN_PROCESS_SECONDS):
            _run(path, symbol_paths, cache, outcome)
    except Hang:
        raise
    except Exception:
        outcome.foreign = traceback.format_exc()
    outcome.seconds = time.perf_counter() - started
    return outcome


def _run(path: Path, symbol_paths: tuple[Path, ...], cache: Path | None, outcome: Outcome) -> None:
    try:
        dump = open_any_dump(path)
    except InspectorError as exc:
        outcome.open_error = exc
        return
    try:
        dump.parse_all()
        outcome.reader_problems = len(dump.problems)
        if isinstance(dump, Microdump):
            render_microdump(dump)
        else:
            render_dump(dump)
        try:
            state = process(dump, options_for(symbol_paths, cache))
        except InspectorError as exc:
            outcome.process_error = exc
            return
        facts(state, outcome)
        document = json.loads(render_json(state))
        outcome.json_problems = [p["message"] for p in document["inspector_problems"]]
        assert json_document(state)["inspector_problems"] == document["inspector_problems"]
        outcome.human = render_human(state)
        render_human(state, trace=True)
        render_human(state, brief=True)
        render_machine(state)
    finally:
        dump.close()


def assert_nothing_lost(outcome: Outcome, original: Outcome, expected: Survivors) -> None:
    """What the damaged file still holds (`expected`) is in `outcome`, equal to `original`'s."""
    if outcome.open_error is not None:
        # refused on opening: only when its header or directory cannot be read
        assert not (expected.modules or expected.threads or expected.system), outcome.open_error
        return
    assert outcome.process_error is None or not (expected.modules or expected.threads or expected.system)
    if expected.system:
        assert outcome.os_cpu == original.os_cpu
    if expected.crash:
        assert outcome.crash == original.crash
    for i in expected.modules:
        assert original.modules[i] in outcome.modules, f"module {i} lost"
    thread_ids = list(original.threads)
    for i in expected.threads:
        assert thread_ids[i] in outcome.threads, f"thread {i} lost"
    for i in expected.first_frames:
        frames = outcome.threads[thread_ids[i]]
        assert frames and frames[0][:2] == original.threads[thread_ids[i]][0][:2], f"thread {i}: frame 0"
    for i in expected.walks:
        assert outcome.threads[thread_ids[i]] == original.threads[thread_ids[i]], f"thread {i}: frames"
