"""The phase-1 analysis job, run directly (no Qt): what it yields, in which order, and how it stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled
from inspector.core.minidump import NotAMinidump, UnreadableFile
from inspector.gui.document import AnalysisRequest, ContextSource, SymbolLoadState
from inspector.gui.jobs import DumpLoaded, Finished, Progress, SymbolsLoaded, SymbolsLoading, run_analysis
from inspector.resources import sample_dump, sample_symbols


def drain(request: AnalysisRequest, cancel: CancelToken | None = None) -> list[object]:
    events = list(run_analysis(request, cancel or CancelToken()))
    for e in events:
        if isinstance(e, DumpLoaded):
            e.snapshot.close()
    return events


def test_the_dump_is_reported_before_any_symbol_work_then_each_module_in_order() -> None:
    events = drain(AnalysisRequest(sample_dump(), (sample_symbols(),)))
    assert isinstance(events[0], DumpLoaded)
    assert isinstance(events[-1], Finished)
    kinds = [type(e).__name__ for e in events[1:-1]]
    assert kinds == ["SymbolsLoading", "SymbolsLoaded", "Progress"] * 4
    loaded = [e for e in events if isinstance(e, SymbolsLoaded)]
    assert [e.module_index for e in loaded] == [0, 1, 2, 3]
    assert [e.state.state for e in loaded] == [
        SymbolLoadState.LOADED,  # render_farm
        SymbolLoadState.MISSING,  # linux-vdso.so.1
        SymbolLoadState.LOADED,  # libc.so.6
        SymbolLoadState.MISSING,  # ld-linux-x86-64.so.2
    ]
    assert loaded[0].state.path is not None and loaded[0].state.path.name == "render_farm.sym"
    assert loaded[1].state.tried, "a missing module lists the paths tried"
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[-1] == Progress(4, 4) and progress[-1].fraction == 1.0
    final = events[-1]
    assert isinstance(final, Finished)
    assert [s.state for s in final.state.symbols] == [e.state.state for e in loaded]


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


def test_no_symbol_paths_means_every_module_is_missing() -> None:
    events = drain(AnalysisRequest(sample_dump(), ()))
    states = [e.state.state for e in events if isinstance(e, SymbolsLoaded)]
    assert states == [SymbolLoadState.MISSING] * 4


def test_a_set_cancel_token_stops_the_job_between_modules() -> None:
    cancel = CancelToken()
    job = run_analysis(AnalysisRequest(sample_dump(), (sample_symbols(),)), cancel)
    first = next(job)
    assert isinstance(first, DumpLoaded)
    assert isinstance(next(job), SymbolsLoading)
    cancel.cancel()
    with pytest.raises(Cancelled):
        list(job)
    first.snapshot.close()


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
    assert isinstance(events[-1], Finished)


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
