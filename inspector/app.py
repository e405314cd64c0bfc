"""GUI composition root: arguments, logging, QApplication, settings, sessions, main windows.

`python -m inspector [DUMP] [--symbols PATH]… [--settings FILE] [--screenshot FILE]`.
Without a dump the bundled sample crash opens with its symbols. When the app
already runs (same user and settings file), the dump is handed to it and opens
there in a new window (`inspector.gui.single_instance`). Qt is imported only
inside `main`, so `--help` and the headless commands never load it.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from inspector import __version__
from inspector.resources import APP_ID, app_icon, sample_binaries, sample_dump, sample_symbols

#: the --color-scheme choices (inspector.gui.theme.wants_dark takes these)
COLOR_SCHEMES = ("system", "light", "dark")

if TYPE_CHECKING:  # Qt is imported only when the GUI starts
    from PySide6.QtCore import QObject
    from PySide6.QtWidgets import QApplication

    from inspector.gui.main_window import MainWindow
    from inspector.gui.session import Session
    from inspector.gui.settings import Settings
    from inspector.gui.single_instance import InstanceServer

log = logging.getLogger(__name__)

ORGANIZATION = "crash-inspector"
APPLICATION = "crash-inspector"
DISPLAY_NAME = "Crash Inspector"
# small enough for a laptop's 1366x768 (and 1280x720); smaller leaves the panes no room
MIN_SCREENSHOT_SIZE = (1024, 640)
DEFAULT_SCREENSHOT_SIZE = (1440, 900)
SCREENSHOT_TIMEOUT_S = 120


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT, e.g. 1440x900, not {text!r}") from None
    min_w, min_h = MIN_SCREENSHOT_SIZE
    if width < min_w or height < min_h:
        raise argparse.ArgumentTypeError(f"at least {min_w}x{min_h}")
    return width, height


def build_parser() -> argparse.ArgumentParser:
    from inspector.commands import DESKTOP_OPTIONS, SUBCOMMANDS  # what cli.main dispatches on: none is missed

    parser = argparse.ArgumentParser(
        prog="crash-inspector",
        description="Open a minidump and its Breakpad symbols in the Crash Inspector window.",
        epilog=(
            f"Headless sub-commands (no Qt): {', '.join(sorted(SUBCOMMANDS))}; "
            "run `crash-inspector COMMAND --help` for each. "
            "Desktop integration for this user (menu entry, .dmp file type, default handler): "
            f"{' or '.join(DESKTOP_OPTIONS)}."
        ),
    )
    parser.add_argument(
        "dump",
        nargs="?",
        type=Path,
        help="minidump to open (default: the bundled sample crash and its symbols)",
    )
    parser.add_argument(
        "--symbols",
        metavar="PATH",
        type=Path,
        action="append",
        default=[],
        help="a symbol folder (name/DEBUGID/name.sym) or a .sym file, for this session only; repeatable",
    )
    parser.add_argument(
        "--settings",
        metavar="FILE",
        type=Path,
        help="read and write settings in this INI file instead of the user's settings",
    )
    parser.add_argument(
        "--screenshot",
        metavar="FILE",
        type=Path,
        help="open the dump, wait for the walk, select the crashing thread's first frame, save a PNG, exit",
    )
    parser.add_argument(
        "--screenshot-size",
        metavar="WxH",
        type=_size,
        default="x".join(map(str, DEFAULT_SCREENSHOT_SIZE)),
        help="window size for --screenshot (default %(default)s; at least 1024x640)",
    )
    parser.add_argument(
        "--color-scheme",
        choices=COLOR_SCHEMES,
        default=None,
        help="follow the system's light or dark appearance, or force one (default: as View › Dark Mode "
        "was last left, else the system's)",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    parser.add_argument("-V", "--version", action="version", version=f"crash-inspector {__version__}")
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", force=True)


def main(argv: Sequence[str] | None = None) -> int:
    options = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    _configure_logging(options.verbose)

    import pyqtgraph
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from inspector.gui.error_reporting import ExceptHook
    from inspector.gui.settings import Settings
    from inspector.gui.theme import apply_color_scheme, wants_dark

    pyqtgraph.setConfigOptions(antialias=True)  # global pyqtgraph options: set here, the composition root
    QApplication.setOrganizationName(ORGANIZATION)
    QApplication.setApplicationName(APPLICATION)
    QApplication.setApplicationDisplayName(DISPLAY_NAME)
    QApplication.setApplicationVersion(__version__)
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    # Wayland compositors match this against the installed desktop file (its icon, its name).
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(QIcon(str(app_icon())))

    interactive = options.screenshot is None
    instance: InstanceServer | None = None
    if interactive:  # a scripted run never joins (or becomes) the running app
        from inspector.gui.single_instance import OpenRequest, claim_or_forward, server_name

        request = OpenRequest.from_arguments(options.dump, options.symbols)
        name = server_name(options.settings)
        instance = claim_or_forward(name, request) if name is not None else None
        if name is not None and instance is None:
            log.info("the running Crash Inspector opened %s", request.dump or "the sample crash")
            return 0

    if options.settings is not None:
        store = QSettings(str(options.settings), QSettings.Format.IniFormat)
    else:
        store = QSettings()
    settings = Settings(store)
    # the command line wins for this run; otherwise the choice View › Dark Mode saved
    color_scheme = options.color_scheme or settings.color_scheme
    if color_scheme != "system":
        scheme = Qt.ColorScheme.Dark if color_scheme == "dark" else Qt.ColorScheme.Light
        app.styleHints().setColorScheme(scheme)  # platforms with a theme follow this themselves
    apply_color_scheme(app, wants_dark(app, color_scheme))

    windows = AppWindows(settings, interactive=interactive, color_scheme=color_scheme)
    window = windows.create(options.dump, options.symbols)
    hook = ExceptHook(windows.present_error if interactive else None).install()
    if instance is not None:
        instance.open_requested.connect(windows.open_request)
    file_opener = _file_open_filter(windows)  # macOS delivers Finder's "open" as an event, not argv
    app.installEventFilter(file_opener)
    try:
        if options.screenshot is not None:
            return _screenshot(
                app,
                window,
                window.session,
                windows.dump_of(options.dump),
                target=options.screenshot,
                size=options.screenshot_size,
            )
        window.show()
        window.open_dump(windows.dump_of(options.dump))
        return app.exec()
    finally:
        app.removeEventFilter(file_opener)
        if instance is not None:
            instance.close()
        windows.shutdown()
        hook.uninstall()


class AppWindows:
    """The app's main windows: one per opened dump request, each with its own session.

    The first window, when started without a dump, shows the bundled sample; a
    dump asked for later (a second launch, a macOS open event) replaces that
    untouched sample instead of opening a second window beside it.
    """

    def __init__(self, settings: Settings, *, interactive: bool, color_scheme: str) -> None:
        self.settings = settings
        self.interactive = interactive
        self.color_scheme = color_scheme
        self.windows: list[MainWindow] = []
        self._sample_window: MainWindow | None = None

    @staticmethod
    def dump_of(dump: Path | None) -> Path:
        return dump if dump is not None else sample_dump()

    def create(self, dump: Path | None, symbols: Sequence[Path]) -> MainWindow:
        """A window (not shown, nothing opened) with `symbols` for this session only."""
        from PySide6.QtCore import Qt

        from inspector.gui.main_window import MainWindow
        from inspector.gui.session import Session

        session_symbols = list(symbols)
        if dump is None:
            session_symbols += [sample_symbols(), sample_binaries()]
        session = Session()
        window = MainWindow(
            session,
            self.settings,
            session_symbol_paths=session_symbols,
            interactive=self.interactive,
            color_scheme=self.color_scheme,
        )
        window.push_symbol_settings()
        if self.windows:  # later windows go away when closed; the first one lives as long as main()
            window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            window.destroyed.connect(lambda _=None, w=window: self._forget(w))
        elif dump is None:
            self._sample_window = window
        self.windows.append(window)
        return window

    def _forget(self, window: MainWindow) -> None:
        if window in self.windows:
            self.windows.remove(window)

    def _untouched_sample_window(self) -> MainWindow | None:
        window = self._sample_window
        if window is None or not window.isVisible() or [w for w in self.windows if w.isVisible()] != [window]:
            return None
        request = window.session.request
        return window if request is None or request.dump_path == sample_dump() else None

    def open_request(self, request: object) -> None:
        """Open a dump another launch (or the platform) asked for, and bring its window to the front."""
        from inspector.gui.single_instance import OpenRequest

        assert isinstance(request, OpenRequest)
        window = self._untouched_sample_window()
        if window is not None and request.dump is not None:
            self._sample_window = None
            window.add_session_symbol_paths(request.symbols)
            window.open_dump(request.dump)
            log.info("opened %s in the sample's window", request.dump)
        elif window is None:
            window = self.create(request.dump, request.symbols)
            window.show()
            window.open_dump(self.dump_of(request.dump))
            log.info("opened %s in a new window", request.dump or "the sample crash")
        window.raise_()
        window.activateWindow()

    def present_error(self, title: str, text: str) -> None:
        """Show an unexpected error on the window the user is looking at."""
        from PySide6.QtWidgets import QApplication

        active = QApplication.activeWindow()
        targets = [w for w in self.windows if w is active] or [w for w in self.windows if w.isVisible()]
        (targets or self.windows)[-1].present_error(title, text)

    def shutdown(self) -> None:
        for window in list(self.windows):
            window.session.shutdown()


def _file_open_filter(windows: AppWindows) -> QObject:
    """An application event filter that opens the files of `QFileOpenEvent`s (macOS Finder, Dock)."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtGui import QFileOpenEvent

    from inspector.gui.single_instance import OpenRequest

    class FileOpenFilter(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent) and event.file():
                windows.open_request(OpenRequest(Path(event.file()), ()))
                return True
            return super().eventFilter(watched, event)

    return FileOpenFilter()


def _screenshot(
    app: QApplication,
    window: MainWindow,
    session: Session,
    dump: Path,
    *,
    target: Path,
    size: tuple[int, int],
) -> int:
    from PySide6.QtCore import QObject, QTimer, Slot

    from inspector.gui.session import FrameRef, LoadFailure

    class Screenshot(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.exit_code = 1
            self.failure: str | None = None
            session.analysis_finished.connect(self.ready)
            session.analysis_cancelled.connect(self.ready)
            session.analysis_failed.connect(self.failed)
            QTimer.singleShot(SCREENSHOT_TIMEOUT_S * 1000, self.timeout)

        @Slot(object)
        def failed(self, failure: object) -> None:
            assert isinstance(failure, LoadFailure)
            self.failure = failure.message
            self.ready()

        @Slot()
        def ready(self) -> None:
            # Let posted layout and paint events run before grabbing.
            QTimer.singleShot(150, self.capture)

        @Slot()
        def capture(self) -> None:
            doc = session.document
            crashing = doc.crashing_thread if doc is not None else None
            if crashing is not None:
                session.select_thread(crashing.index)
                if doc is not None and doc.frames(crashing.index):
                    session.select_frame(FrameRef(crashing.index, 0))
            target.parent.mkdir(parents=True, exist_ok=True)
            saved = window.grab().save(str(target), "PNG")
            if not saved:
                print(f"crash-inspector: cannot write the screenshot {target}", file=sys.stderr)
            elif self.failure is not None:
                print(f"crash-inspector: {self.failure}", file=sys.stderr)
            self.exit_code = 0 if saved and self.failure is None else 1
            app.exit(self.exit_code)

        @Slot()
        def timeout(self) -> None:
            print(f"crash-inspector: no result after {SCREENSHOT_TIMEOUT_S} s", file=sys.stderr)
            app.exit(1)

    shot = Screenshot()
    window.resize(*size)
    window.show()
    window.open_dump(dump)
    code = app.exec()
    window.close()
    return code if code else shot.exit_code
