"""Item delegates that keep long names readable in a narrow column.

`ShorteningDelegate` draws the longest form of a C++ name that fits the cell (the name, its
template arguments collapsed, then its parameter lists too: `core.report.short_names`) and
elides what still does not fit at the end, so the start of the qualified name stays. The
model's text is untouched: tooltips, the filter and every copy use the whole name.
`ElidingDelegate` only chooses where a column is cut (a file name in the middle, to keep its
line number).
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from inspector.core.report.short_names import shortened_forms

_Index = QModelIndex | QPersistentModelIndex


@lru_cache(maxsize=4096)
def _forms(text: str) -> tuple[str, ...]:
    return tuple(shortened_forms(text))


class ElidingDelegate(QStyledItemDelegate):
    def __init__(self, mode: Qt.TextElideMode, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._mode = mode

    def initStyleOption(self, option: QStyleOptionViewItem, index: _Index) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = self._mode


class ShorteningDelegate(ElidingDelegate):
    #: most (text, cell width, cell features) → fitting text answers kept
    CACHE_SIZE = 4096

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.TextElideMode.ElideRight, parent)
        # Every paint asks again for the same cells, and finding the form that fits measures the
        # shortened forms of a long C++ name one by one (a call into Qt each). The answers are
        # kept by text, cell width and what else the cell shows (which decide the text's room),
        # for one font: asking the style for the room itself lays the text out, on every paint.
        self._fitted: dict[tuple[str, int, object], str] = {}
        self._font = QFont()

    def initStyleOption(self, option: QStyleOptionViewItem, index: _Index) -> None:
        super().initStyleOption(option, index)
        text = option.text
        if not text:
            return
        if option.font != self._font:
            self._fitted.clear()
            self._font = QFont(option.font)
        key = (text, option.rect.width(), option.features)
        fitted = self._fitted.get(key)
        if fitted is None:
            if len(self._fitted) >= self.CACHE_SIZE:
                self._fitted.clear()
            fitted = self._fitted[key] = self.fitting_text(option, text)
        option.text = fitted

    @staticmethod
    def fitting_text(option: QStyleOptionViewItem, text: str) -> str:
        """The longest shortened form of `text` that fits the cell's text area (else the shortest)."""
        style = option.widget.style() if option.widget is not None else None
        if style is None:
            return text
        area = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, option.widget)
        room = area.width() - 8  # the style's text margins
        metrics = option.fontMetrics
        forms = _forms(text)
        for form in forms:
            if metrics.horizontalAdvance(form) <= room:
                return form
        return forms[-1]
