"""`BackgroundCalls`: a pane's small jobs (disassemble a window, read a source file) off the GUI thread.

The walk has the session's worker; starting a job there would cancel it. These calls are
short (milliseconds) but may touch files (a module's code, a source file on a slow disk), so
they run on one thread of their own, one at a time, in order: what they cache (open symbol
files, module images) is never used by two threads at once. Only the newest call's result
is delivered, on the GUI thread; a call made obsolete before it starts is dropped.

The pane's method that takes the result is held weakly: a closure over the pane kept here
would make a reference cycle (pane → its `BackgroundCalls` → closure → pane), which Python's
collector frees at any moment on any thread; a Qt object freed on the walk's worker thread
disconnects its signals there and can deadlock against the GUI thread.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from inspector.gui.gc_policy import collect_on_gui_thread

log = logging.getLogger(__name__)


class _Relay(QObject):
    """Lives on the GUI thread: a signal emitted from the pool's thread reaches it queued."""

    done = Signal(int, object, object)  # generation, result, error


class _Call(QRunnable):
    def __init__(self, owner: BackgroundCalls, generation: int, fn: Callable[[], Any]) -> None:
        super().__init__()
        self._owner = owner
        self._generation = generation
        self._fn = fn

    def run(self) -> None:
        if self._generation != self._owner.generation:
            return  # a newer call was made before this one started
        try:
            result, error = self._fn(), None
        except Exception as exc:  # the GUI never dies: the pane shows the error
            log.exception("background call failed")
            result, error = None, exc
        self._owner.relay.done.emit(self._generation, result, error)


class BackgroundCalls(QObject):
    """`submit(fn, on_done)`: `fn()` on the pane's thread, then `on_done(result, error)` on the GUI thread."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        collect_on_gui_thread()  # before the pool's thread exists: see gc_policy
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.relay = _Relay(self)
        self.relay.done.connect(self._on_done)
        self.generation = 0
        self._on_result: weakref.WeakMethod[Callable[..., None]] | None = None
        self._extra: tuple[object, ...] = ()

    def submit(self, fn: Callable[[], Any], on_done: Callable[..., None], *extra: object) -> int:
        """`on_done` (a bound method) is called as `on_done(result, error, *extra)`."""
        self.generation += 1
        self._on_result = weakref.WeakMethod(on_done)
        self._extra = extra
        self.pool.start(_Call(self, self.generation, fn))
        return self.generation

    def cancel(self) -> None:
        """Forget the pending call (its result, if it is already running, is dropped)."""
        self.generation += 1
        self._on_result, self._extra = None, ()

    def wait(self, msecs: int = 5000) -> bool:
        """Wait for the running call (tests, shutdown)."""
        return self.pool.waitForDone(msecs)

    @Slot(int, object, object)
    def _on_done(self, generation: int, result: object, error: object) -> None:
        on_done = None if self._on_result is None else self._on_result()
        if generation != self.generation or on_done is None:
            return
        extra, self._on_result, self._extra = self._extra, None, ()
        on_done(result, error if isinstance(error, Exception) else None, *extra)
