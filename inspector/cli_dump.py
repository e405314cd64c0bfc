"""`crash-inspector dump FILE`: print every stream of a minidump, or every record of a microdump (no Qt)."""

from __future__ import annotations

import argparse

from inspector.cli_common import HelpFormatter, parse_arguments, print_report
from inspector.core.logs import get_logger

log = get_logger(__name__)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crash-inspector dump",
        formatter_class=HelpFormatter,
        description=(
            "Print every stream of a minidump: header, directory, threads with their CPU contexts, modules, "
            "memory region lists (no hex dumps), exception, system and misc info, Linux /proc copies "
            "verbatim, "
            "then what rust-minidump does not show: unknown streams, salvaged damaged streams and a list of "
            "problems. The first part matches `minidump-stackwalk --dump --brief`. For a microdump: each "
            "of its records as read (product, OS, crash, GPU, stack regions, CPU context, modules) and its "
            "problems."
        ),
    )
    parser.add_argument(
        "file", metavar="FILE", help="the minidump (.dmp) to print, or a log holding a Breakpad microdump"
    )
    parser.add_argument(
        "--microdump-index",
        type=int,
        metavar="N",
        default=None,
        help="a log holding several microdumps: print microdump N (0 is the first; by default the "
        "first that is not empty)",
    )
    parser.add_argument(
        "--no-additions",
        action="store_true",
        help="print only the part that matches minidump-stackwalk --dump --brief",
    )
    return parser


def run(argv: list[str]) -> int:
    """Run the sub-command; returns the process exit code (never raises for bad input)."""
    args = parse_arguments(_parser(), argv)
    if isinstance(args, int):
        return args

    def report() -> str:
        return dump_report(args.file, microdump_index=args.microdump_index, additions=not args.no_additions)

    # open_any_dump's errors name the file as it resolved the path
    return print_report(report, input_path=args.file, log=log, what="dump")


def dump_report(
    path: str, *, microdump_index: int | None = None, additions: bool = True, brief: bool = True
) -> str:
    """The report of a minidump (`brief=False`: with the hex dumps of `minidump-stackwalk --dump`), or
    the records of a microdump; `open_any_dump`'s errors are raised."""
    from inspector.core.dumpfile import as_microdump, open_any_dump
    from inspector.core.report.dump_text import render_dump

    with open_any_dump(path, microdump_index=microdump_index) as dump:
        microdump = as_microdump(dump)
        if microdump is not None:
            from inspector.core.report.microdump_text import render_microdump

            return render_microdump(microdump)
        return render_dump(dump, additions=additions, brief=brief)
