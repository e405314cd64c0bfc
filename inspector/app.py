"""GUI composition root: arguments, logging, QApplication, settings, session, main window.

`python -m inspector [DUMP] [--symbols PATH]… [--settings FILE] [--screenshot FILE]`.
Without a dump the bundled sample crash opens with its symbols. Qt is
imported only inside `main`, so `--help` and the headless commands never
load it.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from inspector import __version__
from inspector.resources import sample_dump, sample_symbols

#: the --color-scheme choices (also in inspector.gui.theme, which imports Qt)
COLOR_SCHEMES = ("system", "light", "dark")

if TYPE_CHECKING:  # Qt is imported only when the GUI starts
    from PySide6.QtWidgets import QApplication

    from inspector.gui.main_window import MainWindow
    from inspector.gui.session import Session

log = logging.getLogger(__name__)

ORGANIZATION = "crash-inspector"
APPLICATION = "crash-inspector"
DISPLAY_NAME = "Crash Inspector"
MIN_SCREENSHOT_SIZE = (1280, 800)
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
    parser = argparse.ArgumentParser(
        prog="crash-inspector",
        description="Open a minidump and its Breakpad symbols in the Crash Inspector window.",
        epilog="Headless commands: `crash-inspector dump FILE` (see `crash-inspector dump --help`).",
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
        help="window size for --screenshot (default %(default)s; at least 1280x800)",
    )
    parser.add_argument(
        "--color-scheme",
        choices=COLOR_SCHEMES,
        default="system",
        help="follow the system's light or dark appearance (default), or force one",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    parser.add_argument("--version", action="version", version=f"crash-inspector {__version__}")
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", force=True)


def main(argv: Sequence[str] | None = None) -> int:
    options = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    _configure_logging(options.verbose)

    import pyqtgraph
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtWidgets import QApplication

    from inspector.gui.error_reporting import ExceptHook
    from inspector.gui.main_window import MainWindow
    from inspector.gui.session import Session
    from inspector.gui.settings import Settings
    from inspector.gui.theme import apply_color_scheme, wants_dark

    pyqtgraph.setConfigOptions(antialias=True)  # global pyqtgraph options: set here, the composition root
    QApplication.setOrganizationName(ORGANIZATION)
    QApplication.setApplicationName(APPLICATION)
    QApplication.setApplicationDisplayName(DISPLAY_NAME)
    QApplication.setApplicationVersion(__version__)
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setDesktopFileName(APPLICATION)
    if options.color_scheme != "system":
        scheme = Qt.ColorScheme.Dark if options.color_scheme == "dark" else Qt.ColorScheme.Light
        app.styleHints().setColorScheme(scheme)  # platforms with a theme follow this themselves
    apply_color_scheme(app, wants_dark(app, options.color_scheme))

    if options.settings is not None:
        store = QSettings(str(options.settings), QSettings.Format.IniFormat)
    else:
        store = QSettings()
    settings = Settings(store)

    dump: Path = options.dump if options.dump is not None else sample_dump()
    session_symbols = list(options.symbols)
    if options.dump is None:
        session_symbols.append(sample_symbols())

    session = Session(
        cache_dir=settings.effective_cache_dir(), symbol_servers=settings.symbol_server_options()
    )
    window = MainWindow(
        session,
        settings,
        session_symbol_paths=session_symbols,
        interactive=options.screenshot is None,
        color_scheme=options.color_scheme,
    )
    session.set_symbol_paths(window.effective_symbol_paths(), reanalyze=False)
    hook = ExceptHook(window.present_error if options.screenshot is None else None).install()
    try:
        if options.screenshot is not None:
            return _screenshot(
                app, window, session, dump, target=options.screenshot, size=options.screenshot_size
            )
        window.show()
        window.open_dump(dump)
        return app.exec()
    finally:
        session.shutdown()
        hook.uninstall()


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
            crashing = doc.snapshot.crashing_thread if doc is not None else None
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
