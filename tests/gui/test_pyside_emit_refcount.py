"""The installed PySide6 must not leak references on emit (6.12.0 does; pyproject excludes it).

With the leak, every `signal.emit()` from Python drops a reference of `True` it never took; on
CPython 3.11, where `True` is an ordinary object with a few hundred references, the interpreter
aborts with "bool_dealloc" after a few hundred emits: the GUI dies within a minute of use.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

PROGRAM = """
import sys
from PySide6.QtCore import QObject, Signal
class Emitter(QObject):
    fired = Signal(int)
emitter = Emitter()
before = sys.getrefcount(True)
for i in range(50):
    emitter.fired.emit(i)
print(before - sys.getrefcount(True))
"""


def test_emitting_signals_does_not_drain_references_of_true() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, cwd=REPO, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    lost = int(out.stdout.strip())
    assert lost < 50, f"this PySide6 leaks a reference of True per emit ({lost} lost in 50 emits)"
