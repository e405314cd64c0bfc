"""GUI composition root: arguments, QApplication, settings, the main window."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from inspector import __version__
from inspector.resources import sample_dump


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="crash-inspector",
        description="Open a minidump and its Breakpad symbols in the Crash Inspector window.",
    )
    parser.add_argument("dump", nargs="?", type=Path, help="minidump to open (default: the bundled sample)")
    parser.add_argument("--version", action="version", version=f"crash-inspector {__version__}")
    return parser.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    options = _parse(sys.argv[1:] if argv is None else argv)
    from PySide6.QtWidgets import QApplication

    from inspector.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("Crash Inspector")
    app.setOrganizationName("crash-inspector")
    window = MainWindow()
    window.open_dump(options.dump or sample_dump())
    window.show()
    return app.exec()
