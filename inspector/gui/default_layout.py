"""The window's default size and the share of each dock in it (issue 21: a laptop's screen first).

`fitting_size` is the default window size made to fit the screen the window opens on (1440×900
is larger than a 1366×768 laptop). `DefaultLayout` shares the window between the docks: Frames
gets the most width (function names are long; half of a laptop's screen), Unwind and Stack Memory
the rest, the bottom row (Modules, Problems) stays short, and Threads is as tall as its threads
need (up to 8, then it scrolls) — again for each new dump, unless the user resized it.

Left to itself, QMainWindow gives the space a growing window (or a shrinking Summary) frees to
whichever dock area it likes (the bottom one: Modules got ~300 px of blank rows). So while the
layout is the default one, the shares are applied again whenever the window or the Summary
changes size; once the user arranges the docks (drags a separator, moves or floats a dock) their
layout is left alone until View › Reset Layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QMainWindow

DEFAULT_SIZE = (1440, 900)
#: below this window width Frames takes half of it
LAPTOP_WIDTH = 1600
#: the most threads Threads makes room for before it scrolls
THREAD_ROWS = 8


def fitting_size(window: QMainWindow) -> tuple[int, int]:
    """`DEFAULT_SIZE`, made smaller to fit the available part of the window's screen."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    width, height = DEFAULT_SIZE
    if screen is None:
        return width, height
    available = screen.availableGeometry()
    # leave room for the frame the window manager draws around the window
    frame_w, frame_h = 16, 40
    return min(width, available.width() - frame_w), min(height, available.height() - frame_h)


class DefaultLayout(QObject):
    """Applies the default dock sizes to `window`; `threads_height(count)` measures the Threads pane."""

    def __init__(
        self,
        window: QMainWindow,
        docks: Mapping[str, QDockWidget],
        threads_height: Callable[[int], int],
        thread_count: Callable[[], int | None],
    ) -> None:
        super().__init__(window)
        self._window = window
        self._docks = docks
        self._threads_height = threads_height
        self._thread_count = thread_count
        #: Threads' height as we last set it (None: not yet); another height means the user chose one
        self._threads_fitted: int | None = None
        #: the default shares are in force (applied, and not rearranged by the user since)
        self.active = False
        self._dragging = False
        self._again = QTimer(self)
        self._again.setSingleShot(True)
        self._again.setInterval(0)  # once the layout has given the docks their new sizes
        self._again.timeout.connect(self._apply_again)
        window.installEventFilter(self)
        docks["summary"].installEventFilter(self)
        for dock in docks.values():
            dock.dockLocationChanged.connect(self._user_arranged)
            dock.topLevelChanged.connect(self._user_arranged)

    def _wanted_threads_height(self) -> int:
        count = self._thread_count()
        return self._threads_height(min(max(count if count is not None else 3, 1), THREAD_ROWS))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self._window and kind == QEvent.Type.MouseButtonPress:
            # the window itself gets the presses on the separators between docks (its cursor says so)
            shape = self._window.cursor().shape()
            self._dragging = shape in (Qt.CursorShape.SplitHCursor, Qt.CursorShape.SplitVCursor)
        elif watched is self._window and kind == QEvent.Type.MouseButtonRelease and self._dragging:
            self._dragging = False
            self._user_arranged()
        elif kind == QEvent.Type.Resize and self.active:
            self._again.start()
        return False

    @Slot()
    def _user_arranged(self, *_: object) -> None:
        self.active = False
        self._again.stop()

    @Slot()
    def _apply_again(self) -> None:
        if self.active:
            self.apply()

    @Slot()
    def apply(self) -> None:
        """Share the window between the docks (takes effect once the window has its size)."""
        self.active = True
        window, d = self._window, self._docks
        width = max(window.width(), 1)
        frames, unwind = (0.50, 0.27) if width < LAPTOP_WIDTH else (0.42, 0.30)
        window.resizeDocks(
            [d["frames"], d["unwind"], d["memory"]],
            [round(width * frames), round(width * unwind), round(width * (1 - frames - unwind))],
            Qt.Orientation.Horizontal,
        )
        height = max(window.height(), 1)
        # the bottom row first; then Threads' height, Frames taking the rest of the column (a height
        # given to Frames too would squeeze Threads to its minimum when the Summary is tall)
        window.resizeDocks([d["modules"]], [round(height * 0.13)], Qt.Orientation.Vertical)
        window.resizeDocks([d["threads"]], [self._wanted_threads_height()], Qt.Orientation.Vertical)
        window.resizeDocks(
            [d["unwind"], d["registers"], d["memory"], d["plot"]],
            [round(height * 0.36), round(height * 0.27), round(height * 0.42), round(height * 0.21)],
            Qt.Orientation.Vertical,
        )
        QTimer.singleShot(0, self._note_threads_height)  # the docks take their sizes in the next layout

    def apply_when_shown(self) -> None:
        """On the first show: now, and again once the window manager gave the window its size."""
        self.apply()
        QTimer.singleShot(0, self.apply)

    @Slot()
    def _note_threads_height(self) -> None:
        self._threads_fitted = self._docks["threads"].height()

    @Slot()
    def fit_threads(self) -> None:
        """A new dump: Threads as tall as its threads need, unless the user resized it."""
        dock = self._docks["threads"]
        if not dock.isVisible() or dock.isFloating():
            return
        if self._threads_fitted is not None and abs(dock.height() - self._threads_fitted) > 4:
            return  # the user moved the splitter: leave their layout alone
        frames = self._docks["frames"]
        total = dock.height() + frames.height()
        wanted = min(self._wanted_threads_height(), total // 2)
        self._window.resizeDocks([dock, frames], [wanted, total - wanted], Qt.Orientation.Vertical)
        QTimer.singleShot(0, self._note_threads_height)
