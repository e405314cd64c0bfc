"""Session: documents arrive from the worker, the selection is idempotent and loop-safe, errors keep the
previous dump, symbol path changes re-run the analysis."""

from __future__ import annotations

import pathlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.core.cancel import CancelToken
from inspector.core.minidump import Minidump, NotAMinidump, UnreadableFile
from inspector.gui.document import AnalysisRequest, AnalysisStatus, DumpSnapshot, SymbolLoadState
from inspector.gui.jobs import DumpLoaded, Progress, SymbolsLoading
from inspector.gui.session import FrameRef, LoadFailure, Session
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
    load(qtbot, session, sample_dump())
    doc = session.document
    assert doc is not None and doc.path == sample_dump()
    assert doc.status is AnalysisStatus.FINISHED
    assert selected == [2] and session.selected_thread == 2
    assert session.selected_thread_entry is not None and session.selected_thread_entry.name == "renderer"
    assert [s.state for s in doc.symbols] == [
        SymbolLoadState.LOADED,
        SymbolLoadState.MISSING,
        SymbolLoadState.LOADED,
        SymbolLoadState.MISSING,
    ]
    assert doc.modules_lacking_symbols() == [1, 3]
    assert busy == [True, False]
    assert session.progress == Progress(4, 4)


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
    assert session.frame_count(1) is None  # nothing is walked in phase 1


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
    real_open = pathlib.Path.open

    def open_(self: pathlib.Path, *args: object, **kwargs: object) -> object:
        if self == locked:  # as `chmod 000` does for a normal user (the tests may run as root)
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(pathlib.Path, "open", open_)
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
    assert len(doc.snapshot.threads) == 3
    assert doc.snapshot.threads[2].stack is None  # its stack bytes lie past the cut
    listed = doc.problems()
    assert listed and all(p.source == "dump" for p in listed)
    assert any("outside the file" in p.message for p in listed)
    assert problems


def test_new_symbol_paths_rerun_the_analysis_and_keep_the_selected_thread(
    qtbot: QtBot, tmp_path: Path
) -> None:
    session = Session(cache_dir=None)
    try:
        load(qtbot, session, sample_dump())
        doc = session.document
        assert doc is not None and doc.modules_lacking_symbols() == [0, 1, 2, 3]
        session.select_thread(1)
        with qtbot.assertNotEmitted(session.analysis_started):
            assert not session.set_symbol_paths([])  # unchanged: nothing re-runs
        wait_analysis_over(qtbot, session, lambda: session.set_symbol_paths([sample_symbols()]))
        doc = session.document
        assert doc is not None and doc.modules_lacking_symbols() == [1, 3]
        assert session.selected_thread == 1
    finally:
        session.shutdown()


def slow_job_factory(request: AnalysisRequest):  # type: ignore[no-untyped-def]
    """Shows the dump, then "loads symbols" forever (until cancelled)."""

    def job(cancel: CancelToken) -> Iterator[object]:
        yield DumpLoaded(DumpSnapshot.from_dump(Minidump.open(request.dump_path)))
        yield SymbolsLoading(0)
        while True:
            yield Progress(4, 0)
            time.sleep(0.005)

    return job


def test_cancel_stops_the_analysis_and_settles_the_modules(qtbot: QtBot) -> None:
    session = Session(cache_dir=None, job_factory=slow_job_factory)
    try:
        with qtbot.waitSignal(session.document_changed, timeout=ANALYSIS_TIMEOUT_MS):
            session.open_dump(sample_dump())
        doc = session.document
        assert doc is not None
        qtbot.waitUntil(lambda: doc.symbols[0].state is SymbolLoadState.LOADING, timeout=ANALYSIS_TIMEOUT_MS)
        assert session.is_busy
        with qtbot.waitSignal(session.analysis_cancelled, timeout=ANALYSIS_TIMEOUT_MS):
            session.cancel()
        assert not session.is_busy
        assert doc.status is AnalysisStatus.CANCELLED
        assert {s.state for s in doc.symbols} == {SymbolLoadState.NOT_LOADED}
    finally:
        session.shutdown()


def test_opening_another_dump_while_one_loads_supersedes_it(qtbot: QtBot, tmp_path: Path) -> None:
    session = Session(cache_dir=None, job_factory=slow_job_factory)
    try:
        with qtbot.waitSignal(session.document_changed, timeout=ANALYSIS_TIMEOUT_MS):
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


def test_reanalyze_without_a_dump_does_nothing(session: Session) -> None:
    assert session.reanalyze() is None
    assert session.document is None


def test_notaminidump_error_text_is_clear(tmp_path: Path) -> None:
    from inspector.gui.session import describe_error

    assert describe_error(NotAMinidump("x: not a minidump")) == "x: not a minidump"
    assert "internal error (KeyError" in describe_error(KeyError("boom"))
    assert describe_error(PermissionError(13, "Permission denied", "/a/b")) == "/a/b: Permission denied"
