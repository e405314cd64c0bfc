"""Situations the parser and index must survive, each named after the situation."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.symbols import (
    DamageKind,
    FrameSymbol,
    InlineFrameSymbol,
    StackWinType,
    SymbolFile,
    index_build,
    line_parser,
    symbol_file,
)
from inspector.core.symbols.records import MAX_EXAMPLES_PER_KIND
from tests.synth.sym import Inline, SymBuilder

OpenSym = Callable[..., SymbolFile]


def inline_program() -> SymBuilder:
    """Breakpad's linux_inline test layout: main → foo() → bar() → func()."""
    return (
        SymBuilder(debug_id="BBA6FA10B8AAB33D00000000000000000", name="linux_inline")
        .file(0, "linux_inline.cpp")
        .file(1, "a.cpp")
        .file(2, "b.cpp")
        .file(3, "c.cpp")
        .inline_origin(0, "bar()")
        .inline_origin(1, "foo()")
        .inline_origin(2, "func()")
        .func(
            0x15B30,
            0x6CF,
            "main",
            inlines=[
                Inline(0, 42, 1, 1, [(0x15B45, 0x6B1)]),
                Inline(1, 39, 2, 0, [(0x15B72, 0x684)]),
                Inline(2, 32, 3, 2, [(0x15B83, 0x673)]),
            ],
            lines=[(0x15B30, 0x15, 41, 0), (0x161B6, 2, 27, 0), (0x161B8, 0x3E, 28, 0)],
        )
    )


EXPECTED_INLINE_FRAME = FrameSymbol(
    "main",
    0x15B30,
    0,
    "a.cpp",
    42,
    0x15B45,
    (
        InlineFrameSymbol("func()", "linux_inline.cpp", 27),
        InlineFrameSymbol("bar()", "c.cpp", 32),
        InlineFrameSymbol("foo()", "b.cpp", 39),
    ),
)


def test_new_inline_syntax_gives_rust_minidumps_frames(open_sym: OpenSym) -> None:
    sf = open_sym(inline_program().text())
    assert sf.symbolize(0x161B6) == EXPECTED_INLINE_FRAME
    chain = sf.find_inlines(0x161B6)
    assert [(c.depth, c.name, c.call_file, c.call_line, c.address) for c in chain] == [
        (2, "func()", "c.cpp", 32, 0x15B83),
        (1, "bar()", "b.cpp", 39, 0x15B72),
        (0, "foo()", "a.cpp", 42, 0x15B45),
    ]
    line = sf.find_line(0x161B6)
    assert line is not None
    assert (line.file, line.line, line.address, line.size) == ("linux_inline.cpp", 27, 0x161B6, 2)


def test_old_inline_syntax_takes_call_site_files_from_the_line_record(open_sym: OpenSym) -> None:
    old = (
        SymBuilder(name="linux_inline")
        .file(0, "linux_inline.cpp")
        .inline_origin(0, "bar()", file_id=0)
        .inline_origin(1, "foo()", file_id=0)
        .inline_origin(2, "func()", file_id=0)
        .func(
            0x15B30,
            0x6CF,
            "main",
            inlines=[
                Inline(0, 42, None, 1, [(0x15B45, 0x6B1)]),
                Inline(1, 39, None, 0, [(0x15B72, 0x684)]),
                Inline(2, 32, None, 2, [(0x15B83, 0x673)]),
            ],
            lines=[(0x161B6, 2, 27, 0)],
        )
    )
    sf = open_sym(old.text())
    frame = sf.symbolize(0x161B6)
    assert frame is not None
    assert (frame.source_file, frame.source_line) == ("linux_inline.cpp", 42)
    assert frame.inlines == (
        InlineFrameSymbol("func()", "linux_inline.cpp", 27),
        InlineFrameSymbol("bar()", "linux_inline.cpp", 32),
        InlineFrameSymbol("foo()", "linux_inline.cpp", 39),
    )
    assert sf.damage.old_inline_syntax and sf.damage.rust_minidump_rejects
    assert not sf.damage.counts


def test_crlf_line_endings_read_like_lf(open_sym: OpenSym) -> None:
    builder = (
        inline_program()
        .public(0x20000, "exported thing")
        .cfi(0x15B30, 0x10, ".cfa: $rsp 8 + .ra: .cfa -8 + ^")
    )
    lf, crlf = open_sym(builder.text()), open_sym(builder.text(newline="\r\n"))
    for address in (0x15B30, 0x161B6, 0x161B9, 0x20000, 0x20010):
        assert crlf.symbolize(address) == lf.symbolize(address)
        assert crlf.find_cfi(address) == lf.find_cfi(address)
    assert not crlf.damage.damaged
    assert crlf.module is not None and crlf.module.debug_file == "linux_inline"


def test_several_carriage_returns_before_the_newline(open_sym: OpenSym) -> None:
    sf = open_sym("MODULE windows x86_64 ABC firefox\r\r\nPUBLIC 10 0 name\r\r\r\n\r\n")
    assert sf.module is not None and sf.module.debug_file == "firefox"
    public = sf.find_public(0x10)
    assert public is not None and public.name == "name"
    assert not sf.damage.damaged


def test_missing_final_newline_still_reads_the_last_record(open_sym: OpenSym) -> None:
    sf = open_sym(inline_program().text(final_newline=False))
    assert sf.symbolize(0x161B6) == EXPECTED_INLINE_FRAME
    assert sf.find_line(0x161B9) is not None  # the last line of the file
    assert sf.damage.missing_final_newline
    assert sf.damage.rust_minidump_rejects  # rust-minidump marks this file corrupt


def test_names_with_spaces(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder(name="my app.exe")
        .file(0, "C:\\Program Files\\src\\main file.cpp")
        .func(0x100, 0x10, "Foo::operator()(int, char const*) const", lines=[(0x100, 0x10, 3, 0)])
        .public(0x200, "public with  two spaces")
        .text()
    )
    assert sf.module is not None and sf.module.debug_file == "my app.exe"
    function = sf.find_function(0x105)
    assert function is not None and function.name == "Foo::operator()(int, char const*) const"
    public = sf.find_public(0x250)
    assert public is not None and public.name == "public with  two spaces"
    line = sf.find_line(0x100)
    assert line is not None and line.file == "C:\\Program Files\\src\\main file.cpp"


def test_invalid_utf8_names_are_decoded_with_replacement(open_sym: OpenSym) -> None:
    sf = open_sym(b"MODULE Linux x86 ABC lib\nFUNC 10 10 0 bad\xff\xfename\nPUBLIC 40 0 caf\xc3\xa9\n")
    function = sf.find_function(0x10)
    assert function is not None and function.name == "bad\ufffd\ufffdname"
    public = sf.find_public(0x40)
    assert public is not None and public.name == "café"


def test_five_megabyte_line_is_read_whole(open_sym: OpenSym) -> None:
    huge = "T<" * (5 * 1024 * 1024 // 2) + ">"
    sf = open_sym(SymBuilder().func(0x10, 0x10, huge).public(0x100, "after").text())
    function = sf.find_function(0x18)
    assert function is not None and function.name == huge
    public = sf.find_public(0x100)
    assert public is not None and public.name == "after"
    assert not sf.damage.damaged


def test_tabs_and_runs_of_spaces_separate_fields(open_sym: OpenSym) -> None:
    sf = open_sym(
        "MODULE Linux x86 ABC lib\n"
        "FUNC\t10  10 \t0   spaced name\n"
        "10\t8  12\t0\n"
        "PUBLIC  m\t100 4  pub\n"
        "STACK CFI INIT\t10  10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
        "STACK CFI  12\t.cfa: $rsp 16 +\n"
    )
    function = sf.find_function(0x10)
    assert function is not None and function.name == "spaced name"
    line = sf.find_line(0x12)
    assert line is not None and line.line == 12
    public = sf.find_public(0x100)
    assert public is not None and (public.name, public.multiple, public.parameter_size) == ("pub", True, 4)
    cfi = sf.find_cfi(0x13)
    assert cfi is not None and cfi.applied == 1 and cfi.rules is not None and cfi.rules[".cfa"] == "$rsp 16 +"
    assert not sf.damage.damaged


def test_duplicate_func_first_in_file_wins(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().func(0x10, 0x10, "first").func(0x10, 0x10, "second").text())
    function = sf.find_function(0x15)
    assert function is not None and function.name == "first"
    assert sf.counts.functions == 1


def test_overlapping_func_lowest_start_wins_then_shortest(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder()
        .func(0x18, 0x10, "later start")
        .func(0x10, 0x20, "long")
        .func(0x10, 0x10, "short")  # same start, smaller end: sorts first in rust-minidump
        .func(0x20, 0x10, "after short")
        .text()
    )
    names = {a: (f.name if (f := sf.find_function(a)) else None) for a in (0x10, 0x1F, 0x20, 0x2F, 0x30)}
    assert names == {0x10: "short", 0x1F: "short", 0x20: "after short", 0x2F: "after short", 0x30: None}


def test_overlapping_cfi_lowest_start_wins(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder()
        .cfi(0x20, 0x10, ".cfa: $rsp 8 + .ra: .cfa -8 + ^")
        .cfi(0x10, 0x18, ".cfa: $rsp 16 + .ra: .cfa -8 + ^")
        .cfi(0x28, 0x10, ".cfa: $rsp 24 + .ra: .cfa -8 + ^")
        .text()
    )
    starts = {a: (c.init.address if (c := sf.find_cfi(a)) else None) for a in (0x10, 0x27, 0x28, 0x37, 0x38)}
    assert starts == {0x10: 0x10, 0x27: 0x10, 0x28: 0x28, 0x37: 0x28, 0x38: None}
    assert sf.damage.repairs == {"STACK CFI INIT overlapping an earlier range dropped": 1}


def test_zero_size_func_is_dropped(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().func(0x10, 0, "empty").public(0x8, "public before").text())
    assert sf.find_function(0x10) is None
    frame = sf.symbolize(0x10)
    assert frame is not None and frame.function_name == "public before" and frame.from_public
    assert sf.damage.repairs == {"FUNC with zero size or overflowing range dropped": 1}


def test_zero_public_address_is_kept(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().public(0, "__ImageBase").public(0x100, "next").text())
    public = sf.find_public(0x50)
    assert public is not None and (public.address, public.name) == (0, "__ImageBase")


def test_public_is_ended_by_a_function_after_it(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().public(0x10, "pub").func(0x20, 0x8, "func").public(0x40, "pub2").text())
    assert sf.find_public(0x18) is not None
    assert sf.find_public(0x30) is None  # FUNC at 0x20 starts after the PUBLIC: it cannot reach 0x30
    assert sf.symbolize(0x30) is None
    assert sf.has_symbol_at(0x30) is False
    frame = sf.symbolize(0x48)
    assert frame is not None and frame.function_name == "pub2"


def test_public_at_a_function_start_is_ended_by_it(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().func(0x20, 0x8, "func").public(0x20, "alias").text())
    frame = sf.symbolize(0x24)
    assert frame is not None and frame.function_name == "func" and not frame.from_public
    assert sf.find_public(0x30) is None


def test_publics_at_one_address_greatest_name_wins(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder()
        .public(0x10, "beta")
        .public(0x10, "alpha", parameter_size=8)
        .public(0x10, "beta", parameter_size=4)
        .text()
    )
    public = sf.find_public(0x10)
    assert public is not None and (public.name, public.parameter_size) == ("beta", 4)


def test_parameter_size_comes_from_stack_win_before_func(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder(os="windows", cpu="x86")
        .func(0x10, 0x20, "f", parameter_size=0xC)
        .stack_win(0, 0x10, 0x10, parameters=8)  # FPO: 0x10..0x1f
        .stack_win(4, 0x18, 0x4, parameters=4, program="$eip $esp ^ =")  # FRAME_DATA: 0x18..0x1b
        .text()
    )
    sizes = {a: (s.parameter_size if (s := sf.symbolize(a)) else None) for a in (0x10, 0x18, 0x1C, 0x20)}
    assert sizes == {0x10: 8, 0x18: 4, 0x1C: 8, 0x20: 0xC}


def test_frame_data_is_preferred_over_fpo(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder(cpu="x86")
        .stack_win(0, 0x10, 0x10, saved_registers=4, allocates_base_pointer=True)
        .stack_win(4, 0x14, 0x4, locals=8, program="$T0 $ebp = $eip $T0 4 + ^ =")
        .text()
    )
    fpo, frame_data = sf.find_stack_win(0x10), sf.find_stack_win(0x15)
    assert fpo is not None and fpo.type is StackWinType.FPO and fpo.allocates_base_pointer
    assert fpo.program_string is None and fpo.saved_register_size == 4
    assert frame_data is not None and frame_data.type is StackWinType.FRAME_DATA
    assert frame_data.program_string == "$T0 $ebp = $eip $T0 4 + ^ =" and frame_data.local_size == 8


def test_stack_win_truncation_repair(open_sym: OpenSym) -> None:
    """MSVC: each record's start is right but its size runs to the end of the function."""
    sf = open_sym(
        SymBuilder(cpu="x86")
        .stack_win(4, 0x0, 0x10, program="a")
        .stack_win(4, 0x1, 0xF, program="b")
        .stack_win(4, 0x4, 0xC, program="c")
        .text()
    )
    found = [
        (w.address, w.size, w.declared_size, w.program_string)
        for a in (0, 1, 3, 4, 0xF)
        if (w := sf.find_stack_win(a))
    ]
    assert found == [
        (0, 1, 0x10, "a"),
        (1, 3, 0xF, "b"),
        (1, 3, 0xF, "b"),
        (4, 0xC, 0xC, "c"),
        (4, 0xC, 0xC, "c"),
    ]
    assert sf.damage.repairs == {"STACK WIN truncated by the next record": 2}


def test_stack_win_overlapping_from_below_is_dropped(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder(cpu="x86")
        .stack_win(4, 0x10, 0x10, program="kept")
        .stack_win(4, 0x8, 0x10, program="x")
        .text()
    )
    kept = sf.find_stack_win(0x10)
    assert kept is not None and kept.program_string == "kept"
    assert sf.find_stack_win(0x8) is None


def test_stack_win_type_and_flag_disagreeing_is_discarded(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder(cpu="x86").stack_win(0, 0x10, 0x10, program="$eip", has_program=True).text())
    assert sf.find_stack_win(0x10) is None
    assert sf.damage.counts == {DamageKind.STACK_WIN_TYPE_MISMATCH: 1}
    assert not sf.damage.rust_minidump_rejects  # rust-minidump only warns


def test_garbage_lines_are_counted_with_examples(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder()
        .raw("this is not a record")
        .func(0x10, 0x10, "f", lines=[(0x10, 4, 1, 0)])
        .raw("!!")
        .raw("FUNC zz 10 0 broken")
        .raw("STACK CFI 10 .cfa: $rsp 8 +")
        .public(0x40, "still here")
        .raw("12 4 1 0")
        .text()
    )
    assert sf.find_public(0x40) is not None and sf.find_function(0x10) is not None
    assert sf.damage.counts == {
        DamageKind.UNKNOWN_RECORD: 2,
        DamageKind.BAD_FUNC: 1,
        DamageKind.ORPHAN_STACK_CFI: 1,
        DamageKind.ORPHAN_LINE: 1,
    }
    examples = {(d.line_number, d.kind) for d in sf.damage.examples}
    assert (2, DamageKind.UNKNOWN_RECORD) in examples and (6, DamageKind.BAD_FUNC) in examples
    assert (9, DamageKind.ORPHAN_LINE) in examples
    assert "3 unrecognised" not in sf.damage.summary() and "5 damaged lines" in sf.damage.summary()


def test_damaged_line_record_is_counted_when_its_function_is_first_parsed(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder().func(0x10, 0x10, "f", lines=[(0x10, 4, 1, 0)]).raw("14 zz 2 0").raw("18 4 3 0").text()
    )
    assert not sf.damage.damaged  # sub-lines are checked lazily
    line = sf.find_line(0x18)
    assert line is not None and line.line == 3
    assert sf.damage.counts == {DamageKind.BAD_LINE: 1}
    assert sf.damage.examples[0].line_number == 4
    sf.find_line(0x10)
    assert sf.check_all().counts == {DamageKind.BAD_LINE: 1}  # counted once


def test_a_damaged_inline_among_sound_line_records_is_reported_at_its_own_line(open_sym: OpenSym) -> None:
    # every line record is sound, so the block's line records are read in one pass; the damaged
    # INLINE record still gets its line number, and the sound one after it still counts
    sf = open_sym(
        SymBuilder()
        .file(0, "a.c")
        .inline_origin(0, "g")
        .func(0x10, 0x20, "f", lines=[(0x10, 4, 1, 0)])
        .raw("14 4 2 0\r")  # a CRLF line: still sound
        .raw("INLINE 0 7 zz 0 18 4")
        .raw("INLINE 0 9 0 0 1c 4")
        .raw("18 8\t3 0")  # a tab between fields: sound too
        .text()
    )
    assert [sf.find_line(a).line for a in (0x10, 0x14, 0x18)] == [1, 2, 3]  # type: ignore[union-attr]
    assert [(call.name, call.call_line) for call in sf.find_inlines(0x1C)] == [("g", 9)]
    assert sf.damage.counts == {DamageKind.BAD_INLINE: 1}
    assert sf.damage.examples[0].line_number == 7  # MODULE, FILE, INLINE_ORIGIN, FUNC, 2 lines, this


def test_a_line_number_past_32_bits_is_a_damaged_line_record(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().func(0x10, 0x10, "f", lines=[(0x10, 4, 1, 0)]).raw("14 4 4294967296 0").text())
    assert sf.find_line(0x10) is not None and sf.find_line(0x14) is None
    assert sf.damage.counts == {DamageKind.BAD_LINE: 1}
    assert sf.damage.examples[0].line_number == 4


def test_damaged_sub_lines_past_the_examples_are_counted_once(
    open_sym: OpenSym, monkeypatch: pytest.MonkeyPatch
) -> None:
    # more damaged lines than the report keeps as examples, in a block parsed again and again:
    # by check_all (which does not keep blocks) and after evictions from the block cache
    monkeypatch.setattr(symbol_file, "BLOCK_CACHE_SIZE", 1)
    builder = SymBuilder().func(0x10, 0x10, "f", lines=[(0x10, 4, 1, 0)])
    for i in range(5):
        builder.raw(f"{0x14 + i:x} zz 2 0")
    builder.func(0x100, 0x10, "g", lines=[(0x100, 4, 1, 0)]).raw("104 zz 2 0")
    sf = open_sym(builder.text())
    expected = {DamageKind.BAD_LINE: 6}
    assert sf.check_all().counts == expected
    assert sf.check_all().counts == expected
    for _ in range(3):
        assert sf.find_line(0x10) is not None and sf.find_line(0x100) is not None  # evict each other
    assert sf.damage.counts == expected
    assert len(sf.damage.examples) == MAX_EXAMPLES_PER_KIND


def test_first_line_not_module_still_loads_the_records(open_sym: OpenSym) -> None:
    sf = open_sym("STACK CFI INIT 10 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\nSTACK CFI 12 .cfa: $rsp 16 +\n")
    assert sf.module is None
    assert sf.find_cfi(0x12) is not None
    assert sf.damage.counts == {DamageKind.NO_MODULE_LINE: 1}
    assert not sf.damage.rust_minidump_rejects


def test_module_line_after_the_first_line_is_damage(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().public(0x10, "p").raw("MODULE Linux x86 DEF other").text())
    assert sf.module is not None and sf.module.debug_id == "0123456789ABCDEF0123456789ABCDEF0"
    assert sf.damage.counts == {DamageKind.MODULE_NOT_FIRST: 1}


def test_empty_file(open_sym: OpenSym) -> None:
    sf = open_sym(b"")
    assert sf.module is None and sf.find_function(0) is None and sf.find_public(0) is None
    assert sf.damage.counts == {DamageKind.EMPTY_FILE: 1}


def test_info_records(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder()
        .code_id("B7066ED94F422786BD205CD2743C2722B5F366FD", "libtorch_cpu.so")
        .info("GENERATOR", "mozilla/dump_syms 2.3.5")
        .info("URL", "https://first")
        .info("URL", "https://second")
        .info("SOMETHING", "else")
        .text()
    )
    info = sf.info
    assert (info.code_id, info.code_file, info.generator, info.url) == (
        "B7066ED94F422786BD205CD2743C2722B5F366FD",
        "libtorch_cpu.so",
        "mozilla/dump_syms 2.3.5",
        "https://second",
    )


def test_multiple_flag_on_func_and_public(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().func(0x10, 8, "f", multiple=True).public(0x20, "p", multiple=True).text())
    function, public = sf.find_function(0x10), sf.find_public(0x20)
    assert function is not None and function.multiple
    assert public is not None and public.multiple
    frame = sf.symbolize(0x20)
    assert frame is not None and frame.multiple


def test_has_symbol_at_needs_a_nonempty_name(open_sym: OpenSym) -> None:
    sf = open_sym(SymBuilder().func(0x10, 8, "").public(0x20, "").public(0x40, "named").text())
    assert sf.has_symbol_at(0x10) is False
    assert sf.has_symbol_at(0x24) is False
    assert sf.has_symbol_at(0x44) is True
    assert sf.has_symbol_at(0x5) is False


def test_cfi_rows_in_force_and_all_rows(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder()
        .cfi(
            0x100,
            0x20,
            ".cfa: $rsp 8 + .ra: .cfa -8 + ^",
            [
                (0x104, ".cfa: $rsp 16 + $rbp: .cfa -16 + ^"),
                (0x101, ".cfa: rsp 12 +"),
                (0x110, "$rbp: .cfa -24 + ^"),
            ],
        )
        .text()
    )
    cfi = sf.find_cfi(0x105)
    assert cfi is not None
    assert [r.address for r in cfi.rows] == [0x101, 0x104, 0x110]  # sorted, all of them
    assert cfi.applied == 2 and cfi.active_row.address == 0x104
    assert cfi.rules == {".cfa": "$rsp 16 +", ".ra": ".cfa -8 + ^", "rbp": ".cfa -16 + ^"}
    first = sf.find_cfi(0x100)
    assert first is not None and first.applied == 0 and first.active_row == first.init
    last = sf.find_cfi(0x11F)
    assert last is not None and last.rules is not None and last.rules["rbp"] == ".cfa -24 + ^"
    assert sf.find_cfi(0x120) is None


def test_cfi_rows_at_one_address_apply_in_text_order(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder()
        .cfi(
            0x10,
            0x10,
            ".cfa: $rsp 8 + .ra: .cfa -8 + ^",
            [(0x12, ".cfa: $rsp 32 +"), (0x12, ".cfa: $rsp 16 +")],
        )
        .text()
    )
    cfi = sf.find_cfi(0x12)
    assert cfi is not None and cfi.rules is not None
    assert cfi.rules[".cfa"] == "$rsp 32 +"  # ".cfa: $rsp 16 +" < ".cfa: $rsp 32 +": the later one wins


def test_malformed_cfi_rule_text_fails_the_composition(open_sym: OpenSym) -> None:
    sf = open_sym(
        SymBuilder().cfi(0x10, 0x10, ".cfa: $rsp 8 + .ra: .cfa -8 + ^", [(0x12, "no register")]).text()
    )
    cfi = sf.find_cfi(0x13)
    assert cfi is not None and cfi.rules is None and cfi.error is not None and "no register" in cfi.error
    good = sf.find_cfi(0x11)
    assert good is not None and good.rules is not None


def test_records_straddling_many_small_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunk boundaries fall inside lines everywhere: the index must not notice."""
    builder = SymBuilder().raw("garbage at the start")
    for i in range(300):
        name = f"function_{i} " + "x" * (i % 50) + ("y" * 1000 if i % 37 == 0 else "")  # some span chunks
        builder.func(0x1000 + 0x20 * i, 0x20, name, lines=[(0x1000 + 0x20 * i, 8, i, 0)])
        builder.public(0x100000 + 0x10 * i, f"public_{i}")
        builder.cfi(
            0x1000 + 0x20 * i,
            0x20,
            ".cfa: $rsp 8 + .ra: .cfa -8 + ^",
            [(0x1004 + 0x20 * i, ".cfa: $rsp 16 +")],
        )
    path = builder.write(tmp_path / "many.sym")
    with SymbolFile.open(path) as normal:
        monkeypatch.setattr(index_build, "CHUNK_BYTES", 97)
        with SymbolFile.open(path) as chunked:
            assert chunked.counts == normal.counts
            for i in range(0, 300, 7):
                for a in (0x1000 + 0x20 * i + 5, 0x100000 + 0x10 * i + 3):
                    assert chunked.symbolize(a) == normal.symbolize(a)
                    assert chunked.find_cfi(a) == normal.find_cfi(a)
            assert chunked.damage == normal.damage and normal.damage.counts == {DamageKind.UNKNOWN_RECORD: 1}


def test_line_patterns_are_compiled_only_for_lines_spelled_otherwise() -> None:
    """A process that reads no symbol file compiles none of the line grammar, nor one that reads
    lines spelled plainly (split at their spaces); the first other line of a kind compiles that
    kind's pattern, once."""
    import subprocess
    import sys

    child = (
        "import re\n"
        "from inspector.core.symbols import line_parser as lp\n"
        "def compiled():\n"
        "    return sorted(n for n, v in vars(lp).items() if isinstance(v, lp._Line) and v.regex.compiled)\n"
        "before = compiled()\n"
        "f = lp.parse_func(b'FUNC m 1a0 20 8 main')\n"
        "plain = compiled()\n"
        "g = lp.parse_func(b'FUNC\\tm 1a0  20 8 \\tmain\\r')\n"
        "print(before, plain, f.address, f.size, f.name, f.multiple, f == g, compiled(),\n"
        "      lp.parse_func(b'FUNC zz') == lp.parse_func(b'FUNC zz'))\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "[]", "416", "32", "main", "True", "True", "['_FUNC']", "True"]


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (b"", []),
        (b"INLINE 0 1 2 3 10 4", [(1, b"INLINE 0 1 2 3 10 4")]),  # the block's first line
        (b"10 4 1 0\nINLINE 0 1 2 3 10 4\r\n14 4 2 0", [(2, b"INLINE 0 1 2 3 10 4\r")]),
        (b"10 4 1 0\n\nINLINE_ORIGIN 1 f\nINLINE 0", [(3, b"INLINE_ORIGIN 1 f"), (4, b"INLINE 0")]),
        (b" INLINE 0 1 2 3 10 4\nxINLINE\n", []),  # not at the start of a line
        (
            b"INLINE a\nINLINE b\n",
            [
                (1, b"INLINE a"),
                (2, b"INLINE b"),
            ],
        ),
    ],
)
def test_the_inline_lines_of_a_block_are_found_with_their_numbers(
    block: bytes, expected: list[tuple[int, bytes]]
) -> None:
    assert list(line_parser.inline_lines(block)) == expected


@pytest.mark.parametrize(
    ("row", "ok"),
    [
        ("INLINE 0 12 1 3 10 4", True),
        ("INLINE 0 12 -1 3 10 4", True),  # Breakpad's "no call-site file"
        ("INLINE 0 12 1 3 ffffffffffffffff ffffffff", True),
        ("INLINE 0 12 1 3 1ffffffffffffffff 4", False),  # an address past 16 hex digits
        ("INLINE 0 12 1 3 10 1ffffffff", False),  # a size past 8
        ("INLINE 0 +12 1 3 10 4", False),  # a sign
        ("INLINE 0 12345678901 1 3 10 4", False),  # past 10 digits
        ("INLINE 0 1\u00b2 1 3 10 4", False),  # a superscript two is a digit to Python, not here
        ("INLINE 0 12 1 3 0x10 4", False),
        ("INLINE 0 12 1 3 1g 4", False),
    ],
)
def test_inline_fields_follow_the_grammar(row: str, ok: bool) -> None:
    parsed = line_parser.parse_inline(row.encode())
    assert isinstance(parsed, line_parser.InlineLine) is ok, parsed


@pytest.mark.parametrize(
    ("row", "file_id"),
    [("INLINE_ORIGIN 1 2 f", 2), ("INLINE_ORIGIN 1 -2 f", -2), ("INLINE_ORIGIN 1 12345678901 f", None)],
)
def test_old_inline_origins_have_a_decimal_file_id(row: str, file_id: int | None) -> None:
    parsed = line_parser.parse_inline_origin(row.encode())
    if file_id is None:
        assert isinstance(parsed, str)
    else:
        assert isinstance(parsed, line_parser.InlineOriginLine) and parsed.file_id == file_id


#: Each kind of line: its keyword and how many words follow it (and whether an `m` may come first)
_KINDS = {
    "_MODULE": (b"MODULE", 3, False),
    "_INFO": (b"INFO", 0, False),
    "_FILE": (b"FILE", 1, False),
    "_INLINE_ORIGIN": (b"INLINE_ORIGIN", 1, False),
    "_FUNC": (b"FUNC", 3, True),
    "_PUBLIC": (b"PUBLIC", 2, True),
    "_LINE": (b"", 4, False),
    "_CFI_INIT": (b"STACK CFI INIT", 2, False),
    "_CFI": (b"STACK CFI", 1, False),
    "_WIN": (b"STACK WIN", 10, False),
}
_WORDS = [b"0", b"4", b"1a0", b"ABCdef0123456789", b"123456789abcdef01", b"4294967296", b"12345678901"]
_ODD_WORDS = [b"-1", b"m", b"x86_64", b"1g", b"+1", b"0x10", b"\xff", b"", b"4\r", b"\x0b"]
_SPACES = [b" "] * 20 + [b"  ", b"\t", b" \t"]
_RESTS = [b"main", b"", b"a  b\t", b".cfa: $rsp 8 +", b" lead", b"\tlead", b"x\r\r", b"\r", b"\xff name"]


@st.composite
def _lines(draw: st.DrawFn) -> tuple[str, bytes]:
    """A kind, and a line shaped like it: plain, or with other spacing, odd words, missing parts."""
    kind = draw(st.sampled_from(sorted(_KINDS)))
    keyword, count, flag = _KINDS[kind]
    space = st.sampled_from(_SPACES)
    word = st.sampled_from([b"0", b"4", b"1a0"] * 16 + _WORDS + _ODD_WORDS)
    parts = [keyword] if keyword else []
    if flag and draw(st.booleans()):
        parts.append(b"m")
    parts += [draw(word) for _ in range(count + draw(st.sampled_from([0] * 8 + [-1, 1])))]
    line = b"".join(part + draw(space) for part in parts)
    if kind == "_LINE" or draw(st.integers(0, 5)) == 0:
        line = line[: -draw(st.integers(0, 2))] if draw(st.booleans()) else line.rstrip(b" \t")
    else:
        line += draw(st.sampled_from(_RESTS))
    return kind, line + draw(st.sampled_from([b"", b"", b"\r", b"\r\r"]))


@settings(max_examples=4000, deadline=None, database=None)
@given(_lines())
def test_lines_split_at_their_spaces_read_as_the_grammar_reads_them(case: tuple[str, bytes]) -> None:
    kind, line = case
    grammar: Any = getattr(line_parser, kind)
    matched = re.compile(grammar.regex.pattern, re.S).fullmatch(line)
    assert grammar.groups(line) == (None if matched is None else matched.groups())


@settings(max_examples=1000, deadline=None, database=None)
@given(
    st.lists(
        st.sampled_from(
            [b"10 4 1 0", b"14 4 2 0", b"18 4 4294967296 0", b"1g 4 1 0", b"1c 4 3\t0", b"20  4 1 0"]
        )
        | st.sampled_from([b"", b"INLINE 0 1 2 3 10 4", b"\r", b"x", b"20 4 5 1\r"]),
        max_size=8,
    ).map(b"\n".join)
)
def test_small_and_large_blocks_give_the_same_line_records(block: bytes) -> None:
    assert line_parser.line_records(block) == line_parser.line_records(
        block + b"\n" * line_parser.SMALL_BLOCK
    )
