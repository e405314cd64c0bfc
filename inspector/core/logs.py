"""Loggers that import `logging` only when a message is to be written.

Most headless runs log nothing, and importing `logging` (with traceback, tokenize, textwrap and
string) cost a `stackwalk` process about as much as walking a small dump. The modules on that path
log through `get_logger(__name__)` instead of `logging.getLogger(__name__)`: the same calls
(`debug`, `info`, `warning`, `error`, `exception`, `log`), each handed to the real logger of that
name, so handlers, levels, `caplog` and `--log-file` see exactly what they saw before.

While nothing has imported `logging` yet, a message below `threshold()` is dropped on the spot:
that is logging's own default (WARNING on the root logger), or the level the command line asked
for (`set_threshold`). The process's own logging set-up (the CLI's handlers and level) is handed
to `when_imported`: it runs at once when `logging` is already imported, otherwise just before the
first message is written.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    import logging
    from collections.abc import Callable
    from typing import Any

# logging's level numbers (part of its documented interface)
DEBUG = 10
INFO = 20
WARNING = 30
ERROR = 40
CRITICAL = 50

_threshold = WARNING
_pending: list[Callable[[], None]] = []


def threshold() -> int:
    return _threshold


def set_threshold(level: int) -> int:
    """Drop messages below `level` while `logging` is not imported; returns the previous level."""
    global _threshold
    previous, _threshold = _threshold, level
    return previous


def when_imported(setup: Callable[[], None]) -> None:
    """Run `setup` (which imports and configures `logging`) now if `logging` is imported already,
    else before the first message is written; a set-up already waiting is not added twice. Set-ups
    run in the order they were given (a later one may refine an earlier one's levels)."""
    if setup not in _pending:
        _pending.append(setup)
    if "logging" in sys.modules:
        _run_pending()


def _run_pending() -> None:
    while _pending:
        _pending.pop(0)()


def cancel(setup: Callable[[], None]) -> bool:
    """Take `setup` back if it has not run; True when it had not."""
    if setup in _pending:
        _pending.remove(setup)
        return True
    return False


def _real_logger(name: str) -> logging.Logger:
    import logging

    _run_pending()
    return logging.getLogger(name)


class Logger:
    """`logging.getLogger(name)`, imported and looked up when a message is written."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        self._write(level, msg, args, kwargs)

    def debug(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._write(DEBUG, msg, args, kwargs)

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._write(INFO, msg, args, kwargs)

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._write(WARNING, msg, args, kwargs)

    def error(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._write(ERROR, msg, args, kwargs)

    def exception(self, msg: object, *args: object, **kwargs: Any) -> None:
        kwargs.setdefault("exc_info", True)
        self._write(ERROR, msg, args, kwargs)

    def _write(self, level: int, msg: object, args: tuple[object, ...], kwargs: dict[str, Any]) -> None:
        if level < _threshold and "logging" not in sys.modules:
            return
        # stacklevel: the record names the caller of debug()/info()/..., not this module
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2
        _real_logger(self.name).log(level, msg, *args, **kwargs)


def get_logger(name: str) -> Logger:
    return Logger(name)
