"""The analysis job, run directly (no Qt): it yields the core's events, in order, and stops on Cancel."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled
from inspector.core.minidump import NotAMinidump, UnreadableFile
from inspector.core.process import (
    ContextSource,
    DumpLoaded,
    Finished,
    FrameWalked,
    Progress,
    SymbolsLoaded,
    SymbolState,
    ThreadWalked,
)
from inspector.core.unwind import FrameTrust, WalkOptions, WalkPolicy
from inspector.gui.document import AnalysisRequest
from inspector.gui.jobs import progress_fraction, progress_text, run_analysis
from inspector.resources import sample_dump, sample_symbols
from tests.synth.minidump import SynthMinidump


def drain(request: AnalysisRequest, cancel: CancelToken | None = None) -> list[object]:
    return list(run_analysis(request, cancel or CancelToken()))


def final(events: list[object]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished)
    return last


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
        assert [f.index for f in frames] == list(range(len(done.call_stack.frames)))  # each before its thread
    crashing = [e.frame for e in events if isinstance(e, FrameWalked) and e.thread_index == 2]
    assert [f.trust for f in crashing] == [FrameTrust.CONTEXT] + [FrameTrust.CFI] * 3
    assert [f.function_name for f in crashing] == [
        "render_tile",
        "render_worker_main",
        "start_thread",
        "__clone3",
    ]
    # symbols are looked up as the walk needs them: the core's summaries, as it reports them
    loaded = [e for e in events if isinstance(e, SymbolsLoaded)]
    assert [e.module_index for e in loaded] == [0, 2]
    assert [e.symbols.state for e in loaded] == [SymbolState.LOADED, SymbolState.LOADED]
    assert loaded[0].symbols.path is not None and Path(loaded[0].symbols.path).name == "render_farm.sym"
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[-1] == Progress(2, 2, 3, 3) and progress_fraction(progress[-1]) == 1.0
    assert progress_text(progress[-1]) == "symbols 2/2 · threads 3/3"
    assert walked_frame_counts(events) == [6, 5, 4]
    state = final(events).state
    assert state.walked and [entry.symbols.requested for entry in state.modules] == [True, False, True, False]


def test_the_first_state_is_the_unwalked_state_of_the_sample() -> None:
    events = drain(AnalysisRequest(sample_dump()))
    first = events[0]
    assert isinstance(first, DumpLoaded)
    state = first.state
    assert [t.thread_name for t in state.threads] == ["render_farm", "loader", "renderer"]
    assert [len(t.frames) for t in state.threads] == [1, 1, 1]  # only the context frame
    assert state.requesting_thread == 2
    assert state.crash is not None and state.crash.reason == "SIGSEGV / SEGV_MAPERR"
    assert state.crash.address == 0
    crashing = state.thread_starts[2]
    assert crashing.source is ContextSource.EXCEPTION
    assert state.thread_starts[0].source is ContextSource.THREAD
    assert crashing.stack is not None and crashing.stack.base == 0x7FFFF75CFE08
    assert crashing.context is not None and crashing.context.instruction_pointer == 0x555555555758
    assert [m.module.filename for m in state.modules] == [
        "render_farm",
        "linux-vdso.so.1",
        "libc.so.6",
        "ld-linux-x86-64.so.2",
    ]
    assert state.problems == ()


def test_no_symbol_paths_means_nothing_is_looked_up_and_frames_are_scanned() -> None:
    # local_modules=False: this machine's libc is the sample's and would give module 2 symbols
    events = drain(AnalysisRequest(sample_dump(), (), local_modules=False))
    assert not any(isinstance(e, SymbolsLoaded) for e in events)
    assert not final(events).state.symbols_searched
    crashing = [e.frame for e in events if isinstance(e, FrameWalked) and e.thread_index == 2]
    assert crashing[0].trust is FrameTrust.CONTEXT
    assert {f.trust for f in crashing[1:]} == {FrameTrust.SCAN}


def test_the_walk_policy_of_the_request_is_used() -> None:
    breakpad = WalkOptions(policy=WalkPolicy.BREAKPAD, max_frames=2)
    events = drain(AnalysisRequest(sample_dump(), (sample_symbols(),), walk=breakpad))
    state = final(events).state
    assert state.walk_options == breakpad
    assert walked_frame_counts(events) == [2, 2, 2]


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
    assert not any(isinstance(e, FrameWalked) for e in events)
    walked = [e for e in events if isinstance(e, ThreadWalked)]
    assert [e.call_stack.thread_id for e in walked] == [7] and walked[0].call_stack.frames == ()
    problems = final(events).state.problems
    assert [p.code for p in problems] == ["BadData", "NoSystemInfo"]  # the context, then the walk
    assert "system info" in problems[1].message


def test_a_dump_without_a_thread_list_says_so(tmp_path: Path) -> None:
    path = tmp_path / "no-threads.dmp"
    path.write_bytes(SynthMinidump().add_module(0x400000, 0x1000, "app").finish())
    events = drain(AnalysisRequest(path, ()))
    state = final(events).state
    assert [p.code for p in state.problems] == ["NoThreadList"]
    assert len(state.modules) == 1
    assert walked_frame_counts(events) == []


def test_a_dump_the_walker_refuses_is_still_shown(tmp_path: Path) -> None:
    """Nothing the stackwalker reports is readable: the reader's view is shown, the reason is a problem."""
    path = tmp_path / "nothing.dmp"
    path.write_bytes(SynthMinidump(system_info=False).add_stream(0x47670003, b"text").finish())
    events = drain(AnalysisRequest(path, ()))
    assert [type(e) for e in events] == [DumpLoaded, Finished]
    problems = final(events).state.problems
    assert problems[-1].code == "NotWalked" and "nothing in the dump can be reported" in problems[-1].message


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
    [problem] = first.state.problems
    assert (problem.code, problem.where) == ("SymbolPath", str(tmp_path / "nowhere"))
    assert problem.message.endswith(": does not exist")
    assert walked_frame_counts(events) == [6, 5, 4]
