"""Stack layout plot (pyqtgraph): where each frame of the selected thread lives on its stack.

The horizontal axis is the stack address (lowest stack pointer on the left,
labelled in hex); each frame is a bar on its own row, from its stack pointer
up to its caller's. Markers show the return-address slots the walk read
(triangles) and the words a stack scan examined: accepted (circles) and
rejected (crosses). Clicking a bar selects that frame; the selected frame's
bar is drawn in the selection colour.

It redraws only when the thread changes, or at most every 100 ms while that
thread's frames stream in; a frame selection only recolours the bars.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QTimer, Slot
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.core.explain import MarkKind, report_numbers
from inspector.core.unwind import ScanDetail, StackFrame
from inspector.gui.document import Document
from inspector.gui.session import FrameRef, Session
from inspector.gui.theme import Theme

#: Redraw at most this often while the shown thread's frames stream in.
REDRAW_INTERVAL_MS = 100


def _last_frame_end(
    doc: Document | None, thread: int, frames: list[StackFrame], stack_end: int | None
) -> int | None:
    """Where the last frame's bar ends: past the highest word its failed unwind examined (the rest of
    the stack is unknown, and drawing it all would dwarf every other frame), within the stack."""
    if not frames or stack_end is None or doc is None:
        return stack_end
    termination = doc.termination(thread)
    width = doc.state.pointer_width
    highest = [frames[-1].context.stack_pointer or 0]
    if termination is not None and termination.step is not None:
        for attempt in termination.step.attempts:
            if isinstance(attempt.detail, ScanDetail):
                highest.append(attempt.detail.end - width)
    return min(stack_end, max(highest) + width)


def _empty_text(doc: Document | None, thread: int, has_stack: bool) -> str:
    if doc is None or thread < 0:
        return "No thread selected"
    starts = doc.state.thread_starts
    if thread < len(starts) and starts[thread].stack_cut:
        return "No frames to place on the stack: this thread's stack is cut off in the dump (see Problems)"
    if not has_stack:
        return "No frames to place on the stack: the dump holds no stack memory for this thread"
    return "No frames to place on the stack"


class AddressAxis(pg.AxisItem):
    """Ticks at byte offsets from `base` (the lowest stack pointer), in hex: full addresses would overlap."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.base = 0

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [f"+{int(v):#x}" if v >= 0 else f"-{-int(v):#x}" for v in values]


class FrameAxis(pg.AxisItem):
    """Bars sit on rows by physical frame; the ticks read the report's frame numbers (inline frames
    take numbers of their own), as Frames, Threads and the copied report number them."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        #: the report's number of each physical frame (`explain.report_numbers`)
        self.numbers: list[int] = []

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for value in values:
            row = round(value)
            exact = abs(value - row) < 1e-6 and 0 <= row < len(self.numbers)
            out.append(str(self.numbers[row]) if exact else "")
        return out


class StackPlotPane(QWidget):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stackPlotPane")
        self.session = session
        self._theme = theme
        self.title = QLabel("No thread selected", self)
        self.title.setObjectName("stackPlotTitle")
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.axis = AddressAxis("bottom")
        self.frame_axis = FrameAxis("left")
        self.plot = pg.PlotWidget(axisItems={"bottom": self.axis, "left": self.frame_axis})
        self.plot.setObjectName("stackPlot")
        self.plot.setMenuEnabled(False)
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.invertY(True)
        item.setLabel("left", "frame")
        item.setLabel("bottom", "bytes above the lowest stack pointer")
        for name in ("left", "bottom"):
            # No units, so no SI prefix to choose; pyqtgraph would rewrite the label's HTML (and lay
            # the plot out again) on every range change just to find that out.
            item.getAxis(name).enableAutoSIPrefix(False)
        item.showGrid(x=True, y=False, alpha=0.25)
        self.bars = pg.BarGraphItem(x0=[], width=[], y=[], height=0.62)
        self.return_slots = pg.ScatterPlotItem(symbol="t1", size=9)
        self.accepted = pg.ScatterPlotItem(symbol="o", size=8)
        self.rejected = pg.ScatterPlotItem(symbol="x", size=8)
        for graphic in (self.bars, self.return_slots, self.accepted, self.rejected):
            item.addItem(graphic)
        self.plot.scene().sigMouseClicked.connect(self._on_clicked)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.plot, 1)
        layout.addStretch(0)  # holds the title at the top while the plot is hidden
        self.setFocusProxy(self.plot)

        #: (frame index, start, end) of each bar, in drawing order
        self.extents: list[tuple[int, int, int]] = []
        self.selected_frame: int | None = None
        #: (x extent, last frame) the view's ranges were last set for
        self._ranges: tuple[int, int] | None = None
        self._thread = -1
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_INTERVAL_MS)
        self._timer.timeout.connect(self.redraw)
        self._apply_theme()

        session.document_changed.connect(self._on_thread_changed)
        session.thread_selected.connect(self._on_thread_changed)
        session.frames_added.connect(self._on_frames_added)
        session.thread_walked.connect(self._on_frames_added)
        session.frame_selected.connect(self._on_frame_selected)
        session.analysis_finished.connect(self._flush)
        session.analysis_cancelled.connect(self._flush)

    # ---- appearance ----

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._apply_theme()
        self.redraw()

    def _apply_theme(self) -> None:
        theme = self._theme
        palette = self.palette()
        self.plot.setBackground(palette.base().color())
        text = palette.text().color()
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(pg.mkPen(theme.muted))
            axis.setTextPen(pg.mkPen(text))
        self.return_slots.setBrush(pg.mkBrush(theme.code_pointer))
        self.return_slots.setPen(pg.mkPen(None))
        self.accepted.setBrush(pg.mkBrush(theme.ok))
        self.accepted.setPen(pg.mkPen(None))
        self.rejected.setBrush(pg.mkBrush(theme.crash))
        self.rejected.setPen(pg.mkPen(theme.crash))

    def bar_brush(self, frame: int) -> QColor:
        """The colour of a frame's bar (the selection colour for the selected frame)."""
        theme = self._theme
        if frame == self.selected_frame:
            return QColor(theme.code_pointer)
        base = QColor(theme.band_selected if not theme.dark else theme.band_odd)
        return base.darker(115) if frame % 2 else base

    # ---- following the session ----

    @Slot()
    def _on_thread_changed(self, *_: object) -> None:
        self._thread = self.session.selected_thread
        self._ranges = None  # another stack: fit the view to it
        self._timer.stop()
        self.redraw()

    @Slot(int)
    def _on_frames_added(self, thread: int, *_: object) -> None:
        if thread == self._thread and not self._timer.isActive():
            self._timer.start()

    @Slot()
    def _flush(self) -> None:
        """Draw now what a pending (throttled) redraw would draw."""
        if self._timer.isActive():
            self.redraw()

    @Slot(object)
    def _on_frame_selected(self, ref: object) -> None:
        self._flush()
        frame = ref.frame if isinstance(ref, FrameRef) and ref.thread == self._thread else None
        if frame != self.selected_frame:
            self.selected_frame = frame
            self._color_bars()

    @Slot()
    def redraw(self) -> None:
        """Rebuild the bars and markers for the shown thread."""
        self._timer.stop()
        doc = self.session.document
        thread = self._thread
        frames = doc.frames(thread) if doc is not None and thread >= 0 else []
        ref = self.session.selected_frame
        self.selected_frame = ref.frame if ref is not None and ref.thread == thread else None
        view = doc.thread(thread) if doc is not None else None
        stack = view.stack_region if view is not None else None
        self.extents = (
            doc.frame_extents(thread, _last_frame_end(doc, thread, frames, stack.end if stack else None))
            if doc is not None and thread >= 0
            else []
        )
        # empty axes would draw "+0x0 +0x0 +0x0": say why there is nothing instead
        self.plot.setVisible(bool(self.extents))
        if not self.extents:
            self.bars.setOpts(x0=[], width=[], y=[], brushes=[])
            for scatter in (self.return_slots, self.accepted, self.rejected):
                scatter.setData([], [])
            self.title.setText(_empty_text(doc, thread, stack is not None))
            return
        base = min(start for _, start, _ in self.extents)
        self.axis.base = base
        numbers = report_numbers(frames)
        self.frame_axis.numbers = numbers
        self.frame_axis.picture = None  # pyqtgraph caches the drawn ticks: new numbers, new picture
        self.frame_axis.update()
        first = self.extents[0][0]
        number = numbers[first] if first < len(numbers) else first
        label = f"bytes above {base:#x} (frame {number}'s stack pointer)"
        if self.axis.labelText != label:  # setting it lays the plot out again, even when it is the same
            self.plot.getPlotItem().setLabel("bottom", label)
        width = doc.state.pointer_width if doc is not None else 8
        self.bars.setOpts(
            x0=[start - base for _, start, _ in self.extents],
            width=[end - start for _, start, end in self.extents],
            y=[frame for frame, _, _ in self.extents],
            height=0.62,
        )
        self._color_bars()
        assert doc is not None  # there are extents
        marks = doc.stack_marks(thread)
        groups: dict[MarkKind, tuple[list[float], list[float], list[str]]] = {}
        for mark in marks:
            xs, ys, tips = groups.setdefault(mark.kind, ([], [], []))
            xs.append(mark.address - base + width / 2)
            ys.append(mark.frame)
            tips.append(mark.text)
        for kind, scatter in (
            (MarkKind.RETURN_ADDRESS, self.return_slots),
            (MarkKind.SCAN_ACCEPTED, self.accepted),
            (MarkKind.SCAN_REJECTED, self.rejected),
        ):
            xs, ys, tips = groups.get(kind, ([], [], []))
            scatter.setData(xs, ys, data=tips)
            scatter.setToolTip("\n".join(tips[:20]) if tips else "")
        top = max(end for _, _, end in self.extents)
        ranges = (top - base, max(f for f, _, _ in self.extents))
        if ranges != self._ranges:  # while frames stream in, most redraws keep the same ranges
            self._ranges = ranges
            self.plot.getPlotItem().setXRange(0, ranges[0], padding=0.02)
            self.plot.getPlotItem().setYRange(-0.6, ranges[1] + 0.6, padding=0)
        accepted = len(groups.get(MarkKind.SCAN_ACCEPTED, ((), (), ()))[0])
        rejected = len(groups.get(MarkKind.SCAN_REJECTED, ((), (), ()))[0])
        slots = len(groups.get(MarkKind.RETURN_ADDRESS, ((), (), ()))[0])
        self.title.setText(
            f"{len(self.extents)} frames, {top - base:,} bytes · ▲ {slots} return addresses · "
            f"● {accepted} scan hits · ✕ {rejected} rejected"
        )
        self.title.setToolTip(
            "Bars: each frame from its stack pointer to its caller's (the last one: to the end of the "
            "words its walk examined). ▲ return-address slots read; ● words a stack scan accepted; "
            "✕ words it rejected that point into a module."
        )

    def _color_bars(self) -> None:
        if not self.extents:
            return
        pen_color = QColor(self._theme.muted)
        brushes = [QBrush(self.bar_brush(frame)) for frame, _, _ in self.extents]
        pens = [
            QPen(QColor(self._theme.code_pointer) if frame == self.selected_frame else pen_color)
            for frame, _, _ in self.extents
        ]
        self.bars.setOpts(brushes=brushes, pens=pens)

    @Slot(object)
    def _on_clicked(self, event: object) -> None:
        scene_pos = getattr(event, "scenePos", None)
        if scene_pos is None:
            return
        self.select_at(self.plot.getPlotItem().vb.mapSceneToView(scene_pos()))

    def select_at(self, point: QPointF) -> int | None:
        """Select the frame whose bar is at `point` (view coordinates); returns it."""
        row = round(point.y())
        for frame, _, _ in self.extents:
            if frame == row and abs(point.y() - row) <= 0.45:
                self.session.select_frame(FrameRef(self._thread, frame))
                return frame
        return None

    def bar_center(self, frame: int) -> QPointF | None:
        """The middle of a frame's bar in view coordinates (for tests and keyboard users)."""
        base = self.axis.base
        for index, start, end in self.extents:
            if index == frame:
                return QPointF((start + end) / 2 - base, frame)
        return None
