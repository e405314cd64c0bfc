"""Cooperative cancellation for long work (symbol loading, walking)."""

from __future__ import annotations

import threading
import weakref

from inspector.core.errors import Cancelled


class CancelToken:
    """Set from any thread; checked by the worker between units of work."""

    __slots__ = ("__weakref__", "_children", "_event", "_lock")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._children: weakref.WeakSet[CancelToken] = weakref.WeakSet()
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            children = list(self._children)
        for child in children:
            child.cancel()

    def child(self) -> CancelToken:
        """A token cancelled with this one, that can also be cancelled on its own (this one stays)."""
        token = CancelToken()
        with self._lock:
            if self._event.is_set():
                token._event.set()
            else:
                self._children.add(token)
        return token

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early when cancelled; True if cancelled."""
        return self._event.wait(seconds)

    def check(self) -> None:
        """Raise `Cancelled` if cancellation was requested."""
        if self._event.is_set():
            raise Cancelled()


#: A token that is never set, for callers that do not cancel.
NEVER = CancelToken()
