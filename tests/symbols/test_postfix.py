"""The postfix evaluator for STACK CFI and STACK WIN, with its trace."""

from __future__ import annotations

import pytest

from inspector.core.symbols import StackWinRecord, StackWinType
from inspector.core.symbols.postfix import (
    MAX_STACK,
    MAX_TOKENS,
    MemoryRead,
    compose_cfi_rules,
    evaluate_cfi,
    evaluate_win,
    parse_cfi_rules,
    win_frame_size,
    win_variables,
)

MEMORY = {0x1000: 0xAAAA, 0x1008: 0xBBBB, 0xFF8: 0x1234}


def read(address: int) -> int | None:
    return MEMORY.get(address)


def cfi(expression: str, *, width: int = 8, cfa: int | None = None, **registers: int) -> int | None:
    return evaluate_cfi(expression, registers=registers, read_word=read, cfa=cfa, width=width).value


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("$rsp 8 +", 0x1008),
        ("$rsp 8 -", 0xFF8),
        ("$rsp 2 *", 0x2000),
        ("$rsp 16 /", 0x100),
        ("$rsp 7 %", 0x1000 % 7),
        ("$rsp 29 + 16 @", 0x1010),  # align down
        ("$rsp ^", 0xAAAA),
        ("rsp 8 + ^", 0xBBBB),
        ("+5 -3 +", 2),
        ("-8", (1 << 64) - 8),
        ("$rsp -8 + ^", 0x1234),
    ],
)
def test_each_cfi_operator(expression: str, value: int) -> None:
    assert cfi(expression, rsp=0x1000) == value


def test_arithmetic_wraps_in_the_register_width() -> None:
    assert cfi("$esp 8 -", width=4, esp=4) == 0xFFFF_FFFC
    assert cfi("$rsp 8 -", width=8, rsp=4) == (1 << 64) - 4
    assert cfi("4294967295 1 +", width=4) == 0
    assert cfi("-1 16 @", width=4) == 0xFFFF_FFF0


def test_cfa_is_available_only_when_given() -> None:
    assert cfi(".cfa -8 + ^", cfa=0x1010) == 0xBBBB
    result = evaluate_cfi(".cfa 8 +", registers={}, read_word=read)
    assert result.value is None and result.error == ".cfa is not available here"


def test_dollar_token_names_the_register_after_the_first_dollar() -> None:
    assert cfi("x$rsp", rsp=5) == 5  # rust-minidump: token.split_once('$')


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("$rsp 0 /", "division by zero"),
        ("$rsp 0 %", "remainder by zero"),
        ("$rsp 12 @", "alignment 12 is not a power of two"),
        ("$rsp 0 @", "alignment 0 is not a power of two"),
        ("$rax", "register rax has no value"),
        ("bogus", "unknown token 'bogus'"),
        ("+", "'+' needs two operands"),
        ("^", "'^' needs an operand"),
        ("$rsp 4 + ^", "cannot read 8 bytes of memory at 0x1004"),
        ("$rsp 1 2", "expression leaves 3 values instead of one"),
        ("", "expression leaves 0 values instead of one"),
        (".undef", "the value is undefined (.undef)"),
        ("99999999999999999999", "unknown token '99999999999999999999'"),  # beyond i64
        ("$rsp =", "unknown token '='"),
    ],
)
def test_each_cfi_failure_has_a_reason(expression: str, reason: str) -> None:
    result = evaluate_cfi(expression, registers={"rsp": 0x1000}, read_word=read)
    assert not result.ok and result.value is None and result.error == reason


def test_too_many_tokens_and_too_deep_a_stack_fail() -> None:
    many = evaluate_cfi(" ".join(["1"] * (MAX_TOKENS + 1)), registers={}, read_word=read)
    assert many.error is not None and "tokens" in many.error and not many.steps
    deep = evaluate_cfi(" ".join(["1"] * (MAX_STACK + 1)), registers={}, read_word=read)
    assert deep.error == f"stack deeper than {MAX_STACK}"


def test_cfi_trace_records_every_token_and_memory_read() -> None:
    result = evaluate_cfi(".cfa -8 + ^", registers={}, read_word=read, cfa=0x1010)
    assert result.value == 0xBBBB
    assert [(s.token, s.stack, s.read) for s in result.steps] == [
        (".cfa", (0x1010,), None),
        ("-8", (0x1010, (1 << 64) - 8), None),
        ("+", (0x1008,), None),
        ("^", (0xBBBB,), MemoryRead(0x1008, 8, 0xBBBB)),
    ]
    assert result.reads == (MemoryRead(0x1008, 8, 0xBBBB),)


def test_cfi_reads_are_recorded_at_the_read_size() -> None:
    """64-bit arithmetic reading 32-bit words (rust-minidump on x86/arm): the trace says 4 bytes."""
    result = evaluate_cfi(".cfa -8 + ^", registers={}, read_word=read, cfa=0x1010, width=8, read_size=4)
    assert result.value == 0xBBBB
    assert result.reads == (MemoryRead(0x1008, 4, 0xBBBB),)
    failed = evaluate_cfi("$rsp 4 + ^", registers={"rsp": 0x1000}, read_word=read, read_size=4)
    assert failed.steps[-1].read == MemoryRead(0x1004, 4, None)


def test_failed_memory_read_is_in_the_trace() -> None:
    result = evaluate_cfi("$rsp 4 + ^", registers={"rsp": 0x1000}, read_word=read)
    assert result.steps[-1].read == MemoryRead(0x1004, 8, None)


def win_record(
    program: str | None = "$eip", *, locals_: int = 8, saved: int = 4, params: int = 12
) -> StackWinRecord:
    return StackWinRecord(
        StackWinType.FRAME_DATA if program is not None else StackWinType.FPO,
        0x1000,
        0x20,
        0x20,
        3,
        1,
        params,
        saved,
        locals_,
        0,
        program is not None,
        program,
        False,
    )


def test_win_variables_follow_rust_minidump() -> None:
    record = win_record("$T0 .raSearch =")
    variables = win_variables(record, esp=0x1000, ebp=0x2000, ebx=7, grand_callee_parameter_size=16)
    assert variables == {
        "$esp": 0x1000,
        "$ebp": 0x2000,
        "$ebx": 7,
        ".cbParams": 12,
        ".cbCalleeParams": 16,
        ".cbSavedRegs": 4,
        ".cbLocals": 8,
        ".raSearch": 0x1000 + 8 + 4 + 16,
        ".raSearchStart": 0x1000 + 8 + 4 + 16,
    }
    assert win_frame_size(record, 16) == 28


def test_win_search_start_uses_ebp_when_the_program_aligns() -> None:
    variables = win_variables(
        win_record("$T1 $ebp 8 @ ="), esp=0x1000, ebp=0x2000, ebx=None, grand_callee_parameter_size=0
    )
    assert variables is not None and variables[".raSearch"] == 0x2004 and "$ebx" not in variables
    assert (
        win_variables(win_record("$T1 8 @"), esp=0, ebp=0xFFFF_FFFE, ebx=None, grand_callee_parameter_size=0)
        is None
    )


def test_win_standard_prologue_program() -> None:
    """walker.rs's worked example: ebp 16, esp 1600 → eip *(20), ebp *(16), esp 24."""
    memory = {20: 0x401000, 16: 0x500}
    result = evaluate_win(
        "$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + =",
        variables={"$ebp": 16, "$esp": 1600},
        read_word=memory.get,
    )
    assert result.ok and result.leftover == 0
    assert {k: result.variables[k] for k in ("$eip", "$ebp", "$esp", "$T0")} == {
        "$eip": 0x401000,
        "$ebp": 0x500,
        "$esp": 24,
        "$T0": 16,
    }
    assignments = [s.assignment for s in result.steps if s.assignment]
    assert assignments == [("$T0", 16), ("$eip", 0x401000), ("$ebp", 0x500), ("$esp", 24)]
    assert result.steps[1].stack == ("$T0", "$ebp")  # variables stay names until an operator reads them
    assert result.reads == (MemoryRead(20, 4, 0x401000), MemoryRead(16, 4, 0x500))


def test_win_equals_glued_to_the_next_token_is_split() -> None:
    """MSVC LTCG writes `=$eip` for `= $eip`."""
    result = evaluate_win("$T0 $esp =$eip $T0 ^ =", variables={"$esp": 16}, read_word={16: 99}.get)
    assert result.ok and result.variables["$eip"] == 99
    assert [s.token for s in result.steps] == ["$T0", "$esp", "=", "$eip", "$T0", "^", "="]


def test_win_undef_deletes_a_variable() -> None:
    result = evaluate_win("$ebx .undef =", variables={"$ebx": 5}, read_word=read)
    assert result.ok and "$ebx" not in result.variables
    assert result.steps[-1].assignment == ("$ebx", None)


def test_win_arithmetic_is_32_bit_and_literals_are_i32() -> None:
    result = evaluate_win("$x $esp 8 - =", variables={"$esp": 4}, read_word=read)
    assert result.variables["$x"] == 0xFFFF_FFFC
    too_big = evaluate_win("$x 4294967295 =", variables={}, read_word=read)
    assert too_big.error == "unknown token '4294967295'"
    assert evaluate_win("$x -1 =", variables={}, read_word=read).variables["$x"] == 0xFFFF_FFFF


@pytest.mark.parametrize(
    ("program", "reason"),
    [
        ("$x $y =", "variable $y is not defined"),
        ("5 6 =", "'=' target is not a variable"),
        ("$x =", "'=' needs a variable and a value"),
        ("$x 1 0 / =", "division by zero"),
        ("$x 1 0 % =", "remainder by zero"),
        ("$x 9 3 @ =", "alignment 3 is not a power of two"),
        ("$x .undef 1 + =", ".undef used as a number"),
        ("eip 1 =", "unknown token 'eip'"),
        ("$x 4 ^ =", "cannot read 4 bytes of memory at 0x4"),
    ],
)
def test_each_win_failure_has_a_reason(program: str, reason: str) -> None:
    result = evaluate_win(program, variables={}, read_word=read)
    assert result.error == reason


def test_win_leftover_values_do_not_fail_the_program() -> None:
    result = evaluate_win("$x 1 = 7", variables={}, read_word=read)
    assert result.ok and result.leftover == 1 and result.variables["$x"] == 1


def test_parse_cfi_rules() -> None:
    assert parse_cfi_rules(".cfa: $rsp 8 + .ra: .cfa -8 + ^ $rbx: .cfa -16 + ^") == [
        (".cfa", "$rsp 8 +"),
        (".ra", ".cfa -8 + ^"),
        ("rbx", ".cfa -16 + ^"),
    ]
    assert parse_cfi_rules("x29: .cfa -16 + ^  lr:  .cfa -8 + ^") == [
        ("x29", ".cfa -16 + ^"),
        ("lr", ".cfa -8 + ^"),
    ]
    assert parse_cfi_rules(".cfa: sp 16  +") == [(".cfa", "sp 16  +")]  # the expression text as written


@pytest.mark.parametrize("text", ["", "$rsp 8 +", ".cfa:", ".cfa: .ra: .cfa ^", ".cfa: 8 .ra:"])
def test_malformed_cfi_rules(text: str) -> None:
    assert parse_cfi_rules(text) is None


def test_compose_cfi_rules_later_rows_override() -> None:
    rules, error = compose_cfi_rules(
        [".cfa: $rsp 8 + .ra: .cfa -8 + ^", ".cfa: $rsp 16 + $rbx: .cfa -16 + ^", "rbx: .cfa -24 + ^"]
    )
    assert error is None
    assert rules == {".cfa": "$rsp 16 +", ".ra": ".cfa -8 + ^", "rbx": ".cfa -24 + ^"}
    none, why = compose_cfi_rules([".cfa: $rsp 8 +", "junk"])
    assert none is None and why is not None and "STACK CFI row 1" in why


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        (" .cfa: $rsp 8 + ", [(".cfa", "$rsp 8 +")]),
        (".cfa:\t$rsp\t8 +\r", [(".cfa", "$rsp\t8 +")]),  # tabs and the like: the general path
        (".cfa: $rsp 8 +\x0b.ra: 1", [(".cfa", "$rsp 8"), ("+\x0b.ra", "1")]),  # \x0b is no separator
        (".cfa: $rsp 8 + .ra:\u00a0 1", [(".cfa", "$rsp 8 + .ra:\u00a0 1")]),  # nor is a no-break space
        ("$$rsp: 1 a:b: 2 c:d 3", [("$rsp", "1"), ("a:b", "2 c:d 3")]),
        (".cfa: " + "1 " * 3000 + "+", [(".cfa", "1 " * 2999 + "1 +")]),  # long: the general path
    ],
)
def test_cfi_rules_split_on_rusts_ascii_whitespace_only(text: str, rules: list[tuple[str, str]]) -> None:
    assert parse_cfi_rules(text) == rules


@pytest.mark.parametrize(
    ("expression", "value", "error"),
    [
        ("$rsp 8 +", 0x1008, None),
        ("  $rsp\t8\n+ ", 0x1008, None),
        ("$rsp\x0b 8 +", None, "register rsp\x0b has no value"),
        ("$rsp +8 +", 0x1008, None),
        ("$rsp 8\u00b2 +", None, "unknown token '8\u00b2'"),  # a superscript two is no digit here
        ("$rsp 1_0 +", None, "unknown token '1_0'"),
    ],
)
def test_cfi_tokens_and_literals_are_rusts(expression: str, value: int | None, error: str | None) -> None:
    result = evaluate_cfi(expression, registers={"rsp": 0x1000}, read_word=read)
    assert (result.value, result.error) == (value, error)
