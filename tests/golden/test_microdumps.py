"""Breakpad's microdumps in the corpus against Breakpad's `microdump_stackwalk` outputs.

* `stackwalk --machine` on the arm and arm64 microdumps is byte for byte Breakpad's
  `microdump.stackwalk.machine_readable-{arm,arm64}.out`.
* `stackwalk --human` on them carries the frames of Breakpad's `microdump.stackwalk-*.out`:
  the same frame lines (module, function, file, line and offset), the same registers with the
  same values, the same "Found by" for every frame.
* The mips32, mips64 and x86 microdumps (no expected output) walk sanely: every frame named
  by the `.sym` file's FUNC that covers it, the stack pointer rising, the known call chain of
  Breakpad's `crash_example` on mips.
* The multi-dump logs: each microdump opens by its index, and the problems name the others.
* `arm64_lr_recovery` on and off give the same frames on the arm64 microdump.
"""

from __future__ import annotations

import bisect
import itertools
import re
from pathlib import Path

import pytest

from inspector import cli
from inspector.core.dumpfile import open_any_dump
from inspector.core.microdump.dump import Microdump
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.types import Cpu
from inspector.core.unwind import FrameTrust, WalkOptions, WalkPolicy

pytestmark = pytest.mark.golden

MICRODUMPS = "breakpad/microdump"


def _walk(corpus: Path, cache: Path, name: str, **options: object) -> ProcessState:
    with open_any_dump(corpus / MICRODUMPS / f"microdump-{name}.dmp") as dump:
        return process(
            dump,
            ProcessOptions(symbol_paths=(corpus / MICRODUMPS / "symbols",), symbols_cache=cache, **options),
        )


def _stackwalk(
    corpus: Path, cache: Path, arch: str, capsys: pytest.CaptureFixture[str], *options: str
) -> str:
    """`crash-inspector stackwalk OPTIONS microdump-ARCH.dmp symbols`: its standard output."""
    folder = corpus / MICRODUMPS
    args = ["stackwalk", *options, "--symbols-cache", str(cache)]
    assert cli.main([*args, str(folder / f"microdump-{arch}.dmp"), str(folder / "symbols")]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


@pytest.mark.parametrize("arch", ["arm", "arm64"])
def test_machine_is_breakpads_byte_for_byte(
    corpus_dir: Path, symbols_cache: Path, arch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _stackwalk(corpus_dir, symbols_cache, arch, capsys, "--machine")
    expected = corpus_dir / MICRODUMPS / "expected" / f"microdump.stackwalk.machine_readable-{arch}.out"
    assert out.encode() == expected.read_bytes()


def test_an_explicit_policy_applies_to_microdumps_too(
    corpus_dir: Path, symbols_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rust-minidump's arm64 rules walk two frame records past libc.so, where Breakpad's stop."""
    out = _stackwalk(corpus_dir, symbols_cache, "arm64", capsys, "--machine", "--policy", "rust-minidump")
    rows = [line for line in out.splitlines() if line.startswith("0|")]
    assert len(rows) == 11 and rows[9] == "0|9|breakpad_unittests||||0x23500"


_FRAME_HEADER = re.compile(r"^ ?(\d+)  (.+)$")
_REGISTER = re.compile(r"(\w+) = (0x[0-9a-f]+)")


def _frames(text: str) -> list[tuple[str, dict[str, str], str]]:
    """(frame line, registers, found by) of each frame of the first thread of a human report."""
    frames: list[tuple[str, dict[str, str], str]] = []
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Thread 0"))
    for line in lines[start + 1 :]:
        if not line.strip() or line.startswith("Thread "):
            break
        header = _FRAME_HEADER.match(line)
        if header is not None:
            frames.append((f"{int(header.group(1))} {header.group(2)}", {}, ""))
        elif "Found by:" in line:
            head, registers, _ = frames[-1]
            frames[-1] = (head, registers, line.strip())
        elif " = 0x" in line:
            frames[-1][1].update(_REGISTER.findall(line))
    return frames


@pytest.mark.parametrize("arch", ["arm", "arm64"])
def test_human_carries_breakpads_frames(
    corpus_dir: Path, symbols_cache: Path, arch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ours = _frames(_stackwalk(corpus_dir, symbols_cache, arch, capsys, "--human"))
    breakpad = _frames((corpus_dir / MICRODUMPS / "expected" / f"microdump.stackwalk-{arch}.out").read_text())
    assert len(ours) == len(breakpad) == {"arm": 8, "arm64": 9}[arch]
    assert ours == breakpad


def _funcs(sym: Path) -> tuple[list[int], list[tuple[int, str]]]:
    """The FUNC records of a `.sym` file, read here on their own: sorted starts, (end, name)."""
    records = []
    for line in sym.read_text().splitlines():
        if line.startswith("FUNC "):
            parts = line.split(" ", 4)
            if parts[1] == "m":
                parts = line.split(" ", 5)[1:]
            address, size, name = int(parts[1], 16), int(parts[2], 16), parts[4]
            records.append((address, address + size, name))
    records.sort()
    return [r[0] for r in records], [(r[1], r[2]) for r in records]


@pytest.mark.parametrize(
    ("arch", "debug_id"),
    [("mips32", "8F36148CC4647A8116CAF2A25F591F570"), ("mips64", "6E72E2F1A5F59AB3D51356FDFE394D490")],
)
def test_mips_walks_the_crash_example_chain(
    corpus_dir: Path, symbols_cache: Path, arch: str, debug_id: str
) -> None:
    state = _walk(corpus_dir, symbols_cache, arch)
    assert state.system.cpu is (Cpu.MIPS if arch == "mips32" else Cpu.MIPS64)
    frames = state.threads[0].frames
    starts, funcs = _funcs(
        corpus_dir / MICRODUMPS / "symbols" / "crash_example" / debug_id / "crash_example.sym"
    )
    named = []
    for frame in frames:
        if frame.module is None or frame.module.filename != "crash_example":
            continue
        offset = frame.instruction - frame.module.base
        i = bisect.bisect_right(starts, offset) - 1
        assert i >= 0 and offset < funcs[i][0], f"frame {frame.index} at {offset:#x} is in no FUNC"
        assert frame.function_name == funcs[i][1]
        named.append(frame.function_name)
    # crash_example: main calls Crash, which calls blaTest, which crashes
    assert named[:3] == ["blaTest", "Crash", "main"]
    _assert_sane(state)


def test_x86_walks_by_scanning_without_symbols(corpus_dir: Path, symbols_cache: Path) -> None:
    state = _walk(corpus_dir, symbols_cache, "x86")
    frames = state.threads[0].frames
    context = frames[0].context
    assert frames[0].instruction == context.get("eip") and frames[0].module is not None
    assert frames[0].module.filename == "libc.so"
    assert len(frames) > 5
    for frame in frames[1:]:
        if frame.trust is FrameTrust.SCAN:  # a scanned return address must point into a module
            assert frame.module is not None, f"frame {frame.index}"
    _assert_sane(state)


def _assert_sane(state: ProcessState) -> None:
    frames = state.threads[0].frames
    assert frames[0].trust is FrameTrust.CONTEXT
    sps = [f.context.stack_pointer for f in frames]
    assert all(a is not None and b is not None and b > a for a, b in itertools.pairwise(sps)), sps
    assert state.walk_options.policy is WalkPolicy.BREAKPAD  # microdumps: Breakpad's rules
    assert not [p for p in state.problems if p.source == "dump"]


def test_each_microdump_of_a_log_opens_by_its_index(corpus_dir: Path) -> None:
    path = corpus_dir / MICRODUMPS / "microdump-withcrashreason.dmp"
    addresses = []
    for index in range(6):
        with open_any_dump(path, microdump_index=index) as dump:
            assert isinstance(dump, Microdump)
            assert dump.crash_reason == "SIGTRAP" and dump.info.count == 6 and dump.info.complete
            assert dump.info.product == "AndroidWebView:62.0.3188.0" and dump.info.process_type == "webview"
            assert [p.code for p in dump.problems] == ["MoreMicrodumps"]
            addresses.append(dump.crash_address)
    assert addresses == [0x4A7CB000, 0x22F73000, 0x29627000, 0, 0x4ED50008, 0]


def test_a_log_with_a_fragment_and_a_cut_off_microdump(corpus_dir: Path, symbols_cache: Path) -> None:
    path = corpus_dir / MICRODUMPS / "microdump-multiple.dmp"
    with open_any_dump(path) as first:
        assert [p.code for p in first.problems] == ["MicrodumpFragment", "MoreMicrodumps"]
        assert len(first.modules) == 156 and first.threads[0].context is not None
        state = process(first, ProcessOptions(symbols_cache=symbols_cache))
    assert len(state.threads[0].frames) > 1
    with open_any_dump(path, microdump_index=1) as cut:
        assert isinstance(cut, Microdump) and not cut.info.complete
        assert {"MicrodumpCutOff", "MissingContext", "MissingStack"} <= {p.code for p in cut.problems}
        state = process(cut, ProcessOptions(symbols_cache=symbols_cache))
    assert state.threads[0].frames == () and state.system.cpu is Cpu.ARM


def test_arm64_lr_recovery_changes_no_frame_of_the_arm64_microdump(
    corpus_dir: Path, symbols_cache: Path
) -> None:
    """Both settings under both policies: the frames are the same; only what is known of lr differs."""
    for policy in WalkPolicy:
        walks = {}
        for recovery in (False, True):
            state = _walk(
                corpus_dir,
                symbols_cache,
                "arm64",
                walk=WalkOptions(policy=policy, arm64_lr_recovery=recovery),
                microdump_policy=None,
            )
            walks[recovery] = state.threads[0].frames
        off, on = walks[False], walks[True]
        assert [(f.instruction, f.trust) for f in off] == [(f.instruction, f.trust) for f in on]
        assert len(off) == (9 if policy is WalkPolicy.BREAKPAD else 11)
        if policy is WalkPolicy.RUST_MINIDUMP:
            # frame 9 comes from a frame record: with recovery its lr is read from the caller's record
            assert off[9].trust is FrameTrust.FRAME_POINTER and off[9].context.get("lr") is None
            assert on[9].context.get("lr") == 0x7F8035B650
