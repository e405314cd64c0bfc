"""Strict mode: a bug of ours in a parser is raised, not reported as damage.

A stream parser that hits a Python exception on hostile bytes (an `IndexError`,
`KeyError`, `ValueError`, ...) is normally turned into a "bad data" problem, so that a dump
with one odd stream still shows everything else. That also hides our own bugs: the
robustness claim ("damage is reported") could never fail for one. In strict mode, used by
the tests, the fuzzers and the robustness suite, such an exception is raised as it is.

On when the environment variable `CRASH_INSPECTOR_STRICT` is set to anything but `0` or
empty (so subprocesses inherit it), or when `set_strict(True)` said so.
"""

from __future__ import annotations

import os

#: The environment variable that turns strict mode on.
STRICT_ENV = "CRASH_INSPECTOR_STRICT"

_override: bool | None = None


def strict() -> bool:
    """Whether a parser's own Python exception is raised instead of reported."""
    if _override is not None:
        return _override
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def set_strict(on: bool | None) -> None:
    """Force strict mode on or off in this process; None: follow the environment again."""
    global _override  # noqa: PLW0603  one process-wide switch, read only on a parser failure
    _override = on
