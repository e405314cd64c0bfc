"""Command line: the GUI by default, headless engine commands as sub-commands.

`python -m inspector [FILE]` starts the GUI; `python -m inspector stackwalk …`
and `python -m inspector dump …` run the engine without importing Qt, so
scripts and CI never pay for (or need) a display stack.
`--install-desktop` / `--uninstall-desktop` set up (or remove) the desktop
integration for the current user, also without starting the GUI.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence

from inspector import __version__

#: Sub-command name -> (module, function taking the remaining argv and returning an exit code).
#: Imported lazily so each command only loads what it uses.
_SUBCOMMANDS: dict[str, tuple[str, str]] = {"dump": ("inspector.cli_dump", "run")}
_SUBCOMMANDS["stackwalk"] = ("inspector.cli_stackwalk", "run")

#: Options that do their job and exit instead of starting the GUI.
_DESKTOP_OPTIONS = ("--install-desktop", "--uninstall-desktop")

EXIT_OK = 0
EXIT_UNUSABLE = 1
EXIT_USAGE = 2


def _load(name: str) -> Callable[[list[str]], int]:
    import importlib

    module, function = _SUBCOMMANDS[name]
    runner: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
    return runner


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args and args[0] in _SUBCOMMANDS:
        try:
            return _load(args[0])(args[1:])
        except KeyboardInterrupt:
            return 130
    if args[:1] in (["--version"], ["-V"]):
        print(f"crash-inspector {__version__}")
        return EXIT_OK
    if args[:1] and args[0] in _DESKTOP_OPTIONS:
        from inspector import desktop_install

        return desktop_install.run(args)
    if args[:1] in (["-h"], ["--help"]):
        _print_help()
        return EXIT_OK
    from inspector import app  # Qt is imported only on this path

    return app.main(args)


def _print_help() -> None:
    from inspector.app import build_parser  # no Qt at import time

    parser = build_parser()
    parser.epilog = (
        "Headless sub-commands (no Qt): "
        + (", ".join(sorted(_SUBCOMMANDS)) or "(none yet)")
        + ("; run `crash-inspector COMMAND --help` for each. ")
        + "Desktop integration for this user (menu entry, .dmp file type, default handler): "
        + " or ".join(_DESKTOP_OPTIONS)
        + "."
    )
    parser.print_help()
