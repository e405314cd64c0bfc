"""The analysis job, run directly (no Qt): what it yields, in which order, and how it stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled
from inspector.core.minidump import NotAMinidump, UnreadableFile
from inspector.core.unwind import FrameTrust
from inspector.gui.document import AnalysisRequest, ContextSource, SymbolLoadState
from inspector.gui.jobs import (
    DumpLoaded,
    FrameWalked,
    Progress,
    SymbolsLoaded,
    ThreadWalked,
    WalkProblems,
    WalkUnavailable,
    progress_fraction,
    progress_text,
    run_analysis,
)
from inspector.resources import sample_dump, sample_symbols
from tests.synth.minidump import SynthMinidump


def drain(request: AnalysisRequest, cancel: CancelToken | None = None) -> list[object]:
    events = list(run_analysis(request, cancel or CancelToken()))
    for e in events:
        if isinstance(e, DumpLoaded):
            e.snapshot.close()
    return events


def settled_states(events: list[object]) -> list[SymbolLoadState]:
    """Each module's last reported symbol state (by module index): the run ran to its end, which
    settles every module."""
    last: dict[int, SymbolLoadState] = {}
    for e in events:
        if isinstance(e, SymbolsLoaded):
            last[e.module_index] = e.state.state
    states = [last[i] for i in sorted(last)]
    assert sorted(last) == list(range(len(states))) and all(s.settled for s in states)
    return states


def walked_frame_counts(events: list[object]) -> list[int]:
    """Frames of each walked thread, by thread index."""
    stacks = {e.thread_index: e.call_stack for e in events if isinstance(e, ThreadWalked)}
    return [len(stacks[i].frames) for i in sorted(stacks)]


def test_the_dump_is_shown_first_then_frames_stream_thread_by_thread() -> None:
    events = drain(AnalysisRequest(sample_dump(), (sample_symbols(),)))
    assert isinstance(events[0], DumpLoaded)
    walked = [e for e in events if isinstance(e, ThreadWalked)]
    assert [e.thread_index for e in walked] == [2, 0, 1]  # the crashing thread first, then dump order
    for done in walked:
        position = events.index(done)
        frames = [
            e.frame
            for e in events[:position]
            if isinstance(e, FrameWalked) and e.thread_index == done.thread_index
        ]
        assert [f.index for f in frames] == list(
            range(len(done.call_stack.frames))
        )  # each frame before its thread
    crashing = [e.frame for e in events if isinstance(e, FrameWalked) and e.thread_index == 2]
    assert [f.trust for f in crashing] == [FrameTrust.CONTEXT] + [FrameTrust.CFI] * 3
    assert [f.function_name for f in crashing] == [
        "render_tile",
        "render_worker_main",
        "start_thread",
        "__clone3",
    ]
    # symbols are looked up as the walk needs them; modules no frame is in are settled at the end
    loaded = [e for e in events if isinstance(e, SymbolsLoaded)]
    assert [e.module_index for e in loaded] == [0, 2, 1, 3]
    assert [e.state.state for e in loaded] == [
        SymbolLoadState.LOADED,  # render_farm
        SymbolLoadState.LOADED,  # libc.so.6
        SymbolLoadState.NOT_NEEDED,  # linux-vdso.so.1: no frame in it
        SymbolLoadState.NOT_NEEDED,  # ld-linux-x86-64.so.2
    ]
    assert loaded[0].state.path is not None and loaded[0].state.path.name == "render_farm.sym"
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[-1] == Progress(2, 2, 3, 3) and progress_fraction(progress[-1]) == 1.0
    assert progress_text(progress[-1]) == "symbols 2/2 · threads 3/3"
    assert walked_frame_counts(events) == [6, 5, 4]
    assert settled_states(events) == [
        SymbolLoadState.LOADED,
        SymbolLoadState.NOT_NEEDED,
        SymbolLoadState.LOADED,
        SymbolLoadState.NOT_NEEDED,
    ]


def test_the_snapshot_holds_the_unwalked_state_of_the_sample() -> None:
    events = list(run_analysis(AnalysisRequest(sample_dump()), CancelToken()))
    first = events[0]
    assert isinstance(first, DumpLoaded)
    snap = first.snapshot
    try:
        assert [t.name for t in snap.threads] == ["render_farm", "loader", "renderer"]
        assert snap.summary.crashing_thread == 2
        assert snap.summary.crash_reason == "SIGSEGV / SEGV_MAPERR"
        assert snap.summary.crash_address == 0
        crashing = snap.threads[2]
        assert crashing.is_crashing and crashing.context_source is ContextSource.EXCEPTION
        assert snap.threads[0].context_source is ContextSource.THREAD
        assert crashing.stack is not None and crashing.stack.base == 0x7FFFF75CFE08
        assert crashing.instruction_pointer == 0x555555555758
        assert snap.describe_code_address(0x555555555758) == "render_farm + 0x1758"
        assert [m.filename for m in snap.modules] == [
            "render_farm",
            "linux-vdso.so.1",
            "libc.so.6",
            "ld-linux-x86-64.so.2",
        ]
        assert snap.problems == ()
    finally:
        snap.close()


def test_no_symbol_paths_means_every_module_is_missing_and_frames_are_scanned() -> None:
    events = drain(AnalysisRequest(sample_dump(), ()))
    states = [e.state.state for e in events if isinstance(e, SymbolsLoaded)]
    assert states == [SymbolLoadState.MISSING] * 4
    crashing = [e.frame for e in events if isinstance(e, FrameWalked) and e.thread_index == 2]
    assert crashing[0].trust is FrameTrust.CONTEXT
    assert {f.trust for f in crashing[1:]} == {FrameTrust.SCAN}


def test_a_set_cancel_token_stops_the_walk_between_frames() -> None:
    cancel = CancelToken()
    job = run_analysis(AnalysisRequest(sample_dump(), (sample_symbols(),)), cancel)
    first = next(job)
    assert isinstance(first, DumpLoaded)
    seen = [next(job) for _ in range(3)]
    assert any(isinstance(e, FrameWalked) for e in seen)
    cancel.cancel()
    with pytest.raises(Cancelled):
        list(job)
    first.snapshot.close()


def test_a_dump_without_system_info_is_walked_and_the_stackwalker_says_what_is_missing(
    tmp_path: Path,
) -> None:
    """No system info and a context naming no CPU: the thread is listed without registers."""
    path = tmp_path / "no-system-info.dmp"
    dump = SynthMinidump().add_thread(thread_id=7)
    dump.auto_system_info = False
    path.write_bytes(dump.finish())
    events = drain(AnalysisRequest(path, ()))
    assert isinstance(events[0], DumpLoaded)
    assert not any(isinstance(e, WalkUnavailable | FrameWalked) for e in events)
    walked = [e for e in events if isinstance(e, ThreadWalked)]
    assert [e.call_stack.thread_id for e in walked] == [7] and walked[0].call_stack.frames == ()
    problems = [p for e in events if isinstance(e, WalkProblems) for p in e.problems]
    assert [p.code for p in problems] == ["NoSystemInfo"] and "system info" in problems[0].message
    assert settled_states(events) == []  # no modules; the run ended


def test_a_dump_without_a_thread_list_says_so(tmp_path: Path) -> None:
    path = tmp_path / "no-threads.dmp"
    path.write_bytes(SynthMinidump().add_module(0x400000, 0x1000, "app").finish())
    events = drain(AnalysisRequest(path, ()))
    problems = [p for e in events if isinstance(e, WalkProblems) for p in e.problems]
    assert [p.code for p in problems] == ["NoThreadList"]
    assert len(settled_states(events)) == 1
    assert walked_frame_counts(events) == []


def test_a_dump_the_walker_refuses_is_still_shown(tmp_path: Path) -> None:
    """Nothing the stackwalker reports is readable: the reader's view stays, the reason is a problem."""
    path = tmp_path / "nothing.dmp"
    path.write_bytes(SynthMinidump(system_info=False).add_stream(0x47670003, b"text").finish())
    events = drain(AnalysisRequest(path, ()))
    assert isinstance(events[0], DumpLoaded)
    unavailable = [e for e in events if isinstance(e, WalkUnavailable)]
    assert len(unavailable) == 1 and "nothing in the dump can be reported" in unavailable[0].message
    assert settled_states(events) == []
    assert not any(isinstance(e, FrameWalked | ThreadWalked | WalkProblems) for e in events)


def test_a_file_that_is_not_a_minidump_raises_before_yielding(tmp_path: Path) -> None:
    bad = tmp_path / "notes.dmp"
    bad.write_text("hello, this is text")
    with pytest.raises(NotAMinidump, match="not a minidump"):
        drain(AnalysisRequest(bad))
    with pytest.raises(UnreadableFile, match="is a directory"):
        drain(AnalysisRequest(tmp_path))
    with pytest.raises(UnreadableFile, match="no such file"):
        drain(AnalysisRequest(tmp_path / "gone.dmp"))


def test_a_missing_symbol_path_is_reported_not_fatal(tmp_path: Path) -> None:
    events = drain(AnalysisRequest(sample_dump(), (tmp_path / "nowhere", sample_symbols())))
    first = events[0]
    assert isinstance(first, DumpLoaded)
    assert [p.reason for p in first.symbol_path_problems] == ["does not exist"]
    assert len(settled_states(events)) == 4


def test_an_empty_assertion_record_is_no_assertion(corpus_dir: Path) -> None:
    """node-minidump's windows.dmp carries an all-zero AssertionInfo stream (Electron's Crashpad)."""
    from inspector.core.minidump import Minidump
    from inspector.gui.document import DumpSnapshot

    empty = DumpSnapshot.from_dump(Minidump.open(corpus_dir / "node-minidump" / "windows.dmp"))
    real = DumpSnapshot.from_dump(Minidump.open(corpus_dir / "rust-minidump" / "invalid-parameter.dmp"))
    try:
        assert empty.summary.assertion is None
        assert real.summary.assertion is not None
        assert real.summary.assertion.startswith(
            "Invalid parameter passed to library function format != nullptr"
        )
    finally:
        empty.close()
        real.close()
