"""`collector_paused`: Python's cycle collector held off while a burst of acyclic objects is built.

A walk and a symbol-file conversion build many small objects (a corpus pass: about 600K
allocations; libtorch_cpu's records: 342K symbols) and none of them forms a cycle: reference
counting frees them. Their allocation alone keeps crossing the collector's first threshold, and
each collection walks the young objects and, every tenth, the older ones again, to free nothing:
about a tenth of a warm corpus pass in one process, half the time of building a large module's
records. The thresholds are raised rather than the collector turned off: in the window the GUI
thread owns turning it on and off (`gui.gc_policy`), and a worker thread must never turn it back
on. The first of concurrent holders raises them, the last one puts them back, so a pause never
outlives the work that asked for it. A process that only runs a command line turns the collector
off altogether (`inspector.cli`), and then this changes nothing.

    with collector_paused:
        ...
"""

from __future__ import annotations

import _thread
import gc

#: The first threshold while paused: never crossed by one walk or conversion.
_PAUSED_THRESHOLD = 1 << 30


class _CollectorPause:
    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._holders = 0
        self._saved: tuple[int, int, int] = (0, 0, 0)

    def __enter__(self) -> None:
        with self._lock:
            if self._holders == 0:
                self._saved = gc.get_threshold()
                gc.set_threshold(_PAUSED_THRESHOLD, *self._saved[1:])
            self._holders += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0:
                gc.set_threshold(*self._saved)


collector_paused = _CollectorPause()
