"""The main window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow

WINDOW_TITLE = "Crash Inspector"


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle(WINDOW_TITLE)
        self.resize(1280, 800)
        self._summary = QLabel("No dump open", self)
        self._summary.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setCentralWidget(self._summary)

    def open_dump(self, path: Path) -> None:
        try:
            size = path.stat().st_size
        except OSError as exc:
            self._summary.setText(f"Cannot open {path}: {exc.strerror or exc}")
            return
        self._summary.setText(f"{path.name}\n{size:,} bytes")
        self.setWindowTitle(f"{path.name} — {WINDOW_TITLE}")

    def summary_text(self) -> str:
        return self._summary.text()
