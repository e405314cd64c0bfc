"""`memo(maxsize)`: remembers a function's results by its arguments, up to `maxsize` of them.

`functools.lru_cache` would do; importing `functools` also imports `collections` (~2 ms, more than
a fifth of what importing the engine's modules costs), and the functions remembered here have a
handful of distinct arguments (context layouts, struct formats, file names of one batch), so the
least-recently-used order is not worth keeping: when the memo is full it starts again empty.
The arguments must be hashable and positional.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar, TypeVarTuple

    R = TypeVar("R")
    Ts = TypeVarTuple("Ts")


def memo(maxsize: int) -> Callable[[Callable[[*Ts], R]], Callable[[*Ts], R]]:
    """The decorator remembering up to `maxsize` results of the function it wraps."""

    def decorate(function: Callable[[*Ts], R]) -> Callable[[*Ts], R]:
        results: dict[tuple[*Ts], R] = {}

        def remembered(*args: *Ts) -> R:
            try:
                return results[args]
            except KeyError:
                pass
            value = function(*args)
            if len(results) >= maxsize:
                results.clear()
            results[args] = value
            return value

        remembered.__name__ = function.__name__
        remembered.__qualname__ = function.__qualname__
        remembered.__doc__ = function.__doc__
        remembered.__wrapped__ = function  # type: ignore[attr-defined]  # as functools.wraps sets it
        return remembered

    return decorate
