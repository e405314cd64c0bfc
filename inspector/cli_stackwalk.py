"""`crash-inspector stackwalk DUMP [SYMBOL_PATH ...]`: walk every thread and print a report (no Qt).

Formats: `--human` (default; rust-minidump's `--human`, `--brief` for the summary and the
crashing thread), `--json` (rust-minidump's JSON, `--pretty` to indent), `--machine`
(Breakpad's `-f machine` pipe format). `--trace` adds, under each frame of the human report,
how it was found. Exit status: 0 on success, 1 with one line on stderr when the dump cannot
be used, 2 on a usage error.

DUMP may also be a log holding Breakpad microdumps (decided by content): the first is walked,
`--microdump-index N` picks another, and by default with Breakpad's policy, since Breakpad's
`microdump_stackwalk` is the only reference for them.

Symbol servers (`--symbols-url`, repeatable) are asked for what the symbol paths lack; files
are kept under `--symbols-cache DIR`/symbols (indexes under DIR/index); the bearer token of a
server comes from `CRASH_INSPECTOR_TOKEN_<HOST>[_<PORT>]`. The HTTP client is imported only
when a server is configured.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.cli_common import UsageError, parse_arguments, print_report

if TYPE_CHECKING:
    from inspector.core.symbols import SymbolServerOptions

log = logging.getLogger(__name__)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crash-inspector stackwalk",
        description=(
            "Walk the stacks of every thread of a minidump with Breakpad .sym symbols and print a report: "
            "the frames are rust-minidump's (minidump-stackwalk 0.25); --policy breakpad adds Breakpad's "
            "extra unwinding heuristics."
        ),
    )
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument(
        "--human", dest="format", action="store_const", const="human", help="human report (default)"
    )
    fmt.add_argument("--json", dest="format", action="store_const", const="json", help="rust-minidump JSON")
    fmt.add_argument(
        "--machine",
        dest="format",
        action="store_const",
        const="machine",
        help="Breakpad's pipe-delimited format",
    )
    parser.set_defaults(format="human")
    parser.add_argument("--pretty", action="store_true", help="indent the JSON (with --json)")
    parser.add_argument("--brief", action="store_true", help="human report: summary and crashing thread only")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="human report: show how each frame was found (strategies, rules, words)",
    )
    parser.add_argument(
        "--symbols-cache",
        metavar="DIR",
        help="cache folder: symbol indexes in DIR/index, downloaded symbols in DIR/symbols "
        "(default: the user cache folder)",
    )
    parser.add_argument(
        "--no-symbols-cache",
        action="store_true",
        help="keep nothing: no symbol indexes, downloads only in a temporary folder for this run",
    )
    parser.add_argument(
        "--symbols-url",
        metavar="URL",
        action="append",
        default=[],
        help="a symbol server (BASE/<debug file>/<DEBUG ID>/<name>.sym), tried in order after the symbol "
        "paths (repeatable); its bearer token is read from CRASH_INSPECTOR_TOKEN_<HOST>[_<PORT>]",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="download nothing; use only symbols already in the download cache",
    )
    parser.add_argument(
        "--symbols-download-timeout",
        metavar="SECONDS",
        type=float,
        default=1000.0,
        help="the longest one symbol download may take, retries included (default: 1000)",
    )
    parser.add_argument(
        "--symbols-max-download",
        metavar="MB",
        type=float,
        default=2048.0,
        help="refuse symbol files larger than this many megabytes (default: 2048)",
    )
    parser.add_argument(
        "--symbols-path",
        metavar="PATH",
        action="append",
        default=[],
        help="a symbol directory or .sym file (repeatable; same as a positional SYMBOL_PATH)",
    )
    parser.add_argument(
        "--policy",
        choices=("rust-minidump", "breakpad"),
        default=None,
        help="unwinding rules where the two reference stackwalkers disagree (default: rust-minidump for "
        "minidumps, breakpad for microdumps, which only Breakpad reads)",
    )
    parser.add_argument(
        "--microdump-index",
        type=int,
        metavar="N",
        default=None,
        help="a log holding several microdumps: walk microdump N (0 is the first; by default the "
        "first that is not empty; the problems list names the others)",
    )
    parser.add_argument(
        "--analysis-all-cpus",
        action="store_true",
        help="JSON: also fill the crash analysis fields (instruction, memory_accesses, ...) for x86, "
        "ARM and ARM64 crashes, which rust-minidump 0.25 analyses only on amd64 "
        "(the human report shows them always)",
    )
    parser.add_argument("--max-frames", type=int, metavar="N", help="stop each thread after N frames")
    parser.add_argument(
        "--verbose", action="store_true", help="log what happens (and tracebacks of internal errors)"
    )
    parser.add_argument(
        "dump", metavar="DUMP", help="the minidump (.dmp), or a log holding a Breakpad microdump"
    )
    parser.add_argument(
        "symbol_paths", metavar="SYMBOL_PATH", nargs="*", help="symbol directories or .sym files"
    )
    return parser


def _check(args: argparse.Namespace) -> None:
    if args.pretty and args.format != "json":
        raise UsageError("--pretty needs --json")
    if args.brief and args.format != "human":
        raise UsageError("--brief is for the human report")
    if args.trace and args.format != "human":
        raise UsageError("--trace is for the human report")
    if args.symbols_cache and args.no_symbols_cache:
        raise UsageError("--symbols-cache and --no-symbols-cache contradict each other")
    if args.microdump_index is not None and args.microdump_index < 0:
        raise UsageError("--microdump-index must be 0 or more")
    if args.max_frames is not None and args.max_frames < 1:
        raise UsageError("--max-frames must be at least 1")
    if not args.symbols_download_timeout > 0:
        raise UsageError("--symbols-download-timeout must be more than 0 seconds")
    if not args.symbols_max_download > 0:
        raise UsageError("--symbols-max-download must be more than 0 MB")
    from inspector.core.symbols.http_fetch import url_problem

    for url in args.symbols_url:
        problem = url_problem(url)
        if problem is not None:
            raise UsageError(f"--symbols-url {url}: {problem}")


def run(argv: list[str]) -> int:
    """Run the sub-command; returns the process exit code (never raises for bad input)."""
    args = parse_arguments(_parser(), argv, _check)
    if isinstance(args, int):
        return args
    if args.verbose:
        logging.getLogger().setLevel(logging.DEBUG)
    # the walk's own errors ("nothing in the dump can be reported") do not name the dump
    return print_report(
        lambda: _report(args), input_path=args.dump, log=log, what="stackwalk", name_input=True
    )


def _servers(args: argparse.Namespace, cache: Path | None) -> SymbolServerOptions | None:
    """The symbol-server options, or None when neither a server nor `--offline` is given."""
    if not args.symbols_url and not args.offline:
        return None
    from inspector.core.symbols import (
        FetchPolicy,
        SymbolServer,
        SymbolServerOptions,
        default_download_directory,
        token_from_environment,
    )

    if args.no_symbols_cache:
        downloads = None  # a temporary folder, removed after the run
    elif cache is not None:
        downloads = cache / "symbols"
    else:
        downloads = default_download_directory()
    return SymbolServerOptions(
        servers=tuple(SymbolServer(url, token_from_environment(url, os.environ)) for url in args.symbols_url),
        cache_dir=downloads,
        offline=args.offline,
        fetch=FetchPolicy(
            total_timeout=args.symbols_download_timeout,
            max_bytes=int(args.symbols_max_download * 1024 * 1024),
        ),
    )


def _report(args: argparse.Namespace) -> str:
    from inspector.core.dumpfile import open_any_dump
    from inspector.core.process import ProcessOptions, process
    from inspector.core.unwind import WalkOptions, WalkPolicy

    # an explicit --policy applies to microdumps too; without it each format gets its reference's
    policy = WalkPolicy.RUST_MINIDUMP if args.policy is None else WalkPolicy(args.policy)
    walk = WalkOptions(policy=policy, max_frames=args.max_frames)
    cache = Path(args.symbols_cache) if args.symbols_cache else None
    options = ProcessOptions(
        symbol_paths=(*args.symbol_paths, *args.symbols_path),
        symbols_cache=None if cache is None else cache / "index",
        use_symbols_cache=not args.no_symbols_cache,
        walk=walk,
        symbol_servers=_servers(args, cache),
        microdump_policy=WalkPolicy.BREAKPAD if args.policy is None else None,
    )
    with open_any_dump(args.dump, microdump_index=args.microdump_index) as dump:
        state = process(dump, options)
    if args.format == "json":
        from inspector.core.report.json_report import render_json

        return render_json(state, pretty=args.pretty, analysis_all_cpus=args.analysis_all_cpus) + "\n"
    if args.format == "machine":
        from inspector.core.report.machine import render_machine

        return render_machine(state)
    from inspector.core.report.human import render_human

    return render_human(state, brief=args.brief, trace=args.trace)
