"""Python's cycle collector runs on the GUI thread only, once the window has threads of its own.

Reference cycles that hold Qt objects (a pane and a closure over it, a menu and its actions)
are freed by the cycle collector, which runs in whatever thread happens to allocate when a
threshold is crossed. When that is a worker thread (the walk, a pane's background call), the
QObject destructors it runs take Qt's locks and then wait for the GIL, which the GUI thread
holds while it waits for those locks: both threads stop for good (seen in the GUI tests, stack
in `QObject::~QObject` / `Shiboken::GilState::acquire`). pyqtgraph's `GarbageCollector` is made
for exactly this: it turns automatic collection off and collects, generation by generation as
the thresholds say, from a timer on the GUI thread.
"""

from __future__ import annotations

import gc

#: The running collector (its timer), while automatic collection is off.
_active: list[object] = []


def collect_on_gui_thread() -> None:
    """From now on, collect cycles only on the GUI thread (call it on the GUI thread; idempotent)."""
    if not _active:
        from pyqtgraph.util.garbage_collector import GarbageCollector

        _active.append(GarbageCollector(interval=0.5))


def restore_automatic_collection() -> None:
    """Undo `collect_on_gui_thread` and collect now, on this (the GUI) thread: for the tests,
    which run windows and plain engine code one after the other in one process."""
    while _active:
        _active.pop().timer.stop()  # type: ignore[attr-defined]
        gc.enable()
        gc.collect()
