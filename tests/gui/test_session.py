"""Session: documents arrive from the worker, the selection is idempotent and loop-safe, errors keep the
previous dump, symbol path changes re-run the analysis."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.core.cancel import CancelToken
from inspector.core.minidump import NotAMinidump, UnreadableFile
from inspector.core.process import DumpLoaded, FrameWalked, Progress, SymbolState, ThreadWalked
from inspector.gui.document import AnalysisRequest, AnalysisStatus
from inspector.gui.jobs import run_analysis
from inspector.gui.session import FrameRef, LoadFailure, Session
from inspector.gui.symbol_status import symbol_status
from inspector.resources import sample_dump, sample_symbols
from tests.gui.support import ANALYSIS_TIMEOUT_MS, load, wait_analysis_over


def failures(session: Session) -> list[LoadFailure]:
    found: list[LoadFailure] = []
    session.analysis_failed.connect(found.append)
    return found


def test_opening_the_sample_shows_it_selects_the_crashing_thread_and_fills_in_symbols(
    qtbot: QtBot, session: Session
) -> None:
    selected: list[int] = []
    session.thread_selected.connect(selected.append)
    busy: list[bool] = []
    session.busy_changed.connect(busy.append)
    progress: list[object] = []
    session.progress_changed.connect(progress.append)  # what the progress bar shows
    load(qtbot, session, sample_dump())
    doc = session.document
    assert doc is not None and doc.path == sample_dump()
    assert doc.status is AnalysisStatus.FINISHED
    assert selected == [2] and session.selected_thread == 2
    assert session.selected_thread_view is not None and session.selected_thread_view.name == "renderer"
    assert [symbol_status(s, doc).text for s in doc.symbols] == [
        "loaded",
        "not needed",
        "loaded",
        "not needed",
    ]
    assert doc.state.walked  # the core's final state: what the reports say
    assert doc.modules_used == {0, 2} and doc.modules_lacking_symbols() == []
    assert busy == [True, False]
    assert progress[-1] == Progress(2, 2, 3, 3)
    assert [session.frame_count(i) for i in range(3)] == [6, 5, 4]
    assert session.selected_frame == FrameRef(2, 0)  # the crashing thread's first frame, once walked


def test_selection_setters_are_idempotent_and_ignore_bad_indexes(qtbot: QtBot, session: Session) -> None:
    load(qtbot, session, sample_dump())
    with qtbot.assertNotEmitted(session.thread_selected):
        session.select_thread(2)  # already selected
        session.select_thread(3)  # out of range
        session.select_thread(-5)
    with qtbot.waitSignal(session.thread_selected) as selected:
        session.select_thread(0)
    assert selected.args == [0]
    with qtbot.assertNotEmitted(session.module_selected):
        session.select_module(99)
    with qtbot.waitSignal(session.module_selected) as module:
        session.select_module(2)
    assert module.args == [2]
    with qtbot.assertNotEmitted(session.module_selected):
        session.select_module(2)


def test_a_selection_made_while_one_is_announced_cannot_loop(qtbot: QtBot, session: Session) -> None:
    load(qtbot, session, sample_dump())
    announced: list[int] = []

    def stubborn_pane(index: int) -> None:
        announced.append(index)
        session.select_thread(1 if index != 1 else 0)  # a pane that disagrees would ping-pong forever

    session.thread_selected.connect(stubborn_pane)
    session.select_thread(0)
    assert announced == [0]
    assert session.selected_thread == 0


def test_frame_selection_selects_its_thread(qtbot: QtBot, session: Session) -> None:
    load(qtbot, session, sample_dump())
    threads: list[int] = []
    frames: list[object] = []
    session.thread_selected.connect(threads.append)
    session.frame_selected.connect(frames.append)
    session.select_frame(FrameRef(1, 3, 1))
    assert threads == [1] and frames == [FrameRef(1, 3, 1)]
    session.select_frame(FrameRef(1, 3, 1))
    assert frames == [FrameRef(1, 3, 1)]  # idempotent
    session.select_frame(None)
    assert frames == [FrameRef(1, 3, 1), None]
    assert session.frame_count(1) == 5


def test_a_file_that_is_not_a_minidump_keeps_the_previous_dump(
    qtbot: QtBot, session: Session, tmp_path: Path
) -> None:
    load(qtbot, session, sample_dump())
    before = session.document
    bad = tmp_path / "report.dmp"
    bad.write_bytes(b"GIF89a not a dump at all")
    failed = failures(session)
    with qtbot.assertNotEmitted(session.document_changed):
        load(qtbot, session, bad)
    assert session.document is before
    assert len(failed) == 1 and isinstance(failed[0].error, NotAMinidump)
    assert "not a minidump" in failed[0].message and not failed[0].document_shown
    assert not session.is_busy
    # the session still works
    load(qtbot, session, sample_dump())
    assert session.document is not None and session.document is not before


@pytest.mark.parametrize("make", ["directory", "missing", "empty", "truncated header"])
def test_unreadable_inputs_are_reported_clearly(
    qtbot: QtBot, session: Session, tmp_path: Path, make: str
) -> None:
    path = tmp_path / "crash.dmp"
    expected = {
        "directory": "is a directory",
        "missing": "no such file",
        "empty": "the file is empty",
        "truncated header": "too short for a minidump header",
    }[make]
    if make == "directory":
        path.mkdir()
    elif make == "empty":
        path.write_bytes(b"")
    elif make == "truncated header":
        path.write_bytes(sample_dump().read_bytes()[:20])
    failed = failures(session)
    load(qtbot, session, path)
    assert len(failed) == 1
    assert expected in failed[0].message
    assert str(path) in failed[0].message or make == "empty"


def test_permission_denied_is_reported(
    qtbot: QtBot, session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked.dmp"
    locked.write_bytes(sample_dump().read_bytes())
    real_open = os.open

    def open_(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        # as `chmod 000` does for a normal user (the tests may run as root)
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", open_)  # dumps are opened with os.open (no Python file object)
    failed = failures(session)
    load(qtbot, session, locked)
    assert len(failed) == 1 and isinstance(failed[0].error, UnreadableFile)
    assert failed[0].message == f"{locked}: cannot open (Permission denied)"


def test_a_truncated_dump_opens_with_its_problems(qtbot: QtBot, session: Session, tmp_path: Path) -> None:
    cut = tmp_path / "truncated.dmp"
    cut.write_bytes(sample_dump().read_bytes()[:0x2400])
    problems: list[None] = []
    session.problems_changed.connect(lambda: problems.append(None))
    load(qtbot, session, cut)
    doc = session.document
    assert doc is not None and doc.path == cut
    assert doc.thread_count == 3
    crashing = doc.thread(2)
    assert crashing is not None and crashing.stack_region is None  # its stack bytes lie past the cut
    listed = doc.problems()
    assert listed and all(p.source == "dump" for p in listed)
    assert any("outside the file" in p.message for p in listed)
    assert problems


def test_new_symbol_paths_rerun_the_analysis_and_keep_the_selected_thread(
    qtbot: QtBot, tmp_path: Path
) -> None:
    session = Session(cache_dir=None)
    session.local_modules = False  # this machine's libc would give module 2 symbols
    try:
        load(qtbot, session, sample_dump())
        doc = session.document
        assert doc is not None and doc.modules_lacking_symbols() == [0, 2, 3]  # scanned frames, no symbols
        session.select_thread(1)
        with qtbot.assertNotEmitted(session.analysis_started):
            assert not session.set_symbol_paths([])  # unchanged: nothing re-runs
        wait_analysis_over(qtbot, session, lambda: session.set_symbol_paths([sample_symbols()]))
        doc = session.document
        assert doc is not None and doc.modules_lacking_symbols() == []
        assert session.selected_thread == 1
        assert session.frame_count(1) == 5  # walked again, with CFI this time
    finally:
        session.shutdown()


def stalled_walk_factory(request: AnalysisRequest):  # type: ignore[no-untyped-def]
    """The real analysis, except that after its first frame the walk "takes forever" (until cancelled)."""

    def job(cancel: CancelToken) -> Iterator[object]:
        for event in run_analysis(request, cancel):
            yield event
            if isinstance(event, FrameWalked):
                while True:
                    time.sleep(0.005)
                    yield Progress(1, 1, 0, 3)

    return job


def paced_walk_factory(request: AnalysisRequest):  # type: ignore[no-untyped-def]
    """The real analysis, with a pause after each thread (a slow walk of a big dump, in miniature)."""

    def job(cancel: CancelToken) -> Iterator[object]:
        for event in run_analysis(request, cancel):
            yield event
            if isinstance(event, ThreadWalked):
                time.sleep(0.06)

    return job


def test_frames_stream_in_several_batches_before_the_walk_finishes(qtbot: QtBot) -> None:
    session = Session(symbol_paths=[sample_symbols()], job_factory=paced_walk_factory, interval_ms=5)
    batches: list[tuple[int, int, int]] = []
    session.frames_added.connect(lambda t, first, count: batches.append((t, first, count)))
    walked: list[int] = []
    session.thread_walked.connect(walked.append)
    finished_after: list[int] = []
    session.analysis_finished.connect(lambda: finished_after.append(len(batches)))
    try:
        load(qtbot, session, sample_dump())
        assert len(batches) >= 3  # one batch per thread at least: the pauses split them
        assert finished_after == [len(batches)]  # every frame arrived before the walk finished
        assert batches[0][0] == 2  # the crashing thread first
        per_thread: dict[int, list[int]] = {}
        for thread, first, count in batches:
            per_thread.setdefault(thread, []).extend(range(first, first + count))
        assert per_thread == {2: [0, 1, 2, 3], 0: list(range(6)), 1: list(range(5))}
        assert walked == [2, 0, 1]
    finally:
        session.shutdown()


def test_cancel_stops_the_walk_and_keeps_what_was_walked(qtbot: QtBot) -> None:
    session = Session(symbol_paths=[sample_symbols()], cache_dir=None, job_factory=stalled_walk_factory)
    try:
        with qtbot.waitSignal(session.frames_added, timeout=ANALYSIS_TIMEOUT_MS):
            session.open_dump(sample_dump())
        doc = session.document
        assert doc is not None
        assert session.is_busy
        with qtbot.waitSignal(session.analysis_cancelled, timeout=ANALYSIS_TIMEOUT_MS):
            session.cancel()
        assert not session.is_busy
        assert doc.status is AnalysisStatus.CANCELLED
        assert session.frame_count(2) == 1 and not doc.is_walked(2)  # the context frame, nothing more
        assert session.frame_count(0) is None
        assert doc.symbols[0].state is SymbolState.LOADED  # looked up before the stall
        assert symbol_status(doc.symbols[2], doc).text == "not loaded"  # never reached
    finally:
        session.shutdown()


def test_opening_another_dump_while_one_loads_supersedes_it(qtbot: QtBot, tmp_path: Path) -> None:
    session = Session(cache_dir=None, job_factory=stalled_walk_factory)
    try:
        with qtbot.waitSignal(session.frames_added, timeout=ANALYSIS_TIMEOUT_MS):
            first = session.open_dump(sample_dump())
        copy = tmp_path / "copy.dmp"
        copy.write_bytes(sample_dump().read_bytes())
        with qtbot.waitSignal(session.document_changed, timeout=ANALYSIS_TIMEOUT_MS):
            second = session.open_dump(copy)
        assert second == first + 1
        doc = session.document
        assert doc is not None and doc.path == copy
        assert session.is_busy
        with qtbot.waitSignal(session.analysis_cancelled, timeout=ANALYSIS_TIMEOUT_MS):
            session.cancel()
    finally:
        session.shutdown()


def test_a_new_run_drops_the_old_runs_queued_events_instead_of_applying_them(qtbot: QtBot) -> None:
    """Events of the old run still waiting to be applied are dropped, not applied all at once."""
    session = Session(cache_dir=None, job_factory=stalled_walk_factory)
    try:
        with qtbot.waitSignal(session.frames_added, timeout=ANALYSIS_TIMEOUT_MS):
            old = session.open_dump(sample_dump())
        doc = session.document
        assert doc is not None
        frames = len(doc.frames(2))
        late = next(run_analysis(AnalysisRequest(sample_dump()), CancelToken()))
        assert isinstance(late, DumpLoaded)
        frame = doc.frames(2)[0]
        session._queue.append((old, [FrameWalked(2, frame), late]))  # not applied yet
        with qtbot.assertNotEmitted(session.frames_added), qtbot.assertNotEmitted(session.document_changed):
            session.open_dump(sample_dump())
        assert session._queue == []
        assert len(doc.frames(2)) == frames and doc.status is AnalysisStatus.CANCELLED
        assert session.document is doc  # the old run's queued DumpLoaded was not shown
        with qtbot.waitSignal(session.analysis_cancelled, timeout=ANALYSIS_TIMEOUT_MS):
            session.cancel()
    finally:
        session.shutdown()


def test_reanalyze_without_a_dump_does_nothing(session: Session) -> None:
    assert session.reanalyze() is None
    assert session.document is None


def test_notaminidump_error_text_is_clear(tmp_path: Path) -> None:
    from inspector.gui.session import describe_error

    assert describe_error(NotAMinidump("x: not a minidump")) == "x: not a minidump"
    assert "internal error (KeyError" in describe_error(KeyError("boom"))
    assert describe_error(PermissionError(13, "Permission denied", "/a/b")) == "/a/b: Permission denied"
