"""`crash-inspector dump FILE`: print every stream of a minidump (no Qt, no numpy)."""

from __future__ import annotations

import argparse
import logging
import sys

from inspector.core.errors import InspectorError

EXIT_OK = 0
EXIT_UNUSABLE = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors through our exit code instead of raising SystemExit(2) mid-way."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="crash-inspector dump",
        description=(
            "Print every stream of a minidump: header, directory, threads with their CPU contexts, modules, "
            "memory region lists (no hex dumps), exception, system and misc info, Linux /proc copies "
            "verbatim, "
            "then what rust-minidump does not show: unknown streams, salvaged damaged streams and a list of "
            "problems. The first part matches `minidump-stackwalk --dump --brief`."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the minidump (.dmp) to print")
    parser.add_argument(
        "--no-additions",
        action="store_true",
        help="print only the part that matches minidump-stackwalk --dump --brief",
    )
    return parser


def run(argv: list[str]) -> int:
    """Run the sub-command; returns the process exit code (never raises for bad input)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE

    from inspector.core.minidump import Minidump
    from inspector.core.report.dump_text import render_dump

    try:
        with Minidump.open(args.file) as dump:
            text = render_dump(dump, additions=not args.no_additions)
    except InspectorError as exc:
        print(f"crash-inspector: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except Exception as exc:  # a bug of ours on strange input: still one line, no traceback
        logging.getLogger(__name__).debug("dump failed", exc_info=True)
        print(
            f"crash-inspector: error: {args.file}: internal error ({type(exc).__name__}: {exc}); "
            "please report it",
            file=sys.stderr,
        )
        return EXIT_UNUSABLE
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head` closed the pipe: not an error of ours
        return EXIT_OK
    return EXIT_OK
