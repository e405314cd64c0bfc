"""`ProgressIndicator`: a progress bar that repaints with the next frame, never synchronously.

`QProgressBar.setValue` repaints at once (`QWidget::repaint`), which flushes every
pending paint of the window inside the call: while the walk streams frames,
that turned each progress event into a full-window repaint in the middle of
applying a batch (35 ms on the torch case). This widget draws the same
progress bar through the style, but only schedules a paint (`update`).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QStyle, QStyleOptionProgressBar, QWidget


class ProgressIndicator(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._minimum = 0
        self._maximum = 100
        self._value = -1
        self._format = ""
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    # the part of QProgressBar's interface the window uses

    def setRange(self, minimum: int, maximum: int) -> None:
        self._minimum, self._maximum = minimum, maximum
        self.update()

    def setValue(self, value: int) -> None:
        if value != self._value:
            self._value = value
            self.update()

    def value(self) -> int:
        return self._value

    def maximum(self) -> int:
        return self._maximum

    def setFormat(self, text: str) -> None:
        if text != self._format:
            self._format = text
            self.update()

    def format(self) -> str:
        return self._format

    def reset(self) -> None:
        self._value = -1
        self._format = ""
        self.update()

    def sizeHint(self) -> QSize:
        height = self.fontMetrics().height() + 6
        return QSize(240, height)

    def paintEvent(self, event: QPaintEvent) -> None:
        option = QStyleOptionProgressBar()
        option.initFrom(self)
        option.minimum = self._minimum
        option.maximum = self._maximum
        option.progress = max(self._minimum, self._value)
        option.text = self._format
        option.textVisible = bool(self._format)
        option.textAlignment = Qt.AlignmentFlag.AlignCenter
        option.state |= QStyle.StateFlag.State_Horizontal
        painter = QPainter(self)
        self.style().drawControl(QStyle.ControlElement.CE_ProgressBar, option, painter, self)
