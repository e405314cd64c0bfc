"""Real Crashpad crashes of our own against gdb's backtrace of the same crash (ASLR off: same addresses).

For every thread, our frames must be gdb's `normal` frames: the same pcs (gdb's caller pc is
the return address) in the same modules. Where the module's symbols are ours (built from
DWARF), the function names must agree (parameter lists aside: gdb prints bare names) and so
must the inline frames. System libraries have only PUBLIC names, which are often other
aliases of gdb's (`__libc_start_main_alias_2` for `__libc_start_main_impl`), and no INLINE
records. gdb's `tailcall` frames left no return address and cannot be found by any
stackwalker; its `inline` frames in libc come from libc's DWARF, which the `.sym` lacks.

Exception, from the fixtures' README: the spinning `conveyor` thread of `multithread` was at
a different instruction in the gdb run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.core.minidump import basename
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.report.short_names import collapse_templates

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "crashes"
SYSTEM_LIBRARIES = frozenset({"libc.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"})


@dataclass(frozen=True)
class GdbFrame:
    thread: int
    level: int
    pc: int
    kind: str
    function: str
    module: str


def read_frame_table(path: Path) -> tuple[int, list[GdbFrame]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("--- frame table"))
    match = re.search(r"crashing thread is (\d+)", lines[start])
    assert match is not None
    frames = []
    for line in lines[start + 2 :]:
        if line.strip():
            thread, _, level, pc, kind, function, module = line.split("\t")
            frames.append(GdbFrame(int(thread), int(level), int(pc, 16), kind, function, basename(module)))
    return int(match.group(1)), frames


def bare_name(name: str) -> str:
    """A C++ name without its parameter lists (what gdb shows for most frames) and template arguments
    (gdb's demangler and dump_syms' spell some differently: `1ul` / `1`, function pointer types)."""
    name = collapse_templates(name)
    out, depth = [], 0
    for char in name:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


CASES = {
    "sample": (REPO / "resources/examples/sample.dmp", [REPO / "resources/examples/symbols"], set()),
    **{
        name: (
            FIXTURES / name / f"{name}.dmp",
            [FIXTURES / name / "symbols", FIXTURES / "system-symbols"],
            {5} if name == "multithread" else set(),
        )
        for name in (
            "fp_less_deep",
            "lib_callback",
            "libc_abort",
            "multithread",
            "cxx_terminate",
            "cxx_templates",
        )
    },
}


@pytest.fixture(scope="module")
def states() -> dict[str, ProcessState]:
    return {
        name: process(dump, ProcessOptions(symbol_paths=tuple(paths), use_symbols_cache=False))
        for name, (dump, paths, _) in CASES.items()
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_crash_matches_gdb(states: dict[str, ProcessState], name: str) -> None:
    dump, _, exceptions = CASES[name]
    gdb_path = dump.with_name("gdb-backtrace.txt")
    crashing, table = read_frame_table(gdb_path)
    state = states[name]
    assert state.requesting_thread == crashing - 1
    for index, stack in enumerate(state.threads):
        if index in exceptions:
            continue
        gdb = [f for f in table if f.thread == index + 1]
        normal = [f for f in gdb if f.kind == "normal"]
        ours = [(f.return_address, basename(f.module.code_file) if f.module else None) for f in stack.frames]
        assert ours == [(f.pc, f.module) for f in normal], f"thread {index}"
        for frame, expected in zip(stack.frames, normal, strict=True):
            module = basename(frame.module.code_file) if frame.module else ""
            if module in SYSTEM_LIBRARIES:
                continue
            assert frame.function_name is not None
            assert bare_name(frame.function_name) == bare_name(expected.function), f"thread {index}"
            inlines = [f.function for f in gdb if f.kind == "inline" and f.pc == expected.pc]
            assert [bare_name(i.function) for i in frame.inlines] == [bare_name(f) for f in inlines]


def test_sample_crashing_thread(states: dict[str, ProcessState]) -> None:
    """The bundled sample, as its README shows it: two inline frames, then the CFI-found callers."""
    stack = states["sample"].threads[2]
    assert stack.thread_name == "renderer"
    names = []
    for frame in stack.frames:
        names += [f"{inline.function} (inline)" for inline in frame.inlines]
        names.append(frame.function_name)
    assert names == [
        "store_pixel (inline)",
        "blend_row (inline)",
        "render_tile",
        "render_worker_main",
        "start_thread",
        "__clone3",
    ]
    assert [f.trust.value for f in stack.frames] == ["context", "cfi", "cfi", "cfi"]
    assert [(i.file, i.line) for i in stack.frames[0].inlines] == [
        ("tools/crash-programs/sample/render_farm.c", 70),
        ("tools/crash-programs/sample/render_farm.c", 77),
    ]


def test_multithread_thread_states(states: dict[str, ProcessState]) -> None:
    """The README's table: where each thread of `warehouse` is parked."""
    threads = states["multithread"].threads
    first_of_ours = {stack.thread_name: [f.function_name for f in stack.frames] for stack in threads}
    assert first_of_ours["warehouse"][:3] == [
        "__futex_abstimed_wait_common",
        "__pthread_clockjoin_ex",
        "main",
    ]
    assert first_of_ours["auditor"][:3] == ["__GI___lll_lock_wait", "___pthread_mutex_lock", "auditor_main"]
    assert first_of_ours["shipper"][:3] == [
        "__futex_abstimed_wait_common",
        "__GI___pthread_cond_wait",
        "shipper_main",
    ]
    assert first_of_ours["clock"][:3] == ["__clock_nanosleep", "__GI___nanosleep", "clock_main"]
    assert first_of_ours["scanner"][:2] == ["__libc_read", "scanner_main"]
    assert first_of_ours["packer"] == ["stack_crate", "pack_order", "packer_main", "start_thread", "__clone3"]
