"""Runs jobs (generators of events) on a worker thread and delivers their events to the GUI thread in batches.

`JobWorker` lives on its own `QThread` and runs one job at a time: it steps
the generator, checks the run's `CancelToken` between events, and appends
each event to a locked outbox. It signals `wake` (queued) only when the outbox
goes from empty to non-empty, so at most one wake-up is ever in flight.

`JobRunner` is the GUI-thread side, owned by the session. It tags every run
with a generation id, drains the outbox at most once per `interval_ms`
(pure Python work holds the GIL; per-event signals would flood the GUI
thread), forwards the current generation's events as `events(generation,
batch)` and drops those of superseded runs. Because the outbox is drained when
the first event arrives (or when the interval is up), an event never waits
behind a slow step of the job, and `finished` / `cancelled` / `failed` are
forwarded only after the events before them.

The worker never touches widgets, models or settings; only the job's
immutable events cross threads.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import (
    QAbstractEventDispatcher,
    QCoreApplication,
    QEvent,
    QObject,
    QThread,
    QTimer,
    Signal,
    Slot,
)

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled, InspectorError
from inspector.gui.gc_policy import collect_on_gui_thread
from inspector.gui.jobs import MILESTONES, Job

log = logging.getLogger(__name__)

#: Shortest time between two deliveries of events to the GUI thread.
DEFAULT_INTERVAL_MS = 30
#: How long the worker pauses after each delivered batch so the GUI thread can apply and paint it
#: without waiting for the GIL (measured on the torch case: 10 ms still left 40-70 ms stalls,
#: 20 ms kept them near 30 ms; the walk takes about a third longer).
GUI_HOLD_MS = 20
#: The interpreter's switch interval while the window runs jobs (seconds; see `JobRunner.__init__`).
GUI_SWITCH_INTERVAL = 0.001
#: The event that ends a hold once the GUI thread's queued events are handled (`_release_after_queued`).
_RELEASE_EVENT = QEvent.Type(QEvent.registerEventType())
#: Below Qt's own lowest (`Qt.LowEventPriority`, -1: the window's paint requests)
_LOWEST_PRIORITY = -(2**31)


class JobWorker(QObject):
    """Runs jobs on the thread it is moved to. Talk to it through `JobRunner`."""

    wake = Signal()
    job_finished = Signal(int, object)
    job_cancelled = Signal(int)
    job_failed = Signal(int, object)

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._outbox: list[tuple[int, object]] = []
        #: set while a milestone event waits in the outbox (delivered without waiting for the interval)
        self.urgent = False

    @Slot(int, object, object)
    def run(self, generation: int, job: Job, cancel: CancelToken) -> None:
        if cancel.cancelled:
            self.job_cancelled.emit(generation)
            return
        events: Iterator[object] | None = None
        try:
            events = job(cancel)
            result: object = None
            while True:
                try:
                    cancel.check()  # also steps aside while the GUI thread handles events
                    event = next(events)
                except StopIteration as stop:
                    result = stop.value
                    break
                self._post(generation, event)
        except Cancelled:
            # Stopped between two events: close the job now so it releases what it holds
            # (its `finally` blocks run here, not whenever the generator is collected).
            close = getattr(events, "close", None)
            if close is not None:
                close()
            self.job_cancelled.emit(generation)
            return
        except Exception as exc:  # reported to the GUI, never raised through the event loop
            if not _expected(exc):
                log.exception("analysis job failed")
            self.job_failed.emit(generation, exc)
            return
        self.job_finished.emit(generation, result)

    def _post(self, generation: int, event: object) -> None:
        with self._lock:
            first = not self._outbox
            self._outbox.append((generation, event))
            if isinstance(event, MILESTONES):
                self.urgent = True
        if first:
            self.wake.emit()

    def take_events(self) -> list[tuple[int, object]]:
        """Everything posted so far, oldest first (called on the GUI thread)."""
        with self._lock:
            events, self._outbox = self._outbox, []
            self.urgent = False
        return events


def _expected(exc: Exception) -> bool:
    """Errors about bad input, which are reported to the user without a traceback in the log."""
    return isinstance(exc, InspectorError)


class JobRunner(QObject):
    """Starts jobs on a worker thread, one at a time; a new start cancels the running job.

    Signals carry the generation id returned by `start`. Only the current
    generation's signals are emitted; anything from an older run is dropped
    (and handed to `discard`, so it can release resources the event holds).
    """

    events = Signal(int, list)
    finished = Signal(int, object)
    cancelled = Signal(int)
    failed = Signal(int, object)

    _run = Signal(int, object, object)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        interval_ms: int = DEFAULT_INTERVAL_MS,
        discard: Callable[[object], None] | None = None,
    ) -> None:
        super().__init__(parent)
        collect_on_gui_thread()  # before the worker thread exists: see gc_policy
        # The GUI thread waits for the GIL at each call a paint makes into Python while the job
        # runs between two checks of its token; Python hands the GIL over to a waiting thread after
        # the switch interval (5 ms by default). At 1 ms the longest stall of the torch walk went
        # from 31 to 26 ms (median of 14), for a walk about 5 % longer. Process-wide, and only
        # ever lowered: a host application's own setting below it stays.
        sys.setswitchinterval(min(sys.getswitchinterval(), GUI_SWITCH_INTERVAL))
        self.interval_ms = interval_ms
        self._discard = discard
        self._thread = QThread(self)
        self._thread.setObjectName("inspector-worker")
        self._worker = JobWorker()
        self._worker.moveToThread(self._thread)
        self._run.connect(self._worker.run)
        self._worker.wake.connect(self._on_wake)
        self._worker.job_finished.connect(self._on_finished)
        self._worker.job_cancelled.connect(self._on_cancelled)
        self._worker.job_failed.connect(self._on_failed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.drain)
        # The GUI thread has priority over the job: while this event is clear the job's cancel
        # token pauses the worker (inspector.core.cancel explains why pure-Python work on another
        # thread makes every paint slow). It is cleared for GUI_HOLD_MS after each delivered
        # batch, long enough for most batches to be applied and painted, while the window paints
        # or lays itself out (`window_work_started`), and, where the event
        # dispatcher tells us when the GUI thread wakes up, whenever it has events to handle.
        self._gui_idle = threading.Event()
        self._gui_idle.set()
        self._hold = QTimer(self)
        self._hold.setSingleShot(True)
        self._hold.timeout.connect(self._on_hold_over)
        #: paints and layouts of the window under way (`window_work_started`)
        self._window_work = 0
        #: a `_release_after_queued` event is queued
        self._release_posted = False
        self._follows_dispatcher = False
        self._follow_dispatcher()
        self._generation = 0
        self._token: CancelToken | None = None
        self._running = False
        self._last_drain = float("-inf")
        self._shut_down = False
        #: events of superseded runs dropped (for tests and the debug log)
        self.events_dropped = 0
        self._thread.start()

    # ---- control ----

    @property
    def generation(self) -> int:
        """The id of the latest run (0 before the first)."""
        return self._generation

    @property
    def is_running(self) -> bool:
        return self._running

    def start(self, job: Job) -> int:
        """Cancel whatever runs and queue `job`; returns its generation id."""
        if self._shut_down:
            raise RuntimeError("JobRunner was shut down")
        self.cancel()
        self._generation += 1
        self._token = CancelToken(courtesy=self._gui_idle)
        self._running = True
        self._run.emit(self._generation, job, self._token)
        return self._generation

    def hold_worker(self) -> None:
        """Pause the job at its next check for the next GUI_HOLD_MS (restarts a running hold)."""
        self._gui_idle.clear()
        self._hold.start(GUI_HOLD_MS)

    def window_work_started(self) -> None:
        """The window starts to paint or lay itself out: the job pauses at its next check until it is done.

        A paint calls into Python many times (item models, delegates, the plot), and each call
        waits for the GIL while the job runs: a paint or layout that outlasted the hold after a
        batch (the first frames, a new document) took twice as long.
        """
        self._window_work += 1
        self._gui_idle.clear()

    def window_work_done(self) -> None:
        """The paint or layout is done: the job goes on once the GUI thread has handled what is
        queued for it, unless the hold after a batch still runs (or, where the dispatcher's
        signals are followed, until the GUI thread waits for events again)."""
        self._window_work = max(0, self._window_work - 1)
        if not self._window_work and not self._hold.isActive() and not self._follows_dispatcher:
            self._release_after_queued()

    @Slot()
    def _on_hold_over(self) -> None:
        if not self._window_work:
            self._release_after_queued()

    def _release_after_queued(self) -> None:
        """Let the job go on once every event already queued for the GUI thread has been handled.

        The window's layout and paint requests are queued events; a hold that ends before they are
        handled would let the job run (pure Python, possibly for tens of milliseconds between two
        checks: opening a large symbol file) while the window lays out and paints, and the GUI
        thread then waits for the GIL at each of the hundreds of calls a paint makes into Python
        (on the torch crash: about one longest stall in two took 55-78 ms instead of 30). An event of the
        lowest priority is handled after all of those."""
        if not self._release_posted:
            self._release_posted = True
            QCoreApplication.postEvent(self, QEvent(_RELEASE_EVENT), _LOWEST_PRIORITY)

    def event(self, event: QEvent) -> bool:
        if event.type() != _RELEASE_EVENT:
            return super().event(event)
        self._release_posted = False
        if not self._window_work and not self._hold.isActive():
            self._gui_idle.set()
        return True

    def _follow_dispatcher(self) -> None:
        """Also hold the worker while the GUI thread handles events, where that can be seen.

        Qt's plain Unix dispatcher emits `awake` after its poll returns and `aboutToBlock`
        before it polls again: between the two the GUI thread is busy. The GLib dispatcher
        (Qt's default on Linux desktops) emits them around a whole GLib iteration, waiting and
        dispatching together, so there only the timed hold after each batch applies.
        """
        dispatcher = QAbstractEventDispatcher.instance(self.thread())
        if dispatcher is None or "Glib" in dispatcher.metaObject().className():
            return
        self._follows_dispatcher = True
        dispatcher.awake.connect(self._gui_idle.clear)
        dispatcher.aboutToBlock.connect(self._on_about_to_block)

    @Slot()
    def _on_about_to_block(self) -> None:
        if not self._hold.isActive():
            self._gui_idle.set()

    def cancel(self) -> None:
        """Ask the current run to stop; `cancelled` follows once it has."""
        if self._token is not None:
            self._token.cancel()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel, stop the thread and wait for it; True if it stopped in time. Idempotent."""
        if self._shut_down:
            return True
        self._shut_down = True
        self.cancel()
        self._hold.stop()
        self._gui_idle.set()  # the GUI thread now waits for the worker: never make it wait for us
        self._timer.stop()
        self._thread.quit()
        stopped = self._thread.wait(timeout_ms)
        if not stopped:
            log.warning("the worker thread did not stop within %d ms", timeout_ms)
        for _, event in self._worker.take_events():
            self._drop(event)
        self._running = False
        return bool(stopped)

    # ---- delivery ----

    @Slot()
    def _on_wake(self) -> None:
        if self._worker.urgent:
            self.drain()
            return
        elapsed_ms = (time.monotonic() - self._last_drain) * 1000
        if elapsed_ms >= self.interval_ms:
            self.drain()
        elif not self._timer.isActive():
            self._timer.start(max(1, round(self.interval_ms - elapsed_ms)))

    @Slot()
    def drain(self) -> None:
        """Deliver every event posted so far (the current generation's) now."""
        self._timer.stop()
        self._last_drain = time.monotonic()
        pending = self._worker.take_events()
        if not pending:
            return
        batch: list[object] = []
        for generation, event in pending:
            if generation == self._generation:
                batch.append(event)
            else:
                self._drop(event)
        if batch:
            self.hold_worker()
            self.events.emit(self._generation, batch)

    def _drop(self, event: object) -> None:
        self.events_dropped += 1
        if self._discard is not None:
            self._discard(event)

    def _current(self, generation: int) -> bool:
        if generation != self._generation:
            return False
        self._running = False
        return True

    @Slot(int, object)
    def _on_finished(self, generation: int, result: object) -> None:
        self.drain()
        if self._current(generation):
            self.finished.emit(generation, result)

    @Slot(int)
    def _on_cancelled(self, generation: int) -> None:
        self.drain()
        if self._current(generation):
            self.cancelled.emit(generation)

    @Slot(int, object)
    def _on_failed(self, generation: int, error: object) -> None:
        self.drain()
        if self._current(generation):
            self.failed.emit(generation, error)
