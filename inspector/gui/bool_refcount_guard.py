"""Keep a PySide6 reference-counting bug from aborting the interpreter on CPython 3.11.

Situation: PySide6 6.12.0's `SignalInstance.emit()` returns `True` without taking
a reference to it (and a failed `disconnect()` does the same with `False`).
Every emit from Python therefore drops one reference of `True` that was never
taken. On CPython ≤ 3.11 `True` and `False` are ordinary reference-counted
objects with only a few hundred references at start-up, so after a few hundred
emits the count reaches zero and CPython aborts with "Fatal Python error:
bool_dealloc: deallocating True or False". CPython 3.12+ makes both immortal
(PEP 683), where the bug is harmless.

Example: `python -m inspector` on Python 3.11 with PySide6 6.12.0 died within
a minute of clicking around; the GUI tests aborted at interpreter exit.

Handling: `protect_bool_singletons()` measures one emit; if it loses a reference
of `True`, it raises the reference counts of `True` and `False` by 2**40, which
is what immortality amounts to on 3.12 (they can never reach zero). It does
nothing on CPython 3.12+, other interpreters, or a PySide6 without the bug.
The composition root (`app.py`) and the GUI tests call it once, before any
signal is emitted.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import sys

log = logging.getLogger(__name__)

_HEADROOM = 1 << 40


def emit_leaks_a_reference() -> bool:
    """Whether emitting a signal from Python drops a reference of `True` (the PySide6 6.12.0 bug)."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        probed = Signal(int)

    probe = _Probe()
    gc.collect()
    before = sys.getrefcount(True)
    for _ in range(4):
        probe.probed.emit(0)
    gc.collect()
    lost = before - sys.getrefcount(True)
    # the probe's own references to True (if any) are not counted: we look for one lost per emit
    return lost >= 4


def protect_bool_singletons() -> bool:
    """Make `True` and `False` unkillable if this interpreter needs it; True if it did something."""
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False  # immortal already
    if not emit_leaks_a_reference():
        return False
    for singleton in (True, False):
        refcount = ctypes.c_ssize_t.from_address(id(singleton))  # ob_refcnt is the object's first field
        refcount.value += _HEADROOM
    log.info("PySide6 signal emits leak references to True/False here; True and False made immortal")
    return True
