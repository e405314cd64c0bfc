"""Text reports against the reference outputs: Breakpad's machine and human formats, rust-minidump's human.

* `--machine` for `breakpad/minidump2.dmp` is byte-for-byte Breakpad's own expected output.
* `--human` for every corpus case (without our closing list of problems and our analysis of
  x86 crashes, which rust-minidump does not analyse) equals rust-minidump's `--human` output,
  except for the two `linux_inline` cases whose symbol file rust-minidump refuses (frame 0 is
  named in ours).
* `--human` for `minidump2` tells the same story as Breakpad's `minidump2.stackwalk.out`: the
  same frames, functions, files, lines, trusts and registers; Breakpad's offsets are from the
  return address, one more than ours on caller frames.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.report.human import render_human
from inspector.core.report.machine import render_machine
from tests.conftest import read_cases
from tests.golden.conftest import case_params

pytestmark = pytest.mark.golden

#: Cases whose symbol file rust-minidump refuses while we read it (frame 0 is named in ours).
REFUSED_SYMBOLS = ("breakpad/linux_inline", "breakpad/linux_inline.old-inline-syms")
HUMAN_CASES = [c for c in read_cases() if c[0] not in REFUSED_SYMBOLS]
NAMED_FRAME_0 = [c for c in read_cases() if c[0] in REFUSED_SYMBOLS]


def _state(corpus: Path, cache: Path, dump: str, symbols: tuple[str, ...]) -> ProcessState:
    return process(
        corpus / dump, ProcessOptions(symbol_paths=tuple(corpus / s for s in symbols), symbols_cache=cache)
    )


def test_machine_matches_breakpad(corpus_dir: Path, symbols_cache: Path) -> None:
    state = _state(corpus_dir, symbols_cache, "breakpad/minidump2.dmp", ("breakpad/symbols",))
    expected = (corpus_dir / "breakpad/expected/minidump2.stackwalk.machine_readable.out").read_text()
    assert render_machine(state) == expected.replace("\r", "")


@pytest.mark.parametrize("case", case_params(HUMAN_CASES))
def test_human_matches_rust_minidump(
    corpus_dir: Path, symbols_cache: Path, case: tuple[str, str, tuple[str, ...], str]
) -> None:
    label, dump, symbols, reference = case
    expected = corpus_dir / reference.replace(".json", ".txt")
    if not expected.is_file():
        pytest.skip(f"no human reference for {label}")
    ours = render_human(
        _state(corpus_dir, symbols_cache, dump, symbols), problems=False, beyond_reference=False
    )
    assert ours == expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", case_params(NAMED_FRAME_0))
def test_human_linux_inline_names_frame_0(
    corpus_dir: Path, symbols_cache: Path, case: tuple[str, str, tuple[str, ...], str]
) -> None:
    """rust-minidump prints `linux_inline + 0x161b6`; we print the inline chain and `main` (as Breakpad).

    With frame 0 put back as rust-minidump prints it, and the frames renumbered, the rest is identical.
    """
    label, dump, symbols, reference = case
    ours = render_human(
        _state(corpus_dir, symbols_cache, dump, symbols), problems=False, beyond_reference=False
    ).splitlines()
    old = "old-inline" in label
    first = ours.index(" 0  linux_inline!func() [linux_inline.cpp : 27]")
    headers = ours[first : first + 7 : 2]
    assert headers == [
        " 0  linux_inline!func() [linux_inline.cpp : 27]",
        f" 1  linux_inline!bar() [{'linux_inline.cpp' if old else 'c.cpp'} : 32]",
        f" 2  linux_inline!foo() [{'linux_inline.cpp' if old else 'b.cpp'} : 39]",
        f" 3  linux_inline!main [{'linux_inline.cpp' if old else 'a.cpp'} : 42 + 0x671]",
    ]
    assert all(line == "    Found by: inlining" for line in ours[first + 1 : first + 7 : 2])
    rest = [re.sub(r"^ ?(\d+)  ", lambda m: f"{int(m.group(1)) - 3:2}  ", line) for line in ours[first + 7 :]]
    as_rust_minidump = [*ours[:first], " 0  linux_inline + 0x161b6", *rest]
    reference_text = (corpus_dir / reference.replace(".json", ".txt")).read_text(encoding="utf-8")
    expected = reference_text
    assert "\n".join(as_rust_minidump) + "\n" == expected


_BREAKPAD_FRAME = re.compile(r"^ ?(\d+)  (\S+?)(?: \[(\S+) : (\d+) \+ 0x[0-9a-f]+\]| \+ 0x[0-9a-f]+)?$")


def test_human_tells_breakpads_story(corpus_dir: Path, symbols_cache: Path) -> None:
    """minidump2: the frames of Breakpad's human report, with the same trust and registers."""
    state = _state(corpus_dir, symbols_cache, "breakpad/minidump2.dmp", ("breakpad/symbols",))
    ours = render_human(state, brief=True)
    breakpad = (corpus_dir / "breakpad/expected/minidump2.stackwalk.out").read_text().replace("\r", "")

    def frames(text: str) -> list[tuple[str, ...]]:
        return [m.groups() for line in text.splitlines() if (m := _BREAKPAD_FRAME.match(line))]

    assert frames(ours) == frames(breakpad)
    found_by = [line.strip() for line in ours.splitlines() if "Found by:" in line]
    assert found_by == [line.strip() for line in breakpad.splitlines() if "Found by:" in line]
    # Breakpad prints eflags as "efl"; the values are the same
    ours_registers = re.findall(r"(\w+) = (0x[0-9a-f]{8})", ours)
    breakpad_registers = [
        ("eflags" if n == "efl" else n, v) for n, v in re.findall(r"(\w+) = (0x[0-9a-f]{8})", breakpad)
    ]
    assert set(breakpad_registers) <= set(ours_registers)
