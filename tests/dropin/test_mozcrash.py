"""Mozilla's `mozcrash` (Firefox's CI crash processing) with `inspector-stackwalk` as its minidump-stackwalk.

mozcrash runs `MINIDUMP_STACKWALK --cyborg=<dir>/<name>.trace [--brief] DUMP SYMBOLS`, reads the
JSON file only when the exit code is 0, and takes the signature from the crashing thread's first
frame that is not an abort function (inline frames first; parameters stripped), and the pid.
`--brief` is added when it found the binary where `mach bootstrap` installs it
(`$MOZBUILD_STATE_PATH/minidump-stackwalk/minidump-stackwalk`): the "local" mode here.

Own crashes: the signature, exit code and pid mozcrash gets from ours must be what it gets from
the reference, recorded below and, when it is installed, run live; for the Windows crashes, what
it makes of the reference's JSON beside each dump. Corpus: the same, against
the signature mozcrash derives from the reference's JSON in `../shared/corpus` with the exit code
recorded with it, and against the live reference when installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, Case, read_cases
from tests.dropin.common import (
    NO_REFERENCE,
    OwnCrash,
    expected_case,
    our_script,
    own_crashes,
    reference_binary,
    windows_crashes,
)
from tests.golden.conftest import case_params

mozcrash = pytest.importorskip("mozcrash.mozcrash", reason="mozcrash is part of the test extra")

#: What mozcrash 2.2 got from minidump-stackwalk 0.25.0 for our own crashes: (signature, pid).
#: The exit code was 0 for each, in both modes.
REFERENCE_RESULTS = {
    "analysis_div_zero": ("@ average", 23083),
    "analysis_non_canonical": ("@ read_poisoned", 22992),
    "analysis_null_call": ("@ close_device", 23038),
    "analysis_null_read": ("@ read_balance", 22821),
    "analysis_null_write": ("@ write_limit", 22952),
    "analysis_stack_push": ("@ descend", 23127),
    "cxx_templates": (
        "@ engine::World<engine::PhysicsSystem, engine::RenderSystem>::run()::{lambda(engine::Entity&)#1}"
        "::operator()(engine::Entity&) const::{lambda(engine::Mesh&)#1}::operator()",
        9263,
    ),
    "cxx_terminate": ("@ __pthread_kill_implementation", 12063),
    "fp_less_deep": ("@ parse_primary", 11936),
    "lib_callback": ("@ discounted_unit_price", 11968),
    "libc_abort": ("@ __pthread_kill_implementation", 11997),
    "multithread": ("@ stack_crate", 12024),
    "sample": ("@ store_pixel", 11905),
}


@pytest.fixture(scope="session")
def xdg_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user cache folder of our stackwalk (its symbol indexes), shared by the session."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg_cache: Path) -> None:
    """No symbol server (mozcrash adds Mozilla's under MOZ_AUTOMATION), no dump copies, no mach install."""
    for name in (
        "MOZ_AUTOMATION",
        "MOZ_STACKWALK_SYMBOLS_SERVER",
        "MINIDUMP_SAVE_PATH",
        "MINIDUMP_STACKWALK",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MOZBUILD_STATE_PATH", str(tmp_path / "no-mozbuild"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg_cache))


def run_mozcrash(
    binary: Path, dumps: Path, symbols: Path | None, monkeypatch: pytest.MonkeyPatch, *, local: bool
) -> Any:
    """mozcrash's StackInfo for the one dump in `dumps`, with `binary` found as mozcrash finds it:
    MINIDUMP_STACKWALK in CI, the `mach bootstrap` location (which adds --brief) locally."""
    if local:
        home = dumps.with_name(f"{dumps.name}-mozbuild")
        installed = home / "minidump-stackwalk" / "minidump-stackwalk"
        installed.parent.mkdir(parents=True)
        installed.symlink_to(binary)
        monkeypatch.setenv("MOZBUILD_STATE_PATH", str(home))
    else:
        monkeypatch.setenv("MINIDUMP_STACKWALK", str(binary))
    crash_info = mozcrash.CrashInfo(str(dumps), None if symbols is None else str(symbols), keep=True)
    assert crash_info.brief_output is local
    infos = list(crash_info)
    assert len(infos) == 1
    return infos[0]


def _own_params() -> list[object]:
    return [
        pytest.param(crash, local, id=f"{crash.name}-{'local' if local else 'ci'}")
        for crash in own_crashes()
        for local in (False, True)
    ]


@pytest.mark.parametrize(("crash", "local"), _own_params())
def test_own_crash_gets_the_references_signature(
    crash: OwnCrash, local: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dumps = crash.dump_folder(tmp_path / "dumps")
    symbols = crash.merged_symbols(tmp_path / "symbols")
    ours = run_mozcrash(our_script(), dumps, symbols, monkeypatch, local=local)
    assert ours.stackwalk_retcode == 0, ours.stackwalk_stderr
    assert ours.stackwalk_stderr == ""
    assert (ours.signature, ours.pid) == REFERENCE_RESULTS[crash.name]
    assert ours.stackwalk_stdout.startswith("Operating system: Linux\n")
    assert ("Loaded modules:" in ours.stackwalk_stdout) is not local  # --brief: crashing thread only


@pytest.mark.parametrize(("crash", "local"), _own_params())
def test_own_crash_against_the_live_reference(
    crash: OwnCrash, local: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = reference_binary()
    if reference is None:
        pytest.skip(NO_REFERENCE)
    symbols = crash.merged_symbols(tmp_path / "symbols")
    got = []
    for name, binary in (("ours", our_script()), ("reference", reference)):
        dumps = crash.dump_folder(tmp_path / name)
        info = run_mozcrash(binary, dumps, symbols, monkeypatch, local=local)
        got.append((info.signature, info.stackwalk_retcode, info.pid))
    assert got[0] == got[1]


@pytest.mark.parametrize("crash", windows_crashes(), ids=lambda c: c.name)
def test_windows_crash_gets_the_signature_of_the_reference_json(
    crash: OwnCrash, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wine crashes name no debug ids: the reference finds their symbols only through a symbol
    server's code-id lookup (which mozcrash cannot point it to), so its JSON beside each dump, made
    that way, is the reference here (tests/golden/KNOWN_DIFFERENCES.md, modules without a debug id)."""
    dumps = crash.dump_folder(tmp_path / "dumps")
    ours = run_mozcrash(our_script(), dumps, crash.symbol_paths[0], monkeypatch, local=False)
    document = json.loads(crash.dump.with_suffix(".reference.json").read_text(encoding="utf-8"))
    signature = mozcrash.CrashInfo(str(tmp_path), None)._generate_signature(document)
    assert (ours.signature, ours.stackwalk_retcode, ours.pid) == (signature, 0, document["pid"])


def _reference_exit_codes() -> dict[str, int]:
    """`reference-commands.tsv`: the reference's exit code of its --json run, by dump."""
    path = CORPUS / "reference-commands.tsv"
    codes = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        code, mode, dump, _ = line.split("\t", 3)
        if mode == "json":
            codes[dump] = int(code)
    return codes


@pytest.fixture(scope="module")
def ours_on_corpus() -> dict[str, tuple[object, int, object]]:
    """(signature, exit code, pid) mozcrash got from ours, by case: each dump is walked once for both."""
    return {}


def _ours(
    case: Case,
    results: dict[str, tuple[object, int, object]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[object, int, object]:
    label, dump, symbol_paths, _ = case
    if label not in results:
        assert len(symbol_paths) <= 1, "mozcrash passes one symbols path"
        symbols = CORPUS / symbol_paths[0] if symbol_paths else None
        dumps = OwnCrash(label, CORPUS / dump, ()).dump_folder(tmp_path / "ours")
        info = run_mozcrash(our_script(), dumps, symbols, monkeypatch, local=False)
        results[label] = (info.signature, info.stackwalk_retcode, info.pid)
    return results[label]


@pytest.mark.golden
@pytest.mark.parametrize("case", case_params(read_cases()))
def test_corpus_dump_gets_the_signature_of_the_reference_json(
    corpus_dir: Path,
    case: Case,
    ours_on_corpus: dict[str, tuple[object, int, object]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Against the signature mozcrash derives from the reference's JSON and its recorded exit code."""
    _, dump, _, reference_json = expected_case(case)
    document = json.loads((CORPUS / reference_json).read_text(encoding="utf-8"))
    signature = mozcrash.CrashInfo(str(tmp_path), None)._generate_signature(document)
    expected = (signature, _reference_exit_codes()[dump], document.get("pid"))
    assert _ours(case, ours_on_corpus, tmp_path, monkeypatch) == expected


@pytest.mark.golden
@pytest.mark.parametrize("case", case_params(read_cases()))
def test_corpus_dump_against_the_live_reference(
    corpus_dir: Path,
    case: Case,
    ours_on_corpus: dict[str, tuple[object, int, object]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reference = reference_binary()
    if reference is None:
        pytest.skip(NO_REFERENCE)
    label, dump, symbol_paths, _ = expected_case(case)
    symbols = CORPUS / symbol_paths[0] if symbol_paths else None
    dumps = OwnCrash(label, CORPUS / dump, ()).dump_folder(tmp_path / "reference")
    theirs = run_mozcrash(reference, dumps, symbols, monkeypatch, local=False)
    expected = (theirs.signature, theirs.stackwalk_retcode, theirs.pid)
    assert _ours(case, ours_on_corpus, tmp_path, monkeypatch) == expected
