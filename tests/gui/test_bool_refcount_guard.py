"""The PySide6 emit reference leak cannot kill the app: see inspector/gui/bool_refcount_guard.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

EMITS = 5000

PROGRAM = f"""
import sys
from PySide6.QtCore import QObject, Signal
from inspector.gui.bool_refcount_guard import emit_leaks_a_reference, protect_bool_singletons
leaks = emit_leaks_a_reference()
if sys.argv[1] == "protect":
    protect_bool_singletons()
class Emitter(QObject):
    fired = Signal(int)
emitter = Emitter()
for i in range({EMITS}):
    emitter.fired.emit(i)
print("leaks" if leaks else "clean", flush=True)
"""


def run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, mode],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )


def test_thousands_of_emits_are_survivable_once_protected() -> None:
    out = run("protect")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in ("leaks", "clean")


def test_without_protection_the_leak_is_fatal_where_it_exists() -> None:
    """Documents why the guard exists; skips on a PySide6 / CPython where the bug is gone."""
    out = run("none")
    if out.returncode == 0 and out.stdout.strip() == "clean":
        pytest.skip("this PySide6 / CPython does not leak references on emit")
    assert out.returncode != 0
    assert "bool_dealloc" in out.stderr
