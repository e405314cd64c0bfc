"""x86-64 decoding in rust-minidump's syntax, and its access rules.

Each expectation is what rust-minidump 0.25 (`minidump-stackwalk --json`) printed for a
synthetic dump with these bytes at rip = 0x401000, rsp = 0x7fff0000 and every other register 0
(`instruction`, and `memory_accesses` as (access_type or None, address, size)).
"""

from __future__ import annotations

import pytest

from inspector.core.analysis import NO_UPDATE, AccessType, Flow, OperandKind, x86

RIP, RSP = 0x401000, 0x7FFF0000
W = AccessType.WRITE
R = AccessType.READ
RW = AccessType.READ_WRITE
U = None  # rust-minidump derives no direction: the JSON has no access_type

CASES = [
    ("488b4008", "mov rax, qword [rax + 0x8]", [(R, 0x8, 8)]),
    ("c70005000000", "mov dword [rax], 0x5", [(W, 0x0, 4)]),
    ("48891cd0", "mov qword [rax + rdx * 8], rbx", [(W, 0x0, 8)]),
    ("4883f8ff", "cmp rax, -0x1", []),
    ("f7f9", "idiv ecx", []),
    ("ff10", "call qword [rax]", [(R, 0x0, 8), (W, RSP - 8, 8)]),
    ("ffd0", "call rax", [(W, RSP - 8, 8)]),
    ("e800000000", "call $+0x0", [(W, RSP - 8, 8)]),
    ("c3", "ret", [(R, RSP, 8)]),
    ("c20800", "ret 0x8", [(R, RSP, 8)]),
    ("50", "push rax", [(W, RSP - 8, 8)]),
    ("6a00", "push 0x0", []),  # yaxpeax gives `push imm` no memory size: no access at all
    ("ff30", "push qword [rax]", [(R, 0x0, 8), (W, RSP - 8, 8)]),
    ("8f00", "pop qword [rax]", [(W, 0x0, 8), (R, RSP, 8)]),
    ("5b", "pop rbx", [(R, RSP, 8)]),
    ("0f1f00", "nop dword [rax]", [(U, 0x0, 4)]),
    ("6690", "nop", []),
    ("f3ab", "rep stos dword es:[rdi], eax", [(U, 0x0, 4)]),
    ("f3a6", "rep cmps byte ds:[rdi], byte es:[rsi]", [(U, 0x0, 1), (U, 0x0, 1)]),
    ("f2ae", "repnz scas byte es:[rdi], al", [(U, 0x0, 1)]),
    ("ac", "lods al, byte [rsi]", [(U, 0x0, 1)]),
    ("48a5", "movs qword es:[rdi], qword ds:[rsi]", [(U, 0x0, 8), (U, 0x0, 8)]),
    ("6c", "ins byte [rdi], dl", [(U, 0x0, 1)]),
    ("648b042528000000", "mov eax, dword fs:[0x28]", [(R, 0x28, 4)]),
    ("2e8b00", "mov eax, dword [rax]", [(R, 0x0, 4)]),  # 64-bit mode ignores cs:
    # rust-minidump reads rip as the crashing instruction's address (the CPU: the next one's)
    ("8b0500100000", "mov eax, dword [rip + 0x1000]", [(R, RIP + 0x1000, 4)]),
    ("488d0500100000", "lea rax, qword [rip + 0x1000]", []),
    ("c604254200008001", "mov byte [0x80000042], 0x1", [(W, 0xFFFFFFFF80000042, 1)]),
    ("48a14000000000000000", "mov rax, qword [0x40]", [(R, 0x40, 8)]),
    ("0f2800", "movaps xmm0, xmmword [rax]", [(R, 0x0, 16)]),
    ("0f1100", "movups xmmword [rax], xmm0", [(W, 0x0, 16)]),
    ("0f2e00", "ucomiss xmm0, dword [rax]", [(R, 0x0, 4)]),
    ("0fb111", "cmpxchg dword [rcx], edx", [(U, 0x0, 4)]),
    ("f0ff08", "lock dec dword [rax]", [(RW, 0x0, 4)]),
    ("ff00", "inc dword [rax]", [(RW, 0x0, 4)]),
    ("2b00", "sub eax, dword [rax]", [(R, 0x0, 4)]),
    ("3900", "cmp dword [rax], eax", [(R, 0x0, 4)]),
    ("80380a", "cmp byte [rax], 0xa", [(R, 0x0, 1)]),
    ("870514ea1a00", "xchg dword [rip + 0x1aea14], eax", [(U, RIP + 0x1AEA14, 4)]),
    ("91", "xchg eax, ecx", []),
    ("0f0b", "ud2", []),
    ("cc", "int 0x3", []),
    ("cd29", "int 0x29", []),
    ("c70424ffffffff", "mov dword [rsp], -0x1", [(W, RSP, 4)]),
    ("c78424900300000d0000c0", "mov dword [rsp + 0x390], -0x3ffffff3", [(W, RSP + 0x390, 4)]),
    ("483d00f0ffff", "cmp rax, -0x1000", []),
    ("49bbf8bffffffffff7ff", "mov r11, -0x8000000004008", []),
    ("62f37d483fc200", "vpcmpb k0, zmm0, zmm2, 0x0", []),
    ("62f3652825e2fe", "vpternlogd ymm4, ymm3, ymm2, 0xfe", []),
    ("660f70d8e1", "pshufd xmm3, xmm0, -0x1f", []),
    ("62f17c481006", "vmovups zmm0, zmmword [rsi]", [(U, 0x0, 64)]),
    ("62e17f297f00", "vmovdqu8 ymmword [rax]{k1}, ymm16", []),  # a masked store: not evaluated
    ("d900", "fld st(0), dword [rax]", [(U, 0x0, 4)]),
    ("dd18", "fstp qword [rax], st(0)", [(U, 0x0, 8)]),
    ("db38", "fstp mword [rax], st(0)", [(U, 0x0, 10)]),
    ("d931", "fnstenv ptr [rcx]", [(U, 0x0, None)]),
    ("ff2500100000", "jmp qword [rip + 0x1000]", [(R, RIP + 0x1000, 8)]),
    ("eb05", "jmp $+0x5", []),
    ("7400", "jz $+0x0", []),
    ("0f8273ffffff", "jb $-0x8d", []),
    ("480f46f0", "cmovna rsi, rax", []),
    ("0f94c0", "setz al", []),
    ("0f93c0", "setae al", []),
    ("f390", "nop", []),
]


def _registers(name: str) -> int | None:
    return {"rip": RIP, "rsp": RSP}.get(name, 0 if name in _FULL else None)


_FULL = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", *(f"r{i}" for i in range(8, 16))}


def _analyze(code: str) -> x86.InstructionAnalysis:
    decoded, error = x86.decode(bytes.fromhex(code) + b"\xcc" * 16, RIP, 64)
    assert error is None and decoded is not None
    return x86.analyze(decoded, _registers, lambda _: None, lambda _: None, 8)


@pytest.mark.parametrize(("code", "text", "accesses"), CASES, ids=[c[1] for c in CASES])
def test_text_and_accesses_are_rust_minidumps(
    code: str, text: str, accesses: list[tuple[AccessType | None, int, int | None]]
) -> None:
    analysis = _analyze(code)
    assert analysis.instruction.text == text
    assert analysis.memory_accesses is not None
    got = [
        (None if a.access_type is AccessType.UNDERIVABLE else a.access_type, a.address, a.size)
        for a in analysis.memory_accesses
    ]
    assert got == accesses


def test_instruction_pointer_updates() -> None:
    stack = {RSP: 0x7FFF3AB68FC0}
    decoded, _ = x86.decode(bytes.fromhex("c3"), RIP, 64)
    assert decoded is not None
    ret = x86.analyze(decoded, _registers, lambda _: None, stack.get, 8)
    assert isinstance(ret.instruction_pointer_update, x86.MemoryAccess)
    assert ret.instruction_pointer_update.address == 0x7FFF3AB68FC0
    # call through a register: where the register points; through memory: the pointer read there
    call_reg = _analyze("ffd0").instruction_pointer_update
    assert (
        isinstance(call_reg, x86.MemoryAccess) and call_reg.address == 0 and call_reg.is_likely_null_pointer
    )
    decoded, _ = x86.decode(bytes.fromhex("ff10"), RIP, 64)
    assert decoded is not None
    call_mem = x86.analyze(decoded, _registers, {0: 0x401234}.get, lambda _: None, 8)
    assert isinstance(call_mem.instruction_pointer_update, x86.MemoryAccess)
    assert call_mem.instruction_pointer_update.address == 0x401234
    # direct branches are taken on trust, jcc cannot be told, others do not move the pointer
    assert _analyze("e800000000").instruction_pointer_update is None
    assert _analyze("7400").instruction_pointer_update is None
    assert _analyze("488b4008").instruction_pointer_update is NO_UPDATE


def test_unknown_register_makes_the_accesses_unknown() -> None:
    # rust-minidump knows only full-width registers: `[eax]` (0x67 prefix) cannot be evaluated
    analysis = _analyze("678b00")
    assert analysis.instruction.text == "mov eax, dword [eax]"
    assert analysis.memory_accesses is None


def test_properties_used_by_the_inconsistency_checks() -> None:
    div = _analyze("f7f9")
    assert div.is_division and not div.is_access_derivable
    mov = _analyze("488b4008")
    assert mov.is_access_derivable and mov.is_only_gpf_when_non_canonical and mov.is_privileged
    assert not _analyze("0f2800").is_only_gpf_when_non_canonical  # movaps also faults when misaligned
    assert _analyze("fa").is_privileged  # cli
    assert mov.registers == ("rax",)
    assert _analyze("48a5").registers == ("rdi", "rsi")


def test_operands_for_a_disassembly_view() -> None:
    """Memory operands evaluate with any register set (the real rip for rip-relative ones)."""
    analysis = _analyze("488b44c810")  # mov rax, qword [rax + rcx * 8 + 0x10]
    memory = analysis.instruction.operands[1].memory
    assert memory is not None and memory.registers == ("rax", "rcx")
    assert memory.evaluate({"rax": 0x1000, "rcx": 2}.get) == 0x1020
    assert memory.evaluate({"rax": 0x1000}.get) is None  # rcx unknown
    rip_relative = _analyze("8b0500100000").instruction.operands[1].memory
    assert rip_relative is not None and rip_relative.evaluate(lambda _: None) == RIP + 6 + 0x1000
    call = _analyze("e8fb0f0000").instruction
    assert call.flow is Flow.CALL and call.branch_target == RIP + 5 + 0xFFB
    assert call.operands[0].kind is OperandKind.BRANCH and call.text == "call $+0xffb"
    assert _analyze("ffd0").instruction.flow is Flow.INDIRECT_CALL
    assert _analyze("c3").instruction.flow is Flow.RETURN


def test_decode_failures_say_why() -> None:
    assert x86.decode(bytes.fromhex("48"), RIP, 64) == (None, "truncated")
    assert x86.decode(bytes.fromhex("8b04"), RIP, 64) == (None, "truncated")
    assert x86.decode(bytes.fromhex("06") + bytes(15), RIP, 64) == (
        None,
        "invalid",
    )  # push es: not in 64-bit mode


def test_x86_32_bit() -> None:
    decoded, _ = x86.decode(bytes.fromhex("8b4104") + bytes(8), 0x401000, 32)
    assert decoded is not None and decoded.instruction.text == "mov eax, dword [ecx + 0x4]"
    analysis = x86.analyze(decoded, {"ecx": 0x10, "esp": 0x1000}.get, lambda _: None, lambda _: None, 4)
    assert analysis.memory_accesses is not None
    assert [(a.address, a.size, a.access_type) for a in analysis.memory_accesses] == [(0x14, 4, R)]
    decoded, _ = x86.decode(bytes.fromhex("ff15") + (0x402000).to_bytes(4, "little") + bytes(8), 0x401000, 32)
    assert decoded is not None and decoded.instruction.text == "call dword [0x402000]"
    push = x86.analyze(decoded, {"esp": 0x1000}.get, {0x402000: 0x77001234}.get, lambda _: None, 4)
    assert push.memory_accesses is not None
    assert [(a.address, a.size) for a in push.memory_accesses] == [(0x402000, 4), (0xFF8, 4)]
    assert isinstance(push.instruction_pointer_update, x86.MemoryAccess)
    assert push.instruction_pointer_update.address == 0x77001234


def test_linear_sweep() -> None:
    code = bytes.fromhex("554889e5488b4508c3")
    texts = [d.instruction.text if d else None for d in x86.decode_all(code, RIP, 64)]
    assert texts == ["push rbp", "mov rbp, rsp", "mov rax, qword [rbp + 0x8]", "ret"]
