"""Command line: the GUI by default, headless engine commands as sub-commands.

`python -m inspector [FILE]` starts the GUI; `python -m inspector stackwalk …`
and `python -m inspector dump …` run the engine without importing Qt, so
scripts and CI never pay for (or need) a display stack.
`--install-desktop` / `--uninstall-desktop` set up (or remove) the desktop
integration for the current user, also without starting the GUI.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from inspector.commands import DESKTOP_OPTIONS, EXIT_OK, EXIT_UNUSABLE, EXIT_USAGE, SUBCOMMANDS
from inspector.core import logs

__all__ = ["DESKTOP_OPTIONS", "EXIT_OK", "EXIT_UNUSABLE", "EXIT_USAGE", "SUBCOMMANDS", "main"]


def _load(name: str) -> Callable[[list[str]], int]:
    import importlib

    module, function = SUBCOMMANDS[name]
    runner: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
    return runner


def _basic_config() -> None:
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in SUBCOMMANDS:
        logs.when_imported(_basic_config)  # most headless runs log nothing: `logging` stays unimported
        try:
            return _load(args[0])(args[1:])
        except KeyboardInterrupt:
            return 130
    _basic_config()  # the window and the desktop set-up import logging anyway
    if args[:1] and args[0] in DESKTOP_OPTIONS:
        from inspector import desktop_install

        return desktop_install.run(args)
    # --help and --version are the GUI parser's (app.build_parser): they exit before Qt is imported
    from inspector import app

    return app.main(args)
