"""JobRunner / JobWorker: jobs run on the worker thread, events arrive batched and in order, cancel works,
a superseded run's events never reach the GUI."""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QThread, QTimer
from pytestqt.qtbot import QtBot

from inspector.core import cancel
from inspector.core.cancel import CancelToken
from inspector.core.minidump import NotAMinidump
from inspector.gui import worker
from inspector.gui.worker import JobRunner

TIMEOUT_MS = 5000


@pytest.fixture
def runner(qtbot: QtBot) -> Iterator[JobRunner]:
    r = JobRunner()
    yield r
    assert r.shutdown()


class Collector:
    """Records what the runner delivers, and on which thread."""

    def __init__(self, runner: JobRunner) -> None:
        self.events: list[tuple[int, object]] = []
        self.batches = 0
        self.threads: set[QThread] = set()
        runner.events.connect(self._on_events)

    def _on_events(self, generation: int, batch: list[object]) -> None:
        self.batches += 1
        self.threads.add(QThread.currentThread())
        self.events.extend((generation, e) for e in batch)

    def values(self, generation: int | None = None) -> list[object]:
        return [e for g, e in self.events if generation is None or g == generation]


def counting_job(n: int, result: object = "done"):  # type: ignore[no-untyped-def]
    def job(cancel: CancelToken) -> Iterator[object]:
        yield from range(n)
        return result

    return job


def test_a_job_runs_on_the_worker_thread_and_finishes_with_its_return_value(
    qtbot: QtBot, runner: JobRunner
) -> None:
    seen_threads: list[threading.Thread] = []

    def job(cancel: CancelToken) -> Iterator[object]:
        seen_threads.append(threading.current_thread())
        yield "a"
        yield "b"
        return 42

    collected = Collector(runner)
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT_MS) as finished:
        generation = runner.start(job)
    assert finished.args == [generation, 42]
    assert collected.values() == ["a", "b"]
    assert seen_threads and seen_threads[0] is not threading.main_thread()
    assert collected.threads == {QThread.currentThread()}  # delivered on the GUI thread
    assert not runner.is_running


def test_many_fast_events_arrive_in_order_in_few_batches(qtbot: QtBot, runner: JobRunner) -> None:
    collected = Collector(runner)
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT_MS):
        runner.start(counting_job(20_000))
    assert collected.values() == list(range(20_000))
    # one delivery per ~30 ms at most, instead of one signal per event
    assert collected.batches < 100


def test_an_event_is_delivered_while_the_job_is_still_busy(qtbot: QtBot, runner: JobRunner) -> None:
    """Batching never holds an event back behind a slow step of the job."""
    release = threading.Event()

    def job(cancel: CancelToken) -> Iterator[object]:
        yield "before the slow step"
        release.wait(TIMEOUT_MS / 1000)
        yield "after"

    collected = Collector(runner)
    runner.start(job)
    qtbot.waitUntil(lambda: collected.values() == ["before the slow step"], timeout=TIMEOUT_MS)
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT_MS):
        release.set()
    assert collected.values() == ["before the slow step", "after"]


def test_the_job_steps_aside_while_the_gui_thread_applies_a_batch(qtbot: QtBot, runner: JobRunner) -> None:
    """After each delivered batch the job's next check() waits until the GUI thread is idle again.

    Pure-Python work on the worker would otherwise make every paint of the GUI thread wait for
    the GIL (see inspector.core.cancel): here the job records, at its next check, whether the
    GUI thread's batch had been handled (the slot ran and returned to the event loop) by then.
    """
    delivering = threading.Event()
    handled = threading.Event()
    seen_at_check: list[bool] = []

    def job(cancel: CancelToken) -> Iterator[object]:
        yield "first"
        assert delivering.wait(TIMEOUT_MS / 1000)  # the GUI thread has started on the batch
        cancel.check()
        seen_at_check.append(handled.is_set())
        yield "second"

    def on_events(generation: int, batch: list[object]) -> None:
        if batch == ["first"]:
            delivering.set()
            time.sleep(0.03)  # busy with the batch (shorter than the token's longest pause)
            handled.set()

    runner.events.connect(on_events)
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT_MS):
        runner.start(job)
    assert seen_at_check == [True]


def test_the_job_waits_while_the_window_paints_even_past_the_hold_after_a_batch(
    qtbot: QtBot, runner: JobRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A paint (or layout) of the window holds the job at its checks until it is done, however long
    it takes: each call the paint makes into Python would wait for the job's GIL otherwise."""
    monkeypatch.setattr(worker, "GUI_HOLD_MS", 1)  # the hold after the batch is over before the paint
    monkeypatch.setattr(cancel, "MAX_COURTESY_PAUSE", TIMEOUT_MS / 1000)
    painting = threading.Event()
    painted = threading.Event()
    seen_at_check: list[bool] = []

    def job(token: CancelToken) -> Iterator[object]:
        yield "first"
        assert painting.wait(TIMEOUT_MS / 1000)
        token.check()
        seen_at_check.append(painted.is_set())
        yield "second"

    def paint_done() -> None:
        painted.set()
        runner.window_work_done()

    def paint_starts() -> None:  # well after the hold that followed the batch
        runner.window_work_started()
        painting.set()
        QTimer.singleShot(100, paint_done)

    def on_events(generation: int, batch: list[object]) -> None:
        if batch == ["first"]:
            QTimer.singleShot(30, paint_starts)

    runner.events.connect(on_events)
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT_MS):
        runner.start(job)
    assert seen_at_check == [True]


class _QueuedWork(QObject):
    """Work queued for the GUI thread like the window's paint requests (a posted event of low priority)."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.handled = threading.Event()

    def event(self, event: QEvent) -> bool:
        if event.type() != QEvent.Type.User:
            return super().event(event)
        time.sleep(self.seconds)  # a paint of the whole window
        self.handled.set()
        return True


def test_after_a_paint_the_job_waits_for_what_the_paint_queued_for_the_gui_thread(
    qtbot: QtBot, runner: JobRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job goes on after a paint (or the hold after a batch) only once the GUI thread has
    handled what was queued for it by then: a layout or paint the first one asked for, which
    would otherwise run beside the job, each of its calls into Python waiting for the GIL."""
    monkeypatch.setattr(worker, "GUI_HOLD_MS", 1)  # the hold after the batch is over before the paint
    monkeypatch.setattr(cancel, "MAX_COURTESY_PAUSE", TIMEOUT_MS / 1000)
    queued = _QueuedWork(0.05)
    painting = threading.Event()
    seen_at_check: list[bool] = []

    def job(token: CancelToken) -> Iterator[object]:
        yield "first"
        assert painting.wait(TIMEOUT_MS / 1000)
        token.check()
        seen_at_check.append(queued.handled.is_set())
        yield "second"

    def paint() -> None:
        runner.window_work_started()
        painting.set()
        time.sleep(0.01)  # the job is at its check by now
        QCoreApplication.postEvent(queued, QEvent(QEvent.Type.User), Qt.EventPriority.LowEventPriority.value)
        runner.window_work_done()

    def on_events(generation: int, batch: list[object]) -> None:
        if batch == ["first"]:
            QTimer.singleShot(30, paint)

    runner.events.connect(on_events)
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT_MS):
        runner.start(job)
    assert seen_at_check == [True]


def test_a_slowly_yielding_job_is_cancelled(qtbot: QtBot, runner: JobRunner) -> None:
    def slow(cancel: CancelToken) -> Iterator[object]:
        for i in itertools.count():
            yield i
            time.sleep(0.005)  # the job's own (simulated) work, on the worker thread

    collected = Collector(runner)
    finished: list[object] = []
    runner.finished.connect(lambda *a: finished.append(a))
    generation = runner.start(slow)
    qtbot.waitUntil(lambda: len(collected.values()) >= 3, timeout=TIMEOUT_MS)
    with qtbot.waitSignal(runner.cancelled, timeout=TIMEOUT_MS) as cancelled:
        runner.cancel()
    assert cancelled.args == [generation]
    assert not finished
    assert not runner.is_running


def test_a_job_cancelled_between_events_is_closed_at_once(qtbot: QtBot, runner: JobRunner) -> None:
    """Its `finally` runs on cancel (releasing the dump and symbol files it holds), not when collected."""
    closed = threading.Event()

    def job(cancel: CancelToken) -> Iterator[object]:
        try:
            for i in itertools.count():
                time.sleep(0.002)
                yield i
        finally:
            closed.set()

    collected = Collector(runner)
    runner.start(job)
    qtbot.waitUntil(lambda: len(collected.values()) >= 2, timeout=TIMEOUT_MS)
    with qtbot.waitSignal(runner.cancelled, timeout=TIMEOUT_MS):
        runner.cancel()
    assert closed.is_set()


def test_a_job_that_checks_the_token_itself_is_cancelled(qtbot: QtBot, runner: JobRunner) -> None:
    started = threading.Event()

    def job(cancel: CancelToken) -> Iterator[object]:
        started.set()
        while True:  # long work with no events, checking the token (like loading a huge .sym)
            cancel.check()
            time.sleep(0.002)
        yield  # pragma: no cover - makes this a generator

    runner.start(job)
    assert started.wait(TIMEOUT_MS / 1000)
    with qtbot.waitSignal(runner.cancelled, timeout=TIMEOUT_MS):
        runner.cancel()


def test_a_new_start_cancels_the_running_job_and_drops_its_late_events(
    qtbot: QtBot, runner: JobRunner
) -> None:
    release = threading.Event()

    def first(cancel: CancelToken) -> Iterator[object]:
        yield "a0"
        release.wait(TIMEOUT_MS / 1000)  # still busy when the second run is asked for
        yield "a1"  # produced after the new start: stale
        yield "a2"

    collected = Collector(runner)
    cancelled: list[int] = []
    runner.cancelled.connect(cancelled.append)
    old = runner.start(first)
    qtbot.waitUntil(lambda: collected.values() == ["a0"], timeout=TIMEOUT_MS)
    new = runner.start(counting_job(3, "second"))
    assert new == old + 1
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT_MS) as finished:
        release.set()
    assert finished.args == [new, "second"]
    assert collected.values(old) == ["a0"]
    assert collected.values(new) == [0, 1, 2]
    assert "a1" not in collected.values() and "a2" not in collected.values()
    assert runner.events_dropped >= 1
    assert cancelled == []  # the old run's cancellation is stale too


def test_a_failing_job_reports_its_error(qtbot: QtBot, runner: JobRunner) -> None:
    def job(cancel: CancelToken) -> Iterator[object]:
        yield "opened"
        raise NotAMinidump("not a minidump: it starts with b'hell' instead of b'MDMP'")

    collected = Collector(runner)
    with qtbot.waitSignal(runner.failed, timeout=TIMEOUT_MS) as failed:
        generation = runner.start(job)
    assert failed.args[0] == generation
    assert isinstance(failed.args[1], NotAMinidump)
    assert collected.values() == ["opened"]  # events before the failure still arrive, first


def test_a_bug_in_a_job_is_a_failure_not_a_crash(qtbot: QtBot, runner: JobRunner) -> None:
    def job(cancel: CancelToken) -> Iterator[object]:
        yield 1
        raise IndexError("a bug in the job")

    with qtbot.waitSignal(runner.failed, timeout=TIMEOUT_MS) as failed:
        runner.start(job)
    assert isinstance(failed.args[1], IndexError)
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT_MS):  # the worker still works
        runner.start(counting_job(1))


def test_shutdown_stops_a_running_job(qtbot: QtBot) -> None:
    runner = JobRunner()

    def endless(cancel: CancelToken) -> Iterator[object]:
        while True:
            yield None

    runner.start(endless)
    assert runner.shutdown(timeout_ms=TIMEOUT_MS)
    assert runner.shutdown()  # idempotent
    with pytest.raises(RuntimeError):
        runner.start(endless)


def test_the_gui_thread_gets_the_gil_back_from_a_running_job_within_a_millisecond(qtbot: QtBot) -> None:
    """While the window runs jobs, Python hands the GIL to a waiting thread after 1 ms, not 5 ms
    (each call of a paint into Python may wait that long); a host's lower setting stays."""
    before = sys.getswitchinterval()
    runners: list[JobRunner] = []
    try:
        sys.setswitchinterval(0.005)
        runners.append(JobRunner())
        assert sys.getswitchinterval() == pytest.approx(worker.GUI_SWITCH_INTERVAL, abs=2e-6)
        sys.setswitchinterval(0.0002)
        runners.append(JobRunner())
        assert sys.getswitchinterval() == pytest.approx(0.0002, abs=2e-6)  # kept in microseconds
    finally:
        assert all(r.shutdown() for r in runners)
        sys.setswitchinterval(before)
