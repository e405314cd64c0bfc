"""The last resort: an unexpected exception is logged with its traceback and shown, and the app keeps running.

Real errors are fixed where they happen; this hook only makes sure that a
bug in a slot (which Qt for Python reports through `sys.excepthook`) never
takes the window down silently.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from types import TracebackType

log = logging.getLogger(__name__)

#: show(title, text): how to tell the user (the main window's non-blocking message box)
Presenter = Callable[[str, str], None]


class ExceptHook:
    def __init__(self, show: Presenter | None = None) -> None:
        self.show = show
        self._previous = sys.excepthook
        self._previous_threading = threading.excepthook
        self._showing = False
        self.count = 0

    def install(self) -> ExceptHook:
        sys.excepthook = self
        threading.excepthook = self._thread_hook
        return self

    def uninstall(self) -> None:
        if sys.excepthook is self:
            sys.excepthook = self._previous
        if threading.excepthook == self._thread_hook:
            threading.excepthook = self._previous_threading

    def __call__(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            self._previous(exc_type, exc, tb)
            return
        self.count += 1
        log.critical("unexpected error", exc_info=(exc_type, exc, tb))
        if self.show is None or self._showing or threading.current_thread() is not threading.main_thread():
            return
        self._showing = True
        try:
            self.show(
                "Unexpected error",
                f"{exc_type.__name__}: {exc}\n\nThis is a bug in Crash Inspector; the details are in the "
                "log. The window keeps running, but what it shows may be incomplete.",
            )
        except Exception:
            log.exception("could not show the error")
        finally:
            self._showing = False

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None:
            return
        log.critical(
            "unexpected error in thread %s",
            args.thread.name if args.thread else "?",
            exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
        )
        self.count += 1
