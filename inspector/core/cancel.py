"""Cooperative cancellation for long work (symbol loading, walking)."""

from __future__ import annotations

import threading

from inspector.core.errors import Cancelled


class CancelToken:
    """Set from any thread; checked by the worker between units of work."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise `Cancelled` if cancellation was requested."""
        if self._event.is_set():
            raise Cancelled()


#: A token that is never set, for callers that do not cancel.
NEVER = CancelToken()
