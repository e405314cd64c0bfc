"""ARM64 and ARM (Thumb) crashes: decoded beyond rust-minidump 0.25, which analyses amd64 only.

The rust-minidump-compatible JSON keeps the analysis fields as the reference writes them (null)
unless `--analysis-all-cpus` asks; the human report shows our analysis.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.analysis import NO_UPDATE, AccessType, Flow, MemoryAccess, arm
from inspector.core.report.human import render_human
from inspector.core.types import Cpu
from tests.analysis.conftest import analyse, crash_dump, crash_info

PC = 0x5555_0000_1000


@pytest.mark.parametrize(
    ("code", "text", "access"),
    [
        ("080440f9", "ldr x8, [x0, #8]", ("x0", 8, 8, AccessType.READ)),
        ("e00b00b9", "str w0, [sp, #8]", ("sp", 8, 4, AccessType.WRITE)),
        ("fd7bbfa9", "stp x29, x30, [sp, #-0x10]!", ("sp", -16, 16, AccessType.WRITE)),
        ("e10b40a9", "ldp x1, x2, [sp]", ("sp", 0, 16, AccessType.READ)),
        ("e0070139", "strb w0, [sp, #0x41]", ("sp", 0x41, 1, AccessType.WRITE)),
        ("e10700f8", "str x1, [sp], #0", ("sp", 0, 8, AccessType.WRITE)),
    ],
)
def test_arm64_memory_operands(code: str, text: str, access: tuple[str, int, int, AccessType]) -> None:
    decoded, error = arm.decode(bytes.fromhex(code), PC, arm64=True)
    assert error is None and decoded is not None
    assert decoded.instruction.text == text
    [(memory, direction)] = decoded.accesses
    assert (memory.base, memory.displacement, memory.size, direction) == access


def test_arm64_flow_and_targets() -> None:
    def flow(code: str) -> tuple[Flow, int | None]:
        decoded, _ = arm.decode(bytes.fromhex(code), PC, arm64=True)
        assert decoded is not None
        return decoded.instruction.flow, decoded.instruction.branch_target

    assert flow("00013fd6") == (Flow.INDIRECT_CALL, None)  # blr x8
    assert flow("c0035fd6") == (Flow.RETURN, None)  # ret
    assert flow("01000094") == (Flow.CALL, PC + 4)  # bl
    assert flow("00080054") == (Flow.CONDITIONAL_BRANCH, PC + 0x100)  # b.eq
    assert flow("000020d4") == (Flow.EXCEPTION, None)  # brk #0


def test_arm64_crash_beyond_the_reference(tmp_path: Path) -> None:
    """`ldr x8, [x0, #8]` with x0 = 0: a null pointer plus 8."""
    path = crash_dump(
        tmp_path,
        bytes.fromhex("080440f9"),
        cpu=Cpu.ARM64,
        registers={"x0": 0, "x30": PC + 0x40},
        pc=PC,
        sp=0x7FFF_0000,
        address=8,
    )
    state = analyse(path)
    # rust-minidump's fields: nothing for ARM64
    reference = crash_info(state)
    assert reference["instruction"] is None and reference["memory_accesses"] is None
    assert reference["adjusted_address"] is None and reference["possible_bit_flips"] is None
    # asked for: ours, in the same schema
    ours = crash_info(state, all_cpus=True)
    assert ours["instruction"] == "ldr x8, [x0, #8]"
    assert ours["memory_accesses"] == [{"access_type": "read", "address": "0x0000000000000008", "size": 8}]
    assert ours["adjusted_address"] == {"kind": "null-pointer", "offset": "0x0000000000000008"}
    assert ours["instruction_pointer_update"] is None
    assert ours["possible_bit_flips"] is None  # never on ARM64 (rust-minidump's rule)
    text = render_human(state)
    assert "Crashing instruction: `ldr x8, [x0, #8]`" in text
    assert "    ** Null pointer detected with offset: 0x0000000000000008" in text
    # the reference's text stays available
    assert "Crashing instruction" not in render_human(state, beyond_reference=False)


def test_arm64_return_reads_the_link_register(tmp_path: Path) -> None:
    path = crash_dump(tmp_path, bytes.fromhex("c0035fd6"), cpu=Cpu.ARM64, registers={"x30": 0x1234}, pc=PC)
    state = analyse(path)
    assert state.analysis is not None and state.analysis.beyond_reference is not None
    analysis = state.analysis.beyond_reference.instruction
    assert analysis is not None
    update = analysis.instruction_pointer_update
    assert isinstance(update, MemoryAccess) and update.address == 0x1234
    assert analysis.memory_accesses == ()


def test_thumb_crash(tmp_path: Path) -> None:
    """`ldr r0, [r0, #4]` in Thumb state (the T bit of cpsr), r0 = 0."""
    path = crash_dump(
        tmp_path,
        bytes.fromhex("40680000"),
        cpu=Cpu.ARM,
        registers={"r0": 0, "cpsr": 0x20},
        pc=0x10000,
        sp=0x7FFF0000,
        address=4,
    )
    state = analyse(path)
    ours = crash_info(state, all_cpus=True)
    assert ours["instruction"] == "ldr r0, [r0, #4]"
    assert ours["memory_accesses"] == [{"access_type": "read", "address": "0x00000004", "size": 4}]
    assert ours["adjusted_address"] == {"kind": "null-pointer", "offset": "0x00000004"}
    assert crash_info(state)["instruction"] is None


def test_thumb_push_and_pop() -> None:
    push, _ = arm.decode(bytes.fromhex("10b5"), 0x10000, arm64=False, thumb=True)
    assert push is not None and push.instruction.text == "push {r4, lr}"
    regs = {"sp": 0x8000, "r4": 1, "lr": 2}
    analysis = arm.analyze(push, regs.get, lambda _: None, 4)
    assert analysis.memory_accesses == (MemoryAccess(0x7FF8, 8, AccessType.WRITE),)
    assert analysis.instruction_pointer_update is NO_UPDATE
    pop, _ = arm.decode(bytes.fromhex("10bd"), 0x10000, arm64=False, thumb=True)
    assert pop is not None and pop.instruction.flow is Flow.RETURN
    popped = arm.analyze(pop, regs.get, {0x8004: 0x10101}.get, 4)
    assert popped.memory_accesses == (MemoryAccess(0x8000, 8, AccessType.READ),)
    assert isinstance(popped.instruction_pointer_update, MemoryAccess)
    assert popped.instruction_pointer_update.address == 0x10101


def test_arm_pc_relative_load_uses_the_pipeline_offset() -> None:
    decoded, _ = arm.decode(bytes.fromhex("08009fe5"), 0x10000, arm64=False)  # ldr r0, [pc, #8]
    assert decoded is not None
    analysis = arm.analyze(decoded, {}.get, lambda _: None, 4)
    assert analysis.memory_accesses == (MemoryAccess(0x10010, 4, AccessType.READ),)


def test_linear_sweep_goes_on_after_a_bad_word() -> None:
    code = bytes.fromhex("080440f9" + "ffffffff" + "c0035fd6")  # ldr; (undefined); ret
    texts = [d.instruction.text if d else None for d in arm.decode_all(code, PC, arm64=True)]
    assert texts == ["ldr x8, [x0, #8]", None, "ret"]


def test_truncated_and_invalid_arm_code() -> None:
    assert arm.decode(bytes.fromhex("0804"), PC, arm64=True) == (None, "truncated")
    assert arm.decode(bytes.fromhex("ffffffff"), PC, arm64=True) == (None, "invalid")
