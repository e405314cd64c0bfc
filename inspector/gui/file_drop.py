"""Dropping files on the window: folders and `.sym` files become symbol paths, other files open as dumps.

A minidump often arrives without the `.dmp` extension (`upload_file_minidump`),
so other files are not rejected by name: the reader says whether they are
minidumps. A folder that holds minidumps (by content, among the first files met) is a
crash set to triage rather than a symbol folder. `DropOverlay` shows what a drop will
do while it hovers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QUrl
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from inspector.core.triage import holds_dumps

SYMBOL_SUFFIX = ".sym"


@dataclass(frozen=True, slots=True)
class DropPlan:
    dumps: tuple[Path, ...] = ()
    symbol_paths: tuple[Path, ...] = ()
    ignored: tuple[str, ...] = ()
    dump_folders: tuple[Path, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.dumps and not self.symbol_paths and not self.dump_folders

    def describe(self) -> list[str]:
        lines = []
        if self.dumps:
            more = f" (and {len(self.dumps) - 1} more: only the first opens)" if len(self.dumps) > 1 else ""
            lines.append(f"Open {self.dumps[0].name}{more}")
        if self.dump_folders:
            names = ", ".join(p.name or str(p) for p in self.dump_folders)
            lines.append(f"Triage the dumps in {names}")
        for p in self.symbol_paths:
            kind = "symbol file" if p.suffix.lower() == SYMBOL_SUFFIX else "symbol folder"
            lines.append(f"Add {kind} {p.name or p}")
        if self.ignored:
            lines.append(f"Ignore {len(self.ignored)} item(s) that are not local files")
        return lines


def plan_drop(urls: Iterable[QUrl]) -> DropPlan:
    dumps: list[Path] = []
    symbols: list[Path] = []
    ignored: list[str] = []
    folders: list[Path] = []
    for url in urls:
        if not url.isLocalFile():
            ignored.append(url.toString())
            continue
        path = Path(url.toLocalFile())
        if path.is_dir() and holds_dumps(path):
            folders.append(path)
        elif path.is_dir() or path.suffix.lower() == SYMBOL_SUFFIX:
            symbols.append(path)
        else:
            dumps.append(path)
    return DropPlan(tuple(dumps), tuple(symbols), tuple(ignored), tuple(folders))


class DropOverlay(QWidget):
    """A translucent sheet over the window saying what the hovering drop will do."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("dropOverlay")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._lines: list[str] = []
        self.hide()
        parent.installEventFilter(self)

    @property
    def lines(self) -> list[str]:
        return list(self._lines)

    def show_plan(self, plan: DropPlan) -> None:
        self._lines = plan.describe() or ["Nothing here can be opened"]
        parent = self.parentWidget()
        if parent is not None:
            self.setGeometry(parent.rect())
        self.raise_()
        self.show()
        self.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        parent = self.parentWidget()
        if (
            parent is not None
            and watched is parent
            and event.type() == QEvent.Type.Resize
            and self.isVisible()
        ):
            self.setGeometry(parent.rect())
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        shade = QColor(palette.color(palette.ColorRole.Window))
        shade.setAlpha(200)
        painter.fillRect(self.rect(), shade)
        font = painter.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        painter.setFont(font)
        text = "\n".join(self._lines)
        metrics = painter.fontMetrics()
        bounds = metrics.boundingRect(self.rect(), int(Qt.AlignmentFlag.AlignCenter), text)
        card = bounds.adjusted(-40, -28, 40, 28)
        painter.setBrush(palette.color(palette.ColorRole.Base))
        pen = QPen(palette.color(palette.ColorRole.Highlight))
        pen.setWidth(3)
        painter.setPen(pen)
        painter.drawRoundedRect(card, 14, 14)
        painter.setPen(palette.color(palette.ColorRole.Text))
        painter.drawText(card, int(Qt.AlignmentFlag.AlignCenter), text)
        painter.end()
