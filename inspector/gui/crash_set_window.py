"""The Crash Set window: a folder of dumps triaged and grouped by signature, beside the inspector.

File › Open Folder of Dumps… (or dropping a folder that holds dumps on the main window)
opens one: the triage runs in its own worker thread (`JobRunner`, the job in
`crash_set_job`) and its results stream into the model as they come. Above the groups, a
bar per group (pyqtgraph, the 15 biggest; clicking a bar selects its group). Expanding a
group lists its dumps; double-clicking a dump opens it in the main window's inspector view.
When the symbol paths or servers change the set is triaged again with them.

`CrashSets` is the main window's side: the menu action, opening windows, following the
symbol settings (an `AnalysisSettings` listener). The main window only creates it, puts its
action in the File menu, hands it dropped folders of dumps and closes it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, QPointF, Qt, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from inspector.core.triage import SignatureGroup, TriageOptions, release_shared
from inspector.gui.crash_set_job import CrashSetFound, CrashSetRequest, CrashTriaged, crash_set_job
from inspector.gui.models.crash_set_model import CrashSetModel, DumpPathRole
from inspector.gui.progress_indicator import ProgressIndicator
from inspector.gui.theme import Theme
from inspector.gui.worker import JobRunner

if TYPE_CHECKING:
    from inspector.gui.analysis_settings import AnalysisSettings, Pushed
    from inspector.gui.session import Session

log = logging.getLogger(__name__)

#: Groups drawn in the bar chart.
CHART_GROUPS = 15
#: Characters of a signature shown beside its bar.
LABEL_CHARACTERS = 48


class SignatureAxis(pg.AxisItem):
    """The chart's left axis: each bar's signature (shortened) instead of a number."""

    def __init__(self) -> None:
        super().__init__("left")
        self.labels: list[str] = []

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:
        return [(1.0, [float(i) for i in range(len(self.labels))])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for value in values:
            i = round(value)
            label = self.labels[i] if 0 <= i < len(self.labels) else ""
            out.append(label if len(label) <= LABEL_CHARACTERS else label[: LABEL_CHARACTERS - 1] + "…")
        return out


class CrashSetChart(QWidget):
    """A horizontal bar per group, biggest on top; `group_clicked(signature)` when one is clicked."""

    group_clicked = Signal(str)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = theme
        self.axis = SignatureAxis()
        self.plot = pg.PlotWidget(axisItems={"left": self.axis})
        self.plot.setObjectName("crashSetChart")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.invertY(True)
        item.setLabel("bottom", "dumps")
        item.showGrid(x=True, y=False, alpha=0.25)
        self.bars = pg.BarGraphItem(x0=[], width=[], y=[], height=0.7)
        item.addItem(self.bars)
        self.plot.scene().sigMouseClicked.connect(self._on_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        #: the signatures drawn, top to bottom
        self.signatures: list[str] = []
        self.counts: list[int] = []
        self.set_theme(theme)

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        palette = self.palette()
        self.plot.setBackground(palette.base().color())
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(pg.mkPen(theme.muted))
            axis.setTextPen(pg.mkPen(palette.text().color()))
        self.bars.setOpts(brush=pg.mkBrush(theme.code_pointer), pen=pg.mkPen(None))

    def show_groups(self, groups: Sequence[SignatureGroup]) -> None:
        shown = list(groups[:CHART_GROUPS])
        signatures = [g.signature for g in shown]
        counts = [g.count for g in shown]
        if signatures == self.signatures and counts == self.counts:
            return
        self.signatures, self.counts = signatures, counts
        self.axis.labels = signatures
        self.bars.setOpts(x0=[0] * len(counts), width=counts, y=list(range(len(counts))), height=0.7)
        item = self.plot.getPlotItem()
        item.setYRange(-0.6, max(len(counts), 1) - 0.4, padding=0)
        biggest = max(counts, default=1)
        item.setXRange(0, biggest * 1.05, padding=0)
        step = max(1, math.ceil(biggest / 10))  # whole dumps: no 0.5 ticks
        item.getAxis("bottom").setTickSpacing(step, step)
        self.axis.picture = None  # the labels changed though the tick positions may not have
        self.axis.update()

    def _on_clicked(self, event: object) -> None:
        position = event.scenePos()  # type: ignore[attr-defined]
        view = self.plot.getPlotItem().vb
        if not view.sceneBoundingRect().contains(position):
            return
        point: QPointF = view.mapSceneToView(position)
        row = round(point.y())
        if 0 <= row < len(self.signatures) and 0 <= point.x() <= self.counts[row]:
            self.group_clicked.emit(self.signatures[row])


class CrashSetWindow(QWidget):
    """One set of dumps (the folders given), triaged, grouped, with the chart and the groups' tree."""

    open_dump_requested = Signal(str)
    closed = Signal()

    def __init__(
        self,
        inputs: Iterable[Path],
        options: TriageOptions,
        theme: Theme,
        parent: QWidget | None = None,
        *,
        workers: int | None = None,
    ) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("crashSetWindow")
        self.inputs = tuple(Path(p) for p in inputs)
        self.options = options
        self.workers = workers
        self._theme = theme
        names = ", ".join(p.name or str(p) for p in self.inputs)
        self.setWindowTitle(f"Crash Set: {names} — Crash Inspector")
        self.runner = JobRunner(self)
        self.runner.events.connect(self._on_events)
        self.runner.finished.connect(self._on_finished)
        self.runner.cancelled.connect(self._on_cancelled)
        self.runner.failed.connect(self._on_failed)

        self.model = CrashSetModel(theme, self)
        self.tree = QTreeView(self)
        self.tree.setObjectName("crashSetTree")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setExpandsOnDoubleClick(True)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in enumerate((360, 60, 360, 440)):
            self.tree.setColumnWidth(column, width)
        self.tree.doubleClicked.connect(self._on_double_clicked)
        self.chart = CrashSetChart(theme, self)
        self.chart.group_clicked.connect(self.select_group)

        self.title = QLabel(self)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status = QLabel(self)
        self.progress = ProgressIndicator(self)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.again_button = QPushButton("Triage Again", self)
        self.again_button.clicked.connect(self.start)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.progress)
        top.addWidget(self.cancel_button)
        top.addWidget(self.again_button)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.chart)
        splitter.addWidget(self.tree)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([300, 500])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)
        self.resize(1280, 820)
        self.found = 0
        self.unreadable = 0
        self.state = "idle"  # "running", "done", "cancelled", "failed"

    # ---- running ----

    @Slot()
    def start(self) -> None:
        """Triage the inputs (again) with the current options; results replace the shown ones."""
        root = str(self.inputs[0]) if len(self.inputs) == 1 and self.inputs[0].is_dir() else None
        self.model.reset(root)
        self.chart.show_groups([])
        self.found = self.unreadable = 0
        self.state = "running"
        self.title.setText(f"Looking for dumps in {', '.join(map(str, self.inputs))}…")
        self.progress.setRange(0, 0)
        self.progress.setFormat("searching")
        self.progress.show()
        self.cancel_button.setEnabled(True)
        self.again_button.setEnabled(False)
        self.runner.start(crash_set_job(CrashSetRequest(self.inputs, self.options, self.workers)))

    def set_options(self, options: TriageOptions) -> None:
        """New symbol settings: triage again with them (when they differ)."""
        if options == self.options:
            return
        self.options = options
        self.start()

    @Slot(int, list)
    def _on_events(self, generation: int, batch: list[object]) -> None:
        crashes = []
        for event in batch:
            if isinstance(event, CrashSetFound):
                self.found = event.count
                self.progress.setRange(0, max(1, event.count))
                self.title.setText(f"{event.count} dumps in {', '.join(map(str, self.inputs))}")
            elif isinstance(event, CrashTriaged):
                crashes.append((event.index, event.crash))
                self.unreadable += not event.crash.readable
        if crashes:
            self.model.add_crashes(crashes)
            self.chart.show_groups(self.model.groups())
        self.progress.setValue(self.model.done)
        self.progress.setFormat(f"{self.model.done}/{self.found}")
        self._update_status()

    def _update_status(self) -> None:
        text = f"{self.model.done} of {self.found} dumps triaged · {self.model.rowCount()} signatures"
        if self.unreadable:
            text += f" · {self.unreadable} could not be read"
        if self.state == "cancelled":
            text += " · cancelled"
        elif self.state == "failed":
            text += " · stopped by an error"
        self.status.setText(text)

    def _end(self, state: str) -> None:
        self.state = state
        self.cancel_button.setEnabled(False)
        self.again_button.setEnabled(True)
        self.progress.reset()
        self.progress.hide()
        self._update_status()

    @Slot(int, object)
    def _on_finished(self, generation: int, result: object) -> None:
        self._end("done")
        if not self.found:
            self.status.setText("No minidumps were found here.")

    @Slot(int)
    def _on_cancelled(self, generation: int) -> None:
        self._end("cancelled")

    @Slot(int, object)
    def _on_failed(self, generation: int, error: object) -> None:
        self._end("failed")
        self.status.setText(f"{self.status.text()}: {error}")

    # ---- navigating ----

    @Slot(str)
    def select_group(self, signature: str) -> None:
        row = self.model.group_row(signature)
        if row is None:
            return
        index = self.model.index(row, 0)
        self.tree.setCurrentIndex(index)
        self.tree.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop)

    @Slot(QModelIndex)
    def _on_double_clicked(self, index: QModelIndex) -> None:
        path = index.siblingAtColumn(0).data(DumpPathRole)
        if isinstance(path, str):
            self.open_dump_requested.emit(path)

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.model.set_theme(theme)
        self.chart.set_theme(theme)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.runner.shutdown()
        self.closed.emit()
        super().closeEvent(event)


def options_for(session: Session) -> TriageOptions:
    """The session's symbol settings (as its analysis uses them) for a triage."""
    servers = session.symbol_servers
    return TriageOptions(
        symbol_paths=tuple(str(p) for p in session.symbol_paths),
        index_cache=None if session.cache_dir is None else str(session.cache_dir),
        use_index_cache=session.cache_dir is not None,
        servers=servers if servers is not None and servers.enabled else None,
    )


class CrashSets:
    """The main window's crash sets: File › Open Folder…, dropped folders, symbol settings.

    `window` is the main window: it parents the crash set windows and takes the action;
    `analysis_settings` its symbol settings; `open_dump` shows a dump in it; `theme` gives its
    current theme.
    """

    def __init__(
        self,
        window: QMainWindow,
        analysis_settings: AnalysisSettings,
        *,
        open_dump: Callable[[Path], None],
        theme: Callable[[], Theme],
    ) -> None:
        self.window = window
        self.session = analysis_settings.session
        self.settings = analysis_settings.settings
        self._open_dump_in_window = open_dump
        self._theme = theme
        self.windows: list[CrashSetWindow] = []
        self.open_folder_action = QAction("Open &Folder of Dumps…", window)
        self.open_folder_action.setShortcut(QKeySequence("Ctrl+Shift+O"))
        tip = "Triage every minidump in a folder: group them by crash signature"
        self.open_folder_action.setStatusTip(tip)
        self.open_folder_action.setToolTip(tip)
        self.open_folder_action.triggered.connect(self.choose_folder)
        window.addAction(self.open_folder_action)
        analysis_settings.listeners.append(self._on_pushed)

    @Slot()
    def choose_folder(self) -> None:
        start = self.settings.last_directory
        folder = QFileDialog.getExistingDirectory(self.window, "Triage a folder of dumps", str(start or ""))
        if folder:
            self.open([Path(folder)])

    def open(self, folders: Iterable[Path]) -> CrashSetWindow:
        window = CrashSetWindow(folders, options_for(self.session), self._theme(), self.window)
        window.open_dump_requested.connect(self._open_dump)
        window.closed.connect(lambda w=window: self._forget(w))
        self.windows.append(window)
        window.show()
        window.start()
        return window

    def _forget(self, window: CrashSetWindow) -> None:
        if window in self.windows:
            self.windows.remove(window)
            window.deleteLater()
        if not self.windows:  # sets triaged on the worker thread kept their symbol files open
            release_shared()

    @Slot(str)
    def _open_dump(self, path: str) -> None:
        self._open_dump_in_window(Path(path))
        self.window.raise_()
        self.window.activateWindow()

    def _on_pushed(self, pushed: Pushed) -> None:
        if pushed.paths or pushed.servers:  # a triage walks with the default policy, as the command does
            self.symbols_changed()

    def symbols_changed(self) -> None:
        """The main window's symbol settings changed: triage every open set again with them."""
        options = options_for(self.session)
        for window in self.windows:
            window.set_options(options)

    def shutdown(self) -> None:
        for window in list(self.windows):
            window.close()
