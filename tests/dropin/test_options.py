"""Every option of `minidump-stackwalk --help` (rust-minidump 0.25.0), held here as data: accepted, and doing
what the reference's does. Where the reference is installed, each check runs on it as well."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector import cli
from inspector.cli_stackwalk import _parser
from inspector.core.report.dump_text import rust_minidump_part
from tests.dropin.common import NO_REFERENCE, REFERENCE_VERSION, SAMPLE, our_script, reference_binary
from tests.dropin.synth_dumps import windows_frame_record, x86_arguments
from tests.symbols.server.http_server import RENDER_FARM, SymbolHttpServer

#: `minidump-stackwalk --help` of this version: (option, value name, default, possible values), in its order.
HELP_VERSION = "minidump-stackwalk 0.25.0"
REFERENCE_OPTIONS: tuple[tuple[str, str | None, str | None, tuple[str, ...]], ...] = (
    ("--human", None, None, ()),
    ("--json", None, None, ()),
    ("--cyborg", "CYBORG", None, ()),
    ("--dump", None, None, ()),
    ("--features", "FEATURES", "stable-basic", ("stable-basic", "stable-all", "unstable-all")),
    ("--verbose", "VERBOSE", "error", ("off", "error", "warn", "info", "debug", "trace")),
    ("--output-file", "OUTPUT_FILE", None, ()),
    ("--log-file", "LOG_FILE", None, ()),
    ("--no-color", None, None, ()),
    ("--pretty", None, None, ()),
    ("--brief", None, None, ()),
    ("--no-interactive", None, None, ()),
    ("--evil-json", "EVIL_JSON", None, ()),
    ("--recover-function-args", None, None, ()),
    ("--use-local-debuginfo", None, None, ()),
    ("--symbols-url", "SYMBOLS_URL", None, ()),
    ("--symbols-cache", "SYMBOLS_CACHE", None, ()),
    ("--symbols-tmp", "SYMBOLS_TMP", None, ()),
    ("--symbols-download-timeout-secs", "SYMBOLS_DOWNLOAD_TIMEOUT_SECS", "1000", ()),
    ("--symbols-path", "SYMBOLS_PATH", None, ()),
    ("--help", None, None, ()),
    ("--version", None, None, ()),
)
#: short spellings of the above
REFERENCE_SHORT = {"-h": "--help", "-V": "--version"}

#: Exit codes of the reference for bad invocations ({dump}: the sample dump): 2 for what its argument
#: parser refuses, 1 for its own checks and for a dump or file it cannot use.
REFERENCE_EXIT_CODES: tuple[tuple[tuple[str, ...], int], ...] = (
    ((), 2),
    (("--bogus", "{dump}"), 2),
    (("--pre", "{dump}"), 2),  # no abbreviations
    (("--json", "--human", "{dump}"), 2),
    (("--dump", "--json", "{dump}"), 2),
    (("--cyborg", "{tmp}/c.json", "--json", "{dump}"), 2),
    (("--features", "bogus", "{dump}"), 2),
    (("--verbose", "loud", "{dump}"), 2),
    (("--verbose", "{dump}"), 2),  # the dump is taken as the level
    (("--symbols-download-timeout-secs", "-1", "{dump}"), 2),
    (("--symbols-download-timeout-secs", "soon", "{dump}"), 2),
    (("{tmp}/missing.dmp",), 1),
    (("{tmp}",), 1),
    (("{readme}",), 1),
    (("--dump", "--brief", "{readme}"), 1),
    (("--pretty", "{dump}"), 1),
    (("--pretty", "--human", "{dump}"), 1),
    (("--dump", "--pretty", "{dump}"), 1),
    (("--json", "--brief", "{dump}"), 1),
    (("--cyborg", "{tmp}/no/such/folder/c.json", "{dump}"), 1),
    (("--output-file", "{tmp}/no/such/folder/out.txt", "{dump}"), 1),
    (("--log-file", "{tmp}/no/such/folder/log.txt", "{dump}"), 1),
    (("--verbose", "off", "{tmp}/missing.dmp"), 1),
    (("--evil-json", "{tmp}/missing.json", "{dump}"), 0),  # logged, then ignored
    (("--symbols-url", "not a url", "--symbols-cache", "{tmp}/cache", "{dump}"), 0),  # ignored
    (("--help",), 0),
    (("-h",), 0),
    (("--version",), 0),
    (("-V",), 0),
)

DUMP = SAMPLE / "sample.dmp"
SYMBOLS = SAMPLE / "symbols"


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def ours(capsys: pytest.CaptureFixture[str], *args: str | Path) -> Run:
    """Our stackwalk in this process (what `inspector-stackwalk ARGS` runs)."""
    code = cli.main(["stackwalk", *map(str, args)])
    out, err = capsys.readouterr()
    return Run(code, out, err)


def _process(binary: Path, args: tuple[str | Path, ...], cwd: Path) -> Run:
    done = subprocess.run(
        [str(binary), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )
    return Run(done.returncode, done.stdout, done.stderr)


def script(tmp_path: Path, *args: str | Path) -> Run:
    """Our `inspector-stackwalk` console script in its own process."""
    return _process(our_script(), args, tmp_path)


def reference(tmp_path: Path, *args: str | Path) -> Run | None:
    """The reference in its own process; None when it is not installed."""
    binary = reference_binary()
    return None if binary is None else _process(binary, args, tmp_path)


# ---- the option list ------------------------------------------------------------------------------


def test_the_list_is_the_references_help(tmp_path: Path) -> None:
    """The data above is what the installed reference's `--help` says."""
    help_run = reference(tmp_path, "--help")
    version = reference(tmp_path, "--version")
    if help_run is None or version is None:
        pytest.skip(NO_REFERENCE)
    assert version.out.strip() == HELP_VERSION == REFERENCE_VERSION
    options: list[tuple[str, str | None, str | None, tuple[str, ...]]] = []
    shorts = {}
    for line in help_run.out.splitlines():
        if match := re.match(r"^ {2}(?:(-\w), )?\s*(--[\w-]+)(?: <(\w+)>)?$", line):
            short, name, value = match.groups()
            options.append((name, value, None, ()))
            if short:
                shorts[short] = name
        elif options and (default := re.search(r"\[default: ([^]]+)\]", line)):
            options[-1] = (*options[-1][:2], default.group(1), options[-1][3])
        elif options and (values := re.search(r"\[possible values: ([^]]+)\]", line)):
            options[-1] = (*options[-1][:3], tuple(values.group(1).split(", ")))
    assert tuple(options) == REFERENCE_OPTIONS
    assert shorts == REFERENCE_SHORT


@pytest.mark.parametrize(("option", "value", "default", "choices"), REFERENCE_OPTIONS, ids=str)
def test_each_option_is_ours_with_the_same_value_default_and_choices(
    option: str, value: str | None, default: str | None, choices: tuple[str, ...]
) -> None:
    actions = _parser()._option_string_actions
    assert option in actions, f"{option} is not accepted"
    action = actions[option]
    assert (action.nargs != 0) is (value is not None)  # takes a value exactly when the reference's does
    if default is not None:
        assert str(action.default) == default or float(action.default) == float(default)
    assert tuple(action.choices or ()) == choices
    for short, long in REFERENCE_SHORT.items():
        assert actions[short] is actions[long]


@pytest.mark.parametrize(
    ("args", "code"), REFERENCE_EXIT_CODES, ids=lambda v: " ".join(v) if isinstance(v, tuple) else str(v)
)
def test_exit_codes_are_the_references(
    args: tuple[str, ...], code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = SAMPLE / "README.md"
    argv = [a.format(dump=DUMP, tmp=tmp_path, readme=readme) for a in args]
    run = ours(capsys, *argv)
    assert run.code == code, run.err
    if code == 1:
        assert run.err.count("\n") <= 1 and "Traceback" not in run.err  # one line (none with --verbose off)
    theirs = reference(tmp_path, *argv)
    if theirs is not None:
        assert theirs.code == code


# ---- what each option does --------------------------------------------------------------------------

Check = Callable[[Path, pytest.CaptureFixture[str]], None]
BEHAVIOUR: dict[str, Check] = {}


def does(*options: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        for option in options:
            BEHAVIOUR[option] = check
        return check

    return register


def test_every_option_has_a_behaviour_check() -> None:
    assert set(BEHAVIOUR) == {option for option, *_ in REFERENCE_OPTIONS}


@pytest.mark.parametrize("option", [o for o, *_ in REFERENCE_OPTIONS])
def test_option_does_what_the_references_does(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    BEHAVIOUR[option](tmp_path, capsys)


def _frames(document: dict[str, object]) -> list[tuple[object, ...]]:
    thread = document["crashing_thread"]
    assert isinstance(thread, dict)
    return [(f["offset"], f["trust"], f["function"]) for f in thread["frames"]]


@does("--human", "--json")
def _human_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    human = ours(capsys, "--human", DUMP, SYMBOLS)
    assert human.code == 0 and human.out == ours(capsys, DUMP, SYMBOLS).out  # the default
    assert human.out.startswith("Operating system: Linux\n") and "Loaded modules:" in human.out
    document = json.loads(ours(capsys, "--json", DUMP, SYMBOLS).out)
    assert _frames(document)[0][2] == "render_tile"  # store_pixel is inlined there
    theirs = reference(tmp_path, "--json", DUMP, SYMBOLS)
    if theirs is not None:
        assert _frames(json.loads(theirs.out)) == _frames(document)
        assert reference(tmp_path, "--human", DUMP, SYMBOLS).out.startswith("Operating system: Linux\n")  # type: ignore[union-attr]


@does("--cyborg")
def _cyborg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ours(capsys, "--cyborg", tmp_path / "ours.json", DUMP, SYMBOLS)
    assert run.code == 0
    assert run.out == ours(capsys, "--human", DUMP, SYMBOLS).out
    assert (tmp_path / "ours.json").read_text() == ours(capsys, "--json", DUMP, SYMBOLS).out
    pretty = ours(capsys, "--cyborg", tmp_path / "pretty.json", "--pretty", "--brief", DUMP, SYMBOLS)
    assert pretty.out == ours(capsys, "--brief", DUMP, SYMBOLS).out
    assert (tmp_path / "pretty.json").read_text() == ours(capsys, "--json", "--pretty", DUMP, SYMBOLS).out
    theirs = reference(tmp_path, "--cyborg", tmp_path / "theirs.json", DUMP, SYMBOLS)
    if theirs is not None:
        assert theirs.code == 0 and theirs.out.startswith("Operating system: Linux\n")
        document = json.loads((tmp_path / "theirs.json").read_text())
        assert _frames(document) == _frames(json.loads((tmp_path / "ours.json").read_text()))


@does("--dump")
def _dump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = ours(capsys, "--dump", DUMP)
    brief = ours(capsys, "--dump", "--brief", DUMP)
    assert full.code == brief.code == 0
    assert full.out.startswith("MDRawHeader\n") and brief.out.startswith("MDRawHeader\n")
    assert "Stack\n    0x00000000: 0x" in full.out and "Memory\n    00000000: " in full.out
    assert "Stack\n" not in brief.out and "Memory\n" not in brief.out
    assert cli.main(["dump", str(DUMP)]) == 0
    assert brief.out == capsys.readouterr().out  # `--dump --brief` is our `dump` report
    for args, run in ((("--dump",), full), (("--dump", "--brief"), brief)):
        theirs = reference(tmp_path, *args, DUMP)
        if theirs is not None:
            assert rust_minidump_part(run.out) == theirs.out


@does("--features")
def _features(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = windows_frame_record(tmp_path)
    trusts = {}
    for level in ("stable-basic", "stable-all", "unstable-all"):
        run = ours(capsys, "--json", "--features", level, dump)
        assert run.code == 0
        trusts[level] = [t for _, t, _ in _frames(json.loads(run.out))]
        theirs = reference(tmp_path, "--json", "--features", level, dump)
        if theirs is not None:  # 0.25.0 walks the same at every level
            assert [t for _, t, _ in _frames(json.loads(theirs.out))] == trusts["stable-basic"]
    assert trusts["stable-basic"] == trusts["stable-all"] == ["context", "scan"]
    # unstable-all: rust-minidump 0.26's Windows frame-pointer probe finds the caller
    assert trusts["unstable-all"] == ["context", "frame_pointer"]


@does("--verbose")
def _verbose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.dmp"
    for level in ("off", "error", "warn", "info", "debug", "trace"):
        assert ours(capsys, "--verbose", level, DUMP).code == 0
    quiet = script(tmp_path, "--verbose=off", missing)
    assert (quiet.code, quiet.err) == (1, "")
    loud = script(tmp_path, "--verbose=error", missing)
    assert loud.code == 1 and "missing.dmp" in loud.err
    debug = script(tmp_path, "--verbose", "debug", "--symbols-cache", tmp_path / "cache", DUMP, SYMBOLS)
    assert debug.code == 0 and "DEBUG inspector." in debug.err
    assert "DEBUG" not in script(tmp_path, "--symbols-cache", tmp_path / "cache", DUMP, SYMBOLS).err
    theirs = reference(tmp_path, "--verbose=off", missing)
    if theirs is not None:
        assert (theirs.code, theirs.err) == (1, "")
        assert "WARN" in reference(tmp_path, "--verbose=warn", DUMP, SYMBOLS).err  # type: ignore[union-attr]
        assert "WARN" not in reference(tmp_path, DUMP, SYMBOLS).err  # type: ignore[union-attr]


@does("--output-file")
def _output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ours(capsys, "--json", "--output-file", tmp_path / "ours.json", DUMP, SYMBOLS)
    assert (run.code, run.out) == (0, "")
    assert (tmp_path / "ours.json").read_text() == ours(capsys, "--json", DUMP, SYMBOLS).out
    theirs = reference(tmp_path, "--json", "--output-file", tmp_path / "theirs.json", DUMP, SYMBOLS)
    if theirs is not None:
        assert (theirs.code, theirs.out) == (0, "")
        assert _frames(json.loads((tmp_path / "theirs.json").read_text()))[0][2] == "render_tile"


@does("--log-file")
def _log_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.dmp"
    run = ours(capsys, "--log-file", tmp_path / "ours.log", missing)
    assert (run.code, run.err) == (1, "")
    assert "missing.dmp" in (tmp_path / "ours.log").read_text()
    debug = script(tmp_path, "--verbose=debug", "--log-file", tmp_path / "debug.log", DUMP, SYMBOLS)
    assert (debug.code, debug.err) == (0, "") and "DEBUG inspector." in (tmp_path / "debug.log").read_text()
    theirs = reference(tmp_path, "--log-file", tmp_path / "theirs.log", missing)
    if theirs is not None:
        assert (theirs.code, theirs.err) == (1, "")
        assert "Error reading dump" in (tmp_path / "theirs.log").read_text()


@does("--no-color", "--no-interactive")
def _accepted_no_ops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = ours(capsys, "--brief", DUMP, SYMBOLS)
    for option in ("--no-color", "--no-interactive"):
        run = ours(capsys, option, "--brief", DUMP, SYMBOLS)
        assert run == plain  # nothing of ours is coloured or animated
        theirs = reference(tmp_path, option, "--brief", DUMP, SYMBOLS)
        if theirs is not None:
            assert theirs.code == 0 and "\x1b[" not in theirs.out


@does("--pretty")
def _pretty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ours(capsys, "--json", "--pretty", DUMP, SYMBOLS)
    assert run.code == 0 and run.out.startswith('{\n  "crash_info": {\n')
    assert json.loads(run.out) == json.loads(ours(capsys, "--json", DUMP, SYMBOLS).out)
    alone = ours(capsys, "--pretty", DUMP, SYMBOLS)
    assert alone.code == 1 and "--pretty" in alone.err and alone.out == ""
    theirs = reference(tmp_path, "--json", "--pretty", DUMP, SYMBOLS)
    if theirs is not None:
        assert theirs.out.startswith('{\n  "crash_info": {\n')


@does("--brief")
def _brief(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ours(capsys, "--brief", DUMP, SYMBOLS)
    assert run.code == 0 and "Thread 2 renderer (crashed)" in run.out and "Loaded modules:" not in run.out
    refused = ours(capsys, "--json", "--brief", DUMP)
    assert refused.code == 1 and "--brief" in refused.err
    theirs = reference(tmp_path, "--brief", DUMP, SYMBOLS)
    if theirs is not None:
        assert "Thread 2 renderer (crashed)" in theirs.out and "Loaded modules:" not in theirs.out


def _evil(tmp_path: Path) -> Path:
    path = tmp_path / "extra.json"
    inner = json.dumps({"Test Signer": ["render_farm"], "Other": ["libc.so.6"]})
    path.write_text(json.dumps({"ModuleSignatureInfo": inner, "CPUMicrocodeVersion": "0xf0", "Junk": 1}))
    return path


@does("--evil-json")
def _evil_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evil = _evil(tmp_path)
    document = json.loads(ours(capsys, "--json", "--evil-json", evil, DUMP, SYMBOLS).out)
    plain = json.loads(ours(capsys, "--json", DUMP, SYMBOLS).out)
    subjects = {m["filename"]: m["cert_subject"] for m in document["modules"] if m["cert_subject"]}
    assert subjects == {"render_farm": "Test Signer", "libc.so.6": "Other"}
    assert document["modules_contains_cert_info"] is True and plain["modules_contains_cert_info"] is False
    # the dump has no /proc/cpuinfo copy naming one, so the extra JSON's microcode version is used
    assert (
        plain["system_info"]["cpu_microcode_version"],
        document["system_info"]["cpu_microcode_version"],
    ) == (
        None,
        "0xf0",
    )
    human = ours(capsys, "--evil-json", evil, DUMP, SYMBOLS).out
    assert (
        "  render_farm  0.0.0.0  (main) (Test Signer)\n" in human
        and "  libc.so.6  0.0.0.0 (Other)\n" in human
    )
    theirs = reference(tmp_path, "--json", "--evil-json", evil, DUMP, SYMBOLS)
    if theirs is not None:
        reference_document = json.loads(theirs.out)
        for key in ("modules", "unloaded_modules"):
            assert [m["cert_subject"] for m in reference_document[key]] == [
                m["cert_subject"] for m in document[key]
            ]
        assert reference_document["system_info"] == document["system_info"]


@does("--recover-function-args")
def _recover_function_args(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump, symbols = x86_arguments(tmp_path)
    run = ours(capsys, "--recover-function-args", dump, symbols)
    assert run.code == 0
    expected = [
        "    Arguments (assuming windows thiscall [C++ member function])",
        "        arg 0 (this) = 0x0000beef",
        "        arg 1 (int) = 0x11111111",
        "        arg 2 (char*) = 0x22222222",
        "    Arguments (assuming cdecl [static function])",
        "        arg 0 (int) = 0x44444444",
        "        arg 1 (char**) = 0x55555555",
        "    Arguments (assuming cdecl [static function])",
        "        arg 0 () = <unknown>",
        "    Arguments (assuming windows thiscall [C++ member function])",
        "        arg 0 (this) = 0x00000000",
        "        arg 1 (int const&) = <unknown>",
    ]
    assert [
        line for line in run.out.splitlines() if line.startswith(("    Arguments", "        arg"))
    ] == expected
    assert "Arguments" not in ours(capsys, dump, symbols).out
    assert "Arguments" not in ours(capsys, "--features", "unstable-all", dump, symbols).out  # as 0.25.0
    assert "Arguments" not in ours(capsys, "--recover-function-args", DUMP, SYMBOLS).out  # x86 only
    theirs = reference(tmp_path, "--recover-function-args", dump, symbols)
    if theirs is not None:
        assert theirs.out == run.out


@does("--use-local-debuginfo")
def _use_local_debuginfo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ours(capsys, "--json", "--use-local-debuginfo", DUMP, SYMBOLS)
    assert run.code == 0 and run.out == ours(capsys, "--json", DUMP, SYMBOLS).out
    theirs = reference(tmp_path, "--json", "--use-local-debuginfo", DUMP, SYMBOLS)
    if theirs is not None:
        assert theirs.code == 0


def _loaded(document: dict[str, object]) -> dict[str, tuple[object, object]]:
    modules = document["modules"]
    assert isinstance(modules, list)
    return {m["filename"]: (m["loaded_symbols"], m["missing_symbols"]) for m in modules}


@does("--symbols-url", "--symbols-cache", "--symbols-tmp")
def _symbol_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = SymbolHttpServer()
    try:
        cache, temp = tmp_path / "cache", tmp_path / "tmp"
        args = ("--json", "--symbols-url", server.url, "--symbols-cache", cache, "--symbols-tmp", temp, DUMP)
        document = json.loads(ours(capsys, *args).out)
        assert _loaded(document)["render_farm"] == (True, False)
        assert (cache / "symbols" / RENDER_FARM).is_file() and list((cache / "index").iterdir())
        assert temp.is_dir() and not list(temp.iterdir())  # written there first, then moved into the cache
        theirs = reference(
            tmp_path, "--json", "--symbols-url", server.url, "--symbols-cache", tmp_path / "ref", DUMP
        )
        if theirs is not None:
            assert _loaded(json.loads(theirs.out))["render_farm"] == (True, False)
            assert (tmp_path / "ref" / RENDER_FARM).is_file()
    finally:
        server.close()


@does("--symbols-download-timeout-secs")
def _download_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = SymbolHttpServer()
    try:
        server.behaviour.stall = 3.0
        args = ("--json", "--symbols-url", server.url, "--symbols-download-timeout-secs", "1", DUMP)
        run = ours(capsys, *args, "--symbols-cache", tmp_path / "ours")
        assert run.code == 0 and _loaded(json.loads(run.out))["render_farm"] == (False, True)
        theirs = reference(tmp_path, *args, "--symbols-cache", tmp_path / "theirs")
        if theirs is not None:
            assert theirs.code == 0 and _loaded(json.loads(theirs.out))["render_farm"] == (False, True)
    finally:
        server.close()


@does("--symbols-path")
def _symbols_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ours(capsys, "--json", "--symbols-path", SYMBOLS, DUMP)
    assert run.code == 0 and run.out == ours(capsys, "--json", DUMP, SYMBOLS).out
    assert _loaded(json.loads(run.out))["render_farm"] == (True, False)
    theirs = reference(tmp_path, "--json", "--symbols-path", SYMBOLS, DUMP)
    if theirs is not None:
        assert _loaded(json.loads(theirs.out)) == _loaded(json.loads(run.out))


@does("--help", "--version")
def _help_and_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for spelling in ("--help", "-h"):
        run = ours(capsys, spelling)
        assert run.code == 0 and all(option in run.out for option, *_ in REFERENCE_OPTIONS)
    for spelling in ("--version", "-V"):
        run = ours(capsys, spelling)
        assert run.code == 0 and run.out.count("\n") == 1 and REFERENCE_VERSION in run.out
