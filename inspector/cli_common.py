"""What the headless sub-commands (`dump`, `stackwalk`) share: usage errors, the error line, the output.

The contract (README, "Command line"): exit 0 with the report on stdout; 1
with one line on stderr when the input cannot be used, never a traceback,
even for a bug of ours; 2 on a usage error, after argparse's usage line.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from inspector.commands import EXIT_OK, EXIT_UNUSABLE, EXIT_USAGE
from inspector.core.errors import InspectorError
from inspector.core.logs import Logger


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, with the terminal width found without `shutil`.

    argparse builds a formatter for every `add_argument` and, given no width, imports `shutil` (with
    bz2, lzma and fnmatch) to ask for it: a fifth of what a `stackwalk` process imported. The width
    is found as `shutil.get_terminal_size` finds it: `$COLUMNS`, else the terminal of stdout, else 80.
    """

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2  # argparse's own margin
        super().__init__(prog, indent_increment, max_help_position, width)


def _terminal_columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class UsageError(Exception):
    """A combination of options argparse cannot check by itself; reported as argparse reports its own."""


def parse_arguments(
    parser: argparse.ArgumentParser,
    argv: list[str],
    check: Callable[[argparse.Namespace], None] | None = None,
    *,
    intermixed: bool = False,
) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code when there is nothing to run: 0 after --help, 2 on a usage
    error (argparse's, or a `UsageError` raised by `check`). `intermixed`: options may come between
    and after the positional arguments (`DUMP --json SYMBOLS`), as clap allows."""
    try:
        args = parser.parse_intermixed_args(argv) if intermixed else parser.parse_args(argv)
        if check is not None:
            try:
                check(args)
            except UsageError as exc:
                parser.error(str(exc))  # usage line, "prog: error: …", SystemExit(2)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    return args


def _names(message: str, path: str) -> bool:
    """Whether the message already says which file it is about (the reader names it by its base name)."""
    return path in message or os.path.basename(path) in message


def failure_message(
    exc: Exception, *, input_path: str, log: Logger, what: str, name_input: bool = False
) -> str:
    """The one line (without the `crash-inspector: error: ` prefix) for what went wrong making a report:
    an `InspectorError`'s message (with `name_input`, after `input_path` unless it names it already), or an
    internal error named after `input_path` (its traceback goes to `log` at debug level)."""
    if isinstance(exc, InspectorError):
        message = str(exc)
        if name_input and not _names(message, input_path):
            message = f"{input_path}: {message}"
        return message
    # a bug of ours on strange input: still one line, no traceback
    log.debug("%s failed", what, exc_info=exc)
    return f"{input_path}: internal error ({type(exc).__name__}: {exc}); please report it"


def write_stdout(text: str) -> None:
    """Write the report to stdout; a reader that went away (`| head`) is not an error of ours."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass


def print_report(
    make_report: Callable[[], str],
    *,
    input_path: str,
    log: Logger,
    what: str,
    name_input: bool = False,
) -> int:
    """Make the report and write it to stdout; returns the exit code. What goes wrong on the way is one line
    on stderr (`failure_message`), never a traceback."""
    try:
        text = make_report()
    except Exception as exc:
        message = failure_message(exc, input_path=input_path, log=log, what=what, name_input=name_input)
        print(f"crash-inspector: error: {message}", file=sys.stderr)
        return EXIT_UNUSABLE
    write_stdout(text)
    return EXIT_OK
