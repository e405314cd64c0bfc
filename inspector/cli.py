"""Command line: the GUI by default, headless engine commands as sub-commands.

`python -m inspector [FILE]` starts the GUI; `python -m inspector stackwalk …`
and `python -m inspector dump …` run the engine without importing Qt, so
scripts and CI never pay for (or need) a display stack.
`--install-desktop` / `--uninstall-desktop` set up (or remove) the desktop
integration for the current user, also without starting the GUI.
"""

from __future__ import annotations

import atexit
import gc
import sys
from collections.abc import Callable, Sequence

from inspector.commands import DESKTOP_OPTIONS, EXIT_OK, EXIT_UNUSABLE, EXIT_USAGE, SUBCOMMANDS
from inspector.core import logs

__all__ = ["DESKTOP_OPTIONS", "EXIT_OK", "EXIT_UNUSABLE", "EXIT_USAGE", "SUBCOMMANDS", "main", "run_program"]


def _load(name: str) -> Callable[[list[str]], int]:
    import importlib

    module, function = SUBCOMMANDS[name]
    runner: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
    return runner


def _basic_config() -> None:
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")


#: Sub-commands that read one dump, print a report and exit (see `_short_lived_process`).
ONE_DUMP_COMMANDS = ("dump", "stackwalk")


def _short_lived_process() -> None:
    """Turn the cycle collector off for a process that reads one dump and exits.

    Nearly everything such a process builds lives until it exits: modules, classes, the dump's
    streams, the walked state. The collector's passes (about 30 on the bundled sample, most while
    importing the engine) examine those objects again and again and free nothing, and at exit the
    interpreter runs it over all of them once more: together 10 % of a `stackwalk --json` process's
    instructions. Freezing the heap at exit (`gc.freeze`, run by `atexit` before the interpreter's
    own last collections) leaves those to free nothing but the frozen objects' reference counts;
    our files are closed explicitly, never by a collection at exit. Only for the program itself,
    never when `main` is called in-process (the tests, a host application)."""
    gc.disable()
    atexit.register(gc.freeze)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv`; None is the program's own (`python -m inspector`, the console
    script `crash-inspector`), and only then is the process tuned as its own (`run_program`)."""
    if argv is None:
        return run_program(sys.argv[1:])
    return _dispatch(list(argv), program=False)


def run_program(args: list[str]) -> int:
    """`main` for the process's own command line (also the `inspector-stackwalk` console script)."""
    return _dispatch(args, program=True)


def _dispatch(args: list[str], *, program: bool) -> int:
    if args and args[0] in SUBCOMMANDS:
        logs.when_imported(_basic_config)  # most headless runs log nothing: `logging` stays unimported
        if program and args[0] in ONE_DUMP_COMMANDS:
            _short_lived_process()
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
