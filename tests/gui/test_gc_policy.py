"""Cycles are collected on the GUI thread only, once the window has threads (inspector/gui/gc_policy.py)."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from inspector.gui.worker import JobRunner


class _Cycle:
    def __init__(self) -> None:
        self.me = self
        self.qt = QObject()


def test_a_worker_thread_never_runs_the_cycle_collector(qtbot: QtBot) -> None:
    runner = JobRunner()
    collecting_threads: list[str] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collecting_threads.append(threading.current_thread().name)

    gc.callbacks.append(note)
    try:

        def allocate() -> None:
            # Enough cyclic garbage (with Qt objects in it) to cross every threshold many times.
            for _ in range(20_000):
                _Cycle()

        worker = threading.Thread(target=allocate, name="allocating-worker")
        worker.start()
        worker.join()
        assert "allocating-worker" not in collecting_threads
        qtbot.waitUntil(lambda: "MainThread" in collecting_threads, timeout=5000)
    finally:
        gc.callbacks.remove(note)
        runner.shutdown()
