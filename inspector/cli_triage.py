"""`crash-inspector triage DUMP_OR_FOLDER ...`: signatures of many dumps, grouped, in parallel (no Qt).

Folders are searched recursively for dumps by content. Each dump is walked and given
Socorro's signature (`inspector.core.triage`); dumps are grouped by signature, biggest
group first. Outputs: `--json OUT` (the documented shape), `--csv OUT`, `--html OUT`
(any of them, `-` for stdout), else a summary of the groups on stdout. Work runs in
`--workers N` processes (default: the CPU count) or on a Dask cluster (`--scheduler
tcp://HOST:PORT`, optional extra `cluster`). Progress goes to stderr (a bar on a
terminal). Ctrl+C stops and writes what is done (exit status 130).

Exit status: 0 when the dumps were triaged (those that cannot be read are reported in
the outputs, not errors); 1 when no input holds a readable dump (the outputs are still
written), an output cannot be written or the cluster cannot be used; 2 on a usage error;
130 after Ctrl+C.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from inspector.cli_common import UsageError, parse_arguments
from inspector.commands import EXIT_OK, EXIT_UNUSABLE
from inspector.core import logs

if TYPE_CHECKING:
    from inspector.core.triage import CrashSet

log = logs.get_logger(__name__)

EXIT_INTERRUPTED = 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crash-inspector triage",
        description=(
            "Walk many minidumps, give each Socorro's crash signature (siggen) and group them by "
            "signature, biggest group first. Folders are searched recursively for dumps by content."
        ),
    )
    parser.add_argument("--json", metavar="OUT", help="write the crashes and groups as JSON (- for stdout)")
    parser.add_argument("--csv", metavar="OUT", help="write one CSV row per dump (- for stdout)")
    parser.add_argument("--html", metavar="OUT", help="write a self-contained HTML report")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        metavar="N",
        type=int,
        help="worker processes on this machine (default: the CPU count; 1: in this process)",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on an existing dask.distributed cluster, e.g. tcp://10.0.0.5:8786 "
        "(needs the 'cluster' extra; the dumps and symbol paths must be at the same paths on every worker)",
    )
    parser.add_argument(
        "--symbols",
        metavar="PATH",
        action="append",
        default=[],
        help="a symbol folder (name/DEBUGID/name.sym) or a .sym file (repeatable)",
    )
    parser.add_argument(
        "--symbols-url",
        metavar="URL",
        action="append",
        default=[],
        help="a symbol server, tried after the symbol paths (repeatable); tokens are read from "
        "CRASH_INSPECTOR_TOKEN_<HOST>[_<PORT>] where the dumps are walked",
    )
    parser.add_argument(
        "--symbols-cache",
        metavar="DIR",
        help="cache folder: symbol indexes in DIR/index, downloads in DIR/symbols (default: the user cache)",
    )
    parser.add_argument("--verbose", action="store_true", help="log what happens")
    parser.add_argument("inputs", metavar="DUMP_OR_FOLDER", nargs="+", help="minidumps, or folders to search")
    return parser


def _check_symbol_urls(urls: list[str]) -> None:
    """Raise `UsageError` for a `--symbols-url` that cannot be used (the HTTP code loads only when given)."""
    if not urls:
        return
    from inspector.core.symbols.http_fetch import url_problem

    for url in urls:
        problem = url_problem(url)
        if problem is not None:
            raise UsageError(f"--symbols-url {url}: {problem}")


def _check(args: argparse.Namespace) -> None:
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.html == "-":
        raise UsageError("--html needs a file name")
    if [args.json, args.csv].count("-") > 1:
        raise UsageError("only one output can go to stdout (-)")
    _check_symbol_urls(args.symbols_url)


class _Progress:
    """Dumps done on stderr: a bar redrawn in place on a terminal, else a line every tenth."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.bar = stream.isatty()
        self.started = time.monotonic()
        self.shown = -1.0
        self.next_tenth = 1

    def update(self, done: int, groups: int) -> None:
        elapsed = time.monotonic() - self.started
        text = f"{done}/{self.total} dumps, {groups} signatures, {elapsed:.1f} s"
        if self.bar:
            if elapsed - self.shown < 0.1 and done < self.total:
                return
            self.shown = elapsed
            filled = 30 * done // max(1, self.total)
            self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {text}\x1b[K")
        elif self.total and done * 10 >= self.next_tenth * self.total:
            self.next_tenth = done * 10 // self.total + 1
            self.stream.write(f"triage: {text}\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.bar:
            self.stream.write("\n")
            self.stream.flush()


def _debug_logging() -> None:
    import logging

    logging.getLogger().setLevel(logging.DEBUG)


def run(argv: list[str]) -> int:
    """Run the sub-command; returns the exit status (bad dumps are reported, never raised)."""
    args = parse_arguments(_parser(), argv, _check)
    if isinstance(args, int):
        return args
    if args.verbose:
        logs.set_threshold(logs.DEBUG)
        logs.when_imported(_debug_logging)
    from inspector.core.triage import ClusterUnavailable, CrashSet, TriageOptions, find_dumps, run_batch

    # Absolute paths: workers elsewhere (Dask) run in another folder.
    options = TriageOptions.with_cache_root(
        [os.path.abspath(p) for p in args.symbols],
        cache_root=None if args.symbols_cache is None else os.path.abspath(args.symbols_cache),
        symbol_urls=args.symbols_url,
    )
    found = list(find_dumps(args.inputs))
    if not found:
        print("crash-inspector: error: no minidumps found in the inputs", file=sys.stderr)
        return EXIT_UNUSABLE
    crashes = CrashSet(len(found))
    progress = _Progress(len(found), sys.stderr)
    groups: set[str] = set()
    interrupted = False
    try:
        for index, crash in run_batch(found, options, workers=args.workers, scheduler=args.scheduler):
            crashes.add(index, crash)
            groups.add(crash.signature)
            progress.update(crashes.done, len(groups))
    except ClusterUnavailable as exc:
        progress.finish()
        print(f"crash-inspector: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        interrupted = True
    progress.finish()
    written = _write_outputs(args, crashes)
    unreadable = sum(1 for crash in crashes if not crash.readable)
    summary = f"{crashes.done} of {len(found)} dumps triaged, {len(groups)} signatures"
    if unreadable:
        summary += f", {unreadable} could not be read"
    if interrupted:
        print(f"crash-inspector: interrupted: {summary}; the outputs hold those", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"triage: {summary}", file=sys.stderr)
    if unreadable == crashes.done:
        print("crash-inspector: error: none of the inputs is a readable minidump", file=sys.stderr)
        return EXIT_UNUSABLE
    return EXIT_OK if written else EXIT_UNUSABLE


def _write_outputs(args: argparse.Namespace, crashes: CrashSet) -> bool:
    """Write every requested output (the groups on stdout when none is); False if one could not be."""
    from inspector.core.report.triage_report import (
        render_triage_csv,
        render_triage_html,
        render_triage_json,
    )

    outputs: list[tuple[str, Callable[[CrashSet], str]]] = []
    if args.json:
        outputs.append((args.json, render_triage_json))
    if args.csv:
        outputs.append((args.csv, render_triage_csv))
    if args.html:
        outputs.append((args.html, render_triage_html))
    if not outputs:
        outputs.append(("-", _render_summary))
    ok = True
    for path, render in outputs:
        text = render(crashes)
        try:
            if path == "-":
                sys.stdout.write(text)
                sys.stdout.flush()
            else:
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
        except BrokenPipeError:
            pass
        except OSError as exc:
            print(f"crash-inspector: error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            ok = False
    return ok


def _render_summary(crashes: CrashSet) -> str:
    """The groups for people: count, signature, then the first crash's top frames."""
    lines = []
    for group in crashes.groups():
        lines.append(f"{group.count:6}  {group.signature}")
        lines.extend(f"          {frame}" for frame in group.top_frames[:3])
        if group.modules_missing_symbols:
            lines.append(f"          (no symbols: {', '.join(group.modules_missing_symbols)})")
    return "\n".join(lines) + "\n"
