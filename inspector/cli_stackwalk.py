"""`crash-inspector stackwalk DUMP [SYMBOL_PATH ...]`: walk every thread and print a report (no Qt).

A drop-in for rust-minidump's `minidump-stackwalk` 0.25: every option of its `--help`
is accepted with the same spelling, default and meaning (`REFERENCE_OPTIONS`; the
README's "Using it in place of minidump-stackwalk" has the table), and the exit codes
are its: 0 on success, 1 when the dump cannot be used, when `--pretty` / `--brief` do
not fit the output, or when an output or log file cannot be written, 2 on a usage
error (an unknown option, a bad value, two output formats). The console script
`inspector-stackwalk` is this command (`main`).

Formats: `--human` (default; `--brief` for the summary and the crashing thread),
`--json` (`--pretty` to indent), `--cyborg PATH` (JSON to PATH, human report to the
output), `--dump` (our `dump` report; hex dumps unless `--brief`), and ours: `--machine`
(Breakpad's `-f machine` pipe format), `--html` (a self-contained page for people; the
window's File › Export Report writes the same) and `--trace` (under each frame of the human
report, how it was found).

MINIDUMP may also be a log holding Breakpad microdumps (decided by content): the first is
walked, `--microdump-index N` picks another, and by default with Breakpad's policy, since
Breakpad's `microdump_stackwalk` is the only reference for them.

Symbol servers (`--symbols-url`, repeatable) are asked for what the symbol paths lack; files
are kept under `--symbols-cache DIR`/symbols (indexes under DIR/index); the bearer token of a
server comes from `CRASH_INSPECTOR_TOKEN_<HOST>[_<PORT>]`. The HTTP client is imported only
when a server is configured.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator

from inspector import __version__
from inspector.cli_common import HelpFormatter, UsageError, failure_message, parse_arguments, write_stdout
from inspector.commands import EXIT_OK, EXIT_UNUSABLE
from inspector.core import logs
from inspector.core.record import replace

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from typing import IO, Any

    from inspector.core.minidump import Minidump
    from inspector.core.process import ProcessState
    from inspector.core.symbols import SymbolServerOptions

log = logs.get_logger(__name__)

#: The reference whose command line this one takes.
REFERENCE = "minidump-stackwalk 0.25.0"

#: `--features`: rust-minidump's three levels of analysis. stable-all is stable-basic (as in the
#: reference); unstable-all adds rust-minidump's unwinding changes made after 0.25.0 (`WalkOptions`).
FEATURES = ("stable-basic", "stable-all", "unstable-all")

#: `--verbose LEVEL` -> the logging level (rust-minidump's tracing levels; `off` logs nothing).
VERBOSITY = {
    "off": logs.CRITICAL + 10,
    "error": logs.ERROR,
    "warn": logs.WARNING,
    "info": logs.INFO,
    "debug": logs.DEBUG,
    "trace": logs.DEBUG - 5,
}


def _timeout_secs(text: str) -> float:
    """`--symbols-download-timeout-secs`: an unsigned whole number of seconds, as clap's u64 parser
    (0 is allowed: every download then times out at once)."""
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: a whole number of seconds")
    return float(int(text))


def _seconds(text: str) -> float:
    """`--symbols-download-timeout`: more than 0 seconds, fractions allowed."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("it must be more than 0 seconds")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crash-inspector stackwalk",
        usage="%(prog)s [OPTIONS] MINIDUMP [SYMBOLS_PATH ...]",
        formatter_class=HelpFormatter,
        allow_abbrev=False,  # clap takes no abbreviations: `--pre` is an error there, so it is one here
        description=(
            "Walk the stacks of every thread of a minidump with Breakpad .sym symbols and print a report: "
            f"the frames are rust-minidump's ({REFERENCE}), and every option of its minidump-stackwalk is "
            "accepted with the same meaning; --policy breakpad adds Breakpad's extra unwinding heuristics."
        ),
    )
    parser.add_argument("-V", "--version", action=_Version, nargs=0, help="print the version and exit")
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument(
        "--human", dest="format", action="store_const", const="human", help="human report (default)"
    )
    fmt.add_argument("--json", dest="format", action="store_const", const="json", help="rust-minidump JSON")
    fmt.add_argument(
        "--cyborg",
        metavar="PATH",
        help="both: the JSON report to PATH, the human report to the output (stdout or --output-file)",
    )
    fmt.add_argument(
        "--dump",
        dest="format",
        action="store_const",
        const="dump",
        help="every stream of the dump (our `dump` report; memory hex dumps unless --brief)",
    )
    fmt.add_argument(
        "--machine",
        dest="format",
        action="store_const",
        const="machine",
        help="Breakpad's pipe-delimited format",
    )
    fmt.add_argument(
        "--html",
        dest="format",
        action="store_const",
        const="html",
        help="a self-contained HTML report (every thread, modules, problems; no external assets)",
    )
    parser.set_defaults(format="human")
    parser.add_argument("--pretty", action="store_true", help="indent the JSON (--json, --cyborg)")
    parser.add_argument(
        "--brief",
        action="store_true",
        help="human report: summary and crashing thread only; --dump: no memory hex dumps",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="human report: show how each frame was found (strategies, rules, words)",
    )
    parser.add_argument(
        "--features",
        choices=FEATURES,
        default="stable-basic",
        help="how much analysis: stable-basic (default) and stable-all are rust-minidump 0.25.0's walk; "
        "unstable-all also turns on rust-minidump's later unwinding changes",
    )
    parser.add_argument(
        "--recover-function-args",
        action="store_true",
        help="human report: guess the arguments of x86 functions whose symbol names list their parameters",
    )
    parser.add_argument(
        "--evil-json",
        metavar="PATH",
        help="Mozilla's side-channel JSON: certificate subjects of modules (ModuleSignatureInfo) and the CPU "
        "microcode version",
    )
    parser.add_argument(
        "--use-local-debuginfo",
        action="store_true",
        help="accepted for compatibility: the modules' own files on this machine are used by default "
        "(--no-local-modules turns that off)",
    )
    out = parser.add_argument_group("output and logging")
    out.add_argument("--output-file", metavar="PATH", help="write the report to PATH instead of stdout")
    out.add_argument(
        "--log-file", metavar="PATH", help="write log messages and errors to PATH instead of stderr"
    )
    out.add_argument(
        "--verbose",
        metavar="LEVEL",
        choices=tuple(VERBOSITY),
        default="error",
        help="what to log: off, error (default), warn, info, debug (with tracebacks of internal errors), "
        "trace",
    )
    out.add_argument("--no-color", action="store_true", help="accepted: nothing is coloured anyway")
    out.add_argument("--no-interactive", action="store_true", help="accepted: no progress is shown anyway")
    sym = parser.add_argument_group("symbols")
    sym.add_argument(
        "--symbols-path",
        metavar="PATH",
        action="append",
        default=[],
        help="a symbol directory or .sym file (repeatable; same as a positional SYMBOL_PATH)",
    )
    sym.add_argument(
        "--symbols-url",
        metavar="URL",
        action="append",
        default=[],
        help="a symbol server (BASE/<debug file>/<DEBUG ID>/<name>.sym), tried in order after the symbol "
        "paths (repeatable); its bearer token is read from CRASH_INSPECTOR_TOKEN_<HOST>[_<PORT>]",
    )
    sym.add_argument(
        "--symbols-cache",
        metavar="DIR",
        help="cache folder: symbol indexes in DIR/index, downloaded symbols in DIR/symbols "
        "(default: the user cache folder)",
    )
    sym.add_argument(
        "--no-symbols-cache",
        action="store_true",
        help="keep nothing: no symbol indexes, downloads only in a temporary folder for this run",
    )
    sym.add_argument(
        "--symbols-tmp",
        metavar="DIR",
        help="where downloads are written before they are moved into the cache (default: inside the cache)",
    )
    sym.add_argument(
        "--symbols-download-timeout-secs",
        metavar="SECONDS",
        dest="symbols_download_timeout",
        type=_timeout_secs,
        default=1000.0,
        help="the longest one symbol download may take, retries included (default: 1000)",
    )
    sym.add_argument(
        "--symbols-download-timeout",
        metavar="SECONDS",
        dest="symbols_download_timeout",
        type=_seconds,
        help="the same in (fractional) seconds, more than 0",
    )
    sym.add_argument(
        "--symbols-max-download",
        metavar="MB",
        type=float,
        default=2048.0,
        help="refuse symbol files larger than this many megabytes (default: 2048)",
    )
    sym.add_argument(
        "--offline",
        action="store_true",
        help="download nothing; use only symbols already in the download cache",
    )
    sym.add_argument(
        "--debuginfod-url",
        metavar="URL",
        action="append",
        default=[],
        help="a debuginfod server (GET URL/buildid/<id>/debuginfo, then /executable) for binaries and "
        "debug files by build id (repeatable; DEBUGINFOD_URLS is read too, space-separated)",
    )
    sym.add_argument(
        "--no-local-modules",
        action="store_true",
        help="do not use the modules' own files on this machine (nor /usr/lib/debug), even when they match",
    )
    walk = parser.add_argument_group("walk")
    walk.add_argument(
        "--policy",
        choices=("rust-minidump", "breakpad"),
        default=None,
        help="unwinding rules where the two reference stackwalkers disagree (default: rust-minidump for "
        "minidumps, breakpad for microdumps, which only Breakpad reads)",
    )
    walk.add_argument(
        "--microdump-index",
        type=int,
        metavar="N",
        default=None,
        help="a log holding several microdumps: walk microdump N (0 is the first; by default the "
        "first that is not empty; the problems list names the others)",
    )
    walk.add_argument(
        "--analysis-all-cpus",
        action="store_true",
        help="JSON: also fill the crash analysis fields (instruction, memory_accesses, ...) for x86, "
        "ARM and ARM64 crashes, which rust-minidump 0.25 analyses only on amd64 "
        "(the human report shows them always)",
    )
    walk.add_argument("--max-frames", type=int, metavar="N", help="stop each thread after N frames")
    parser.add_argument(
        "dump", metavar="MINIDUMP", help="the minidump (.dmp), or a log holding a Breakpad microdump"
    )
    parser.add_argument(
        "symbol_paths", metavar="SYMBOLS_PATH", nargs="*", help="symbol directories or .sym files"
    )
    return parser


class _Version(argparse.Action):
    """`-V` / `--version`: one line, unwrapped (argparse's own action wraps it to the terminal)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"crash-inspector stackwalk {__version__} (options of {REFERENCE})")
        parser.exit()


def _check(args: argparse.Namespace) -> None:
    """Usage errors (exit 2) of our own options; the reference's own rules are in `_output_problem`."""
    if args.cyborg is not None:
        args.format = "cyborg"
    if args.trace and args.format not in ("human", "cyborg"):
        raise UsageError("--trace is for the human report (--human or --cyborg)")
    if args.symbols_cache and args.no_symbols_cache:
        raise UsageError("--symbols-cache and --no-symbols-cache contradict each other")
    if args.microdump_index is not None and args.microdump_index < 0:
        raise UsageError("--microdump-index must be 0 or more")
    if args.max_frames is not None and args.max_frames < 1:
        raise UsageError("--max-frames must be at least 1")
    if not args.symbols_max_download > 0:
        raise UsageError("--symbols-max-download must be more than 0 MB")


def _output_problem(args: argparse.Namespace) -> str | None:
    """rust-minidump's checks of `--pretty` and `--brief`, which it reports as errors (exit 1), not usage."""
    if args.pretty and args.format not in ("json", "cyborg"):
        return "--pretty is for the JSON report (--json or --cyborg), not the human one"
    if args.brief and args.format not in ("human", "cyborg", "dump"):
        return "--brief is only for --human, --cyborg and --dump"
    return None


class _Logs:
    """Where log records and our one-line errors go (stderr or `--log-file`), at the `--verbose` level.

    Installed on the root logger for the run and taken off again (the CLI runs inside tests too)."""

    def __init__(self, level: str) -> None:
        self.level = VERBOSITY[level]
        self.stream: IO[str] | None = None

    def open_file(self, path: str) -> None:
        """Log to `path` (created or emptied, as minidump-stackwalk does); OSError when it cannot be."""
        self.stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed when `installed` ends)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        saved: list[tuple[list[Any], int]] = []

        def setup() -> None:  # run when `logging` is imported: most runs never need it
            import logging

            root = logging.getLogger()
            saved.append((root.handlers[:], root.level))
            if self.stream is not None:
                handler = logging.StreamHandler(self.stream)
                handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
                root.handlers = [handler]
            root.setLevel(self.level)

        threshold = logs.set_threshold(self.level)
        logs.when_imported(setup)
        try:
            yield
        finally:
            logs.set_threshold(threshold)
            logs.cancel(setup)
            if saved:
                import logging

                root = logging.getLogger()
                root.handlers, root.level = saved[0]
            if self.stream is not None:
                self.stream.close()

    def error(self, message: str) -> None:
        """Our error line (`crash-inspector: error: …`), unless `--verbose off`."""
        if self.level > logs.ERROR:
            return
        stream = self.stream if self.stream is not None else sys.stderr
        print(f"crash-inspector: error: {message}", file=stream, flush=True)


def run(argv: list[str]) -> int:
    """Run the sub-command; returns the process exit code (never raises for bad input)."""
    args = parse_arguments(_parser(), argv, _check, intermixed=True)
    if isinstance(args, int):
        return args
    logs = _Logs(args.verbose)
    if args.log_file is not None:
        try:
            logs.open_file(args.log_file)
        except OSError as exc:
            message = f"cannot write the log file {args.log_file}: {exc.strerror}"
            print(f"crash-inspector: error: {message}", file=sys.stderr)
            return EXIT_UNUSABLE
    with logs.installed():
        return _run(args, logs)


def _run(args: argparse.Namespace, logs: _Logs) -> int:
    problem = _output_problem(args)
    if problem is not None:
        logs.error(problem)
        return EXIT_UNUSABLE
    try:
        report, json_text = _reports(args)
    except Exception as exc:
        # the walk's own errors ("nothing in the dump can be reported") do not name the dump
        logs.error(failure_message(exc, input_path=args.dump, log=log, what="stackwalk", name_input=True))
        return EXIT_UNUSABLE
    # the --cyborg file first: when it cannot be written, nothing has been printed yet
    if json_text is not None and not _write_file(args.cyborg, json_text, "--cyborg", logs):
        return EXIT_UNUSABLE
    if args.output_file is None:
        write_stdout(report)
    elif not _write_file(args.output_file, report, "--output-file", logs):
        return EXIT_UNUSABLE
    return EXIT_OK


def _write_file(path: str, text: str, what: str, logs: _Logs) -> bool:
    try:
        with open(path, "w", encoding="utf-8", newline="") as out:  # the bytes stdout would get
            out.write(text)
    except OSError as exc:
        logs.error(f"cannot write the {what} file {path}: {exc.strerror}")
        return False
    return True


def _reports(args: argparse.Namespace) -> tuple[str, str | None]:
    """The report for the output, and the JSON for `--cyborg` (None without it)."""
    if args.format == "dump":
        from inspector.cli_dump import dump_report

        return dump_report(args.dump, microdump_index=args.microdump_index, brief=args.brief), None
    from inspector.core.dumpfile import open_any_dump

    with open_any_dump(args.dump, microdump_index=args.microdump_index) as dump:
        state = _walk(dump, args)
    if args.format in ("json", "cyborg"):
        from inspector.core.report.json_report import render_json

        json_text = render_json(state, pretty=args.pretty, analysis_all_cpus=args.analysis_all_cpus) + "\n"
        if args.format == "json":
            return json_text, None
    else:
        json_text = None
    if args.format == "machine":
        from inspector.core.report.machine import render_machine

        return render_machine(state), None
    if args.format == "html":
        from inspector.core.report.html_report import render_html

        return render_html(state), None
    from inspector.core.report.human import render_human

    return render_human(state, brief=args.brief, trace=args.trace), json_text


def _walk(dump: Minidump, args: argparse.Namespace) -> ProcessState:
    from inspector.core.process import ProcessOptions, process
    from inspector.core.unwind import WalkOptions, WalkPolicy

    # an explicit --policy applies to microdumps too; without it each format gets its reference's
    policy = WalkPolicy.RUST_MINIDUMP if args.policy is None else WalkPolicy(args.policy)
    walk = WalkOptions(policy=policy, max_frames=args.max_frames)
    if args.features == "unstable-all":
        walk = WalkOptions.rust_minidump_main(policy=walk.policy, max_frames=walk.max_frames)
    cache: str | None = args.symbols_cache or None
    options = ProcessOptions(
        symbol_paths=(*args.symbols_path, *args.symbol_paths),  # minidump-stackwalk's order
        symbols_cache=None if cache is None else os.path.join(cache, "index"),
        use_symbols_cache=not args.no_symbols_cache,
        walk=walk,
        symbol_servers=_servers(args, cache),
        microdump_policy=WalkPolicy.BREAKPAD if args.policy is None else None,
        local_modules=not args.no_local_modules,
    )
    state = process(dump, options)
    if args.evil_json is not None:
        from inspector.core.extra_info import apply_extra_info, read_extra_info

        extra = read_extra_info(args.evil_json)
        for message in extra.problems:
            log.error("%s", message)
        state = apply_extra_info(state, extra)
    if args.recover_function_args:
        from inspector.core.arguments import recover_function_arguments

        stacks = [start.stack for start in state.thread_starts]
        state = replace(state, function_arguments=recover_function_arguments(state.threads, stacks))
    return state


def _servers(args: argparse.Namespace, cache: str | None) -> SymbolServerOptions | None:
    """The symbol-server options, or None when neither a server nor `--offline` is given."""
    debuginfod = _debuginfod_urls(args)
    if not args.symbols_url and not debuginfod and not args.offline:
        return None
    from inspector.core.symbols import FetchPolicy
    from inspector.core.symbols.server_supplier import server_options_for

    return server_options_for(
        args.symbols_url,
        debuginfod=debuginfod,
        downloads=None if cache is None else os.path.join(cache, "symbols"),
        keep_downloads=not args.no_symbols_cache,
        partial_dir=args.symbols_tmp,
        offline=args.offline,
        fetch=FetchPolicy(
            total_timeout=args.symbols_download_timeout,
            max_bytes=int(args.symbols_max_download * 1024 * 1024),
        ),
    )


def _debuginfod_urls(args: argparse.Namespace) -> list[str]:
    """`--debuginfod-url`s, then `DEBUGINFOD_URLS` (space-separated, as elfutils reads it); an unusable
    one is reported by the supplier as a problem, as a bad `--symbols-url` is."""
    urls = list(args.debuginfod_url)
    urls += [url for url in os.environ.get("DEBUGINFOD_URLS", "").split() if url not in urls]
    return urls


def main() -> int:
    """The `inspector-stackwalk` console script: exactly `python -m inspector stackwalk ARGS`."""
    from inspector.cli import run_program

    return run_program(["stackwalk", *sys.argv[1:]])
