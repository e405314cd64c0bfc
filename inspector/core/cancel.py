"""Cooperative cancellation for long work (symbol loading, walking), and courtesy pauses.

A token may also carry a *courtesy* event, set while the thread that owns the user
interface is idle. Pure-Python work on a worker thread holds the GIL, and a GUI thread
that paints calls back into Python hundreds of times (item models' `data()`, paint
events), waiting up to a GIL switch interval (5 ms) for each call: a paint that takes
5 ms on its own took 100 ms and more while the walk ran. `check()` therefore also waits,
releasing the GIL, while the courtesy event is clear: the worker steps aside whenever the
GUI thread has work, at the next point where it would notice a cancellation.
"""

from __future__ import annotations

import _thread

from inspector.core.errors import Cancelled

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    import threading
    import weakref

#: Longest a `check()` waits for the courtesy event before going on anyway (seconds).
MAX_COURTESY_PAUSE = 0.05


class CancelToken:
    """Set from any thread; checked by the worker between units of work.

    The state is a flag read by `check()` (once per frame of a walk) without a call; the
    `threading.Event` that `wait` sleeps on and the weak set of children are made when first
    needed, so a headless `stackwalk`, which never cancels, imports neither `threading` nor
    `weakref` for it (the low-level `_thread` lock is enough).
    """

    __slots__ = ("__weakref__", "_cancelled", "_children", "_courtesy", "_lock", "_wakeup")

    def __init__(self, *, courtesy: threading.Event | None = None) -> None:
        self._cancelled = False
        self._children: weakref.WeakSet[CancelToken] | None = None
        self._lock = _thread.allocate_lock()
        self._courtesy = courtesy
        self._wakeup: threading.Event | None = None

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._wakeup is not None:
                self._wakeup.set()
            children = list(self._children or ())
        for child in children:
            child.cancel()

    def child(self) -> CancelToken:
        """A token cancelled with this one, that can also be cancelled on its own (this one stays)."""
        token = CancelToken(courtesy=self._courtesy)
        with self._lock:
            if self._cancelled:
                token._cancelled = True
            else:
                if self._children is None:
                    import weakref

                    self._children = weakref.WeakSet()
                self._children.add(token)
        return token

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early when cancelled; True if cancelled."""
        with self._lock:
            if self._cancelled:
                return True
            if self._wakeup is None:
                import threading

                self._wakeup = threading.Event()
            wakeup = self._wakeup
        return wakeup.wait(seconds)

    def check(self) -> None:
        """Raise `Cancelled` if cancellation was requested; first step aside while the UI is busy."""
        courtesy = self._courtesy
        if courtesy is not None and not courtesy.is_set():
            # bounded, so a GUI thread that never goes idle slows the work down but cannot stop it
            courtesy.wait(MAX_COURTESY_PAUSE)
        if self._cancelled:
            raise Cancelled()


#: A token that is never set, for callers that do not cancel.
NEVER = CancelToken()
