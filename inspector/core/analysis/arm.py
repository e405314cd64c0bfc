"""ARM (A32 and Thumb) and ARM64: decoding with Capstone, and the memory an instruction touches.

rust-minidump 0.25 does not analyse these CPUs; this goes beyond it, with the same model as
x86 (`InstructionAnalysis`), so the reports and the window show the crashing instruction and
its accesses. The text is Capstone's (`ldr x0, [x1, #8]`). Directions come from the mnemonic
(loads read, stores write, atomics and exclusives both); sizes from the mnemonic's width
suffix or the transfer register (`ldrb` 1, `ldrh` 2, `w` 4, `x` / `d` 8, `q` 16; pairs twice
that; `push` / `pop` / `ldm` / `stm` four bytes per register). Post-indexed accesses use the
base register as it was; `pc` as a base reads as the instruction + 8 (A32) or + 4 (Thumb).
Vector structure loads (`ld1`…`ld4`) get an unknown size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from inspector.core.analysis.model import (
    NO_UPDATE,
    AccessType,
    Flow,
    Instruction,
    InstructionAnalysis,
    MemoryAccess,
    MemoryOperand,
    NoUpdate,
    Operand,
    OperandKind,
)
from inspector.core.record import Record

if TYPE_CHECKING:
    from inspector.core.analysis.model import RegisterLookup

#: Capstone's names for r9, r10, r12 -> ours.
_ARM_REGISTER_NAMES = {
    "sb": "r9",
    "sl": "r10",
    "ip": "r12",
    "r11": "fp",
    "r13": "sp",
    "r14": "lr",
    "r15": "pc",
}
_REGISTER_BYTES = {"w": 4, "x": 8, "b": 1, "h": 2, "s": 4, "d": 8, "q": 16}

_cs: dict[tuple[bool, bool], Any] = {}


def _capstone(arm64: bool, thumb: bool) -> Any:
    """A Capstone handle with operand details, made on first use (the import is lazy)."""
    key = (arm64, thumb)
    if key not in _cs:
        import capstone

        if arm64:
            handle = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
        else:
            handle = capstone.Cs(
                capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB if thumb else capstone.CS_MODE_ARM
            )
        handle.detail = True
        _cs[key] = handle
    return _cs[key]


class Decoded(Record):
    instruction: Instruction
    accesses: tuple[tuple[MemoryOperand, AccessType], ...]  # what the instruction touches, in order
    register_list: tuple[str, ...]  # push / pop / ldm / stm


def register_name(name: str) -> str:
    """Our name for a Capstone register name (`x29` stays `x29`: the context knows both spellings)."""
    return _ARM_REGISTER_NAMES.get(name, name)


def decode(
    code: bytes, address: int, *, arm64: bool, thumb: bool = False
) -> tuple[Decoded | None, str | None]:
    """The first instruction of `code`, or (None, "truncated" / "invalid")."""
    handle = _capstone(arm64, thumb)
    for ins in handle.disasm(code, address, count=1):
        return _describe(ins, arm64=arm64, thumb=thumb), None
    need = (
        4 if arm64 or not thumb else (4 if len(code) >= 2 and (code[1] & 0xF8) in (0xE8, 0xF0, 0xF8) else 2)
    )
    return None, "truncated" if len(code) < need else "invalid"


def decode_all(code: bytes, address: int, *, arm64: bool, thumb: bool = False) -> list[Decoded | None]:
    """Every instruction of `code` in a linear sweep (None for each undecodable unit)."""
    handle = _capstone(arm64, thumb)
    out: list[Decoded | None] = []
    offset = 0
    step = 2 if thumb and not arm64 else 4
    while offset < len(code):
        found = False
        for ins in handle.disasm(code[offset:], address + offset, count=1):
            out.append(_describe(ins, arm64=arm64, thumb=thumb))
            offset += ins.size
            found = True
        if not found:
            out.append(None)
            offset += step
    return out


def _access_type(mnemonic: str) -> AccessType | None:
    base = mnemonic.split(".", maxsplit=1)[0]
    if base.startswith(
        ("ldadd", "ldclr", "ldeor", "ldset", "ldsmax", "ldsmin", "ldumax", "ldumin", "swp", "cas")
    ):
        return AccessType.READ_WRITE
    if base.startswith(("ld", "pop")):
        return AccessType.READ
    if base.startswith(("st", "push")):
        return AccessType.WRITE
    if base.startswith(("prfm", "prfum", "pld", "pli")):
        return None  # a hint: no fault, no access
    return AccessType.UNDERIVABLE


def _transfer_size(mnemonic: str, registers: list[str], arm64: bool) -> int | None:
    base = mnemonic.split(".", maxsplit=1)[0]
    if base in ("ldrsw", "ldursw", "ldpsw"):
        return 8 if base == "ldpsw" else 4
    if base.startswith(("ld1", "ld2", "ld3", "ld4", "st1", "st2", "st3", "st4")):
        return None
    pair = base in ("ldp", "stp", "ldnp", "stnp", "ldaxp", "ldxp", "stlxp", "stxp", "ldrd", "strd")
    if base.endswith(("b", "sb")) and base not in ("sub",):
        size = 1
    elif base.endswith(("h", "sh")):
        size = 2
    elif registers and arm64:
        first = registers[0]
        size = 8 if first in ("fp", "lr", "sp", "xzr") else _REGISTER_BYTES.get(first[0], 4)
    elif registers:
        size = 8 if registers[0][0] == "d" else 4
    else:
        size = 4 if not arm64 else 8
    return size * 2 if pair else size


def _describe(ins: Any, *, arm64: bool, thumb: bool) -> Decoded:
    if arm64:
        from capstone import arm64_const as c

        reg_kind, imm_kind, mem_kind = c.ARM64_OP_REG, c.ARM64_OP_IMM, c.ARM64_OP_MEM
        invalid = c.ARM64_REG_INVALID
    else:
        from capstone import arm_const as c

        reg_kind, imm_kind, mem_kind = c.ARM_OP_REG, c.ARM_OP_IMM, c.ARM_OP_MEM
        invalid = c.ARM_REG_INVALID
    mnemonic: str = ins.mnemonic
    base_name = mnemonic.split(".", maxsplit=1)[0]
    flow = _flow(ins, mnemonic, arm64)
    registers = [register_name(ins.reg_name(op.reg)) for op in ins.operands if op.type == reg_kind]
    size = _transfer_size(mnemonic, registers, arm64)
    direction = _access_type(mnemonic)
    post_index = bool(getattr(ins, "post_index", False))
    pc_value = ins.address if arm64 else ins.address + (4 if thumb else 8)
    operands: list[Operand] = []
    accesses: list[tuple[MemoryOperand, AccessType]] = []
    for op in ins.operands:
        if op.type == reg_kind:
            name = register_name(ins.reg_name(op.reg))
            operands.append(Operand(OperandKind.REGISTER, name, register=name))
        elif op.type == imm_kind:
            value = op.imm
            if flow in (Flow.BRANCH, Flow.CONDITIONAL_BRANCH, Flow.CALL) and not accesses:
                operands.append(Operand(OperandKind.BRANCH, f"{value:#x}", value=value & ((1 << 64) - 1)))
            else:
                operands.append(Operand(OperandKind.IMMEDIATE, f"#{value:#x}", value=value))
        elif op.type == mem_kind:
            base = None if op.mem.base == invalid else register_name(ins.reg_name(op.mem.base))
            index = None if op.mem.index == invalid else register_name(ins.reg_name(op.mem.index))
            shift = getattr(op, "shift", None)
            scale = 1 << shift.value if index and shift and shift.type and 0 < shift.value < 8 else 1
            disp = int(op.mem.disp)
            if not arm64 and index is None and getattr(op, "subtracted", False):
                disp = -disp
            memory = MemoryOperand(
                base,
                index,
                scale,
                disp,
                size,
                pc_relative_base=pc_value if base == "pc" else None,
                post_index=post_index,
            )
            operands.append(
                Operand(OperandKind.MEMORY, "[" + ", ".join(memory.registers) + "]", memory=memory)
            )
            if direction is not None:
                accesses.append((memory, direction))
    register_list: tuple[str, ...] = ()
    if not arm64 and (base_name in ("push", "pop") or base_name[:3] in ("ldm", "stm")):
        register_list = tuple(registers if base_name in ("push", "pop") else registers[1:])
        accesses = _block_transfer(base_name, registers, len(register_list))
    instruction = Instruction(
        address=ins.address,
        size=ins.size,
        raw=bytes(ins.bytes),
        mnemonic=mnemonic,
        text=f"{mnemonic} {ins.op_str}".strip(),
        operands=tuple(operands),
        flow=flow,
        branch_target=next((op.value for op in operands if op.kind is OperandKind.BRANCH), None),
    )
    return Decoded(instruction, tuple(accesses), register_list)


def _block_transfer(
    mnemonic: str, registers: list[str], count: int
) -> list[tuple[MemoryOperand, AccessType]]:
    """push / pop / ldm / stm: one access of four bytes per register, at its lowest address."""
    size = 4 * count
    if mnemonic == "push":
        return [(MemoryOperand("sp", None, 1, -size, size), AccessType.WRITE)]
    if mnemonic == "pop":
        return [(MemoryOperand("sp", None, 1, 0, size), AccessType.READ)]
    base = registers[0] if registers else "sp"
    mode = mnemonic[3:5]
    offset = {"db": -size, "da": -size + 4, "ib": 4}.get(mode, 0)
    direction = AccessType.READ if mnemonic.startswith("ldm") else AccessType.WRITE
    return [(MemoryOperand(base, None, 1, offset, size), direction)]


def _flow(ins: Any, mnemonic: str, arm64: bool) -> Flow:
    import capstone

    base = mnemonic.split(".", maxsplit=1)[0]
    if base in ("ret", "retaa", "retab") or (not arm64 and base == "bx" and "lr" in ins.op_str):
        return Flow.RETURN
    if base in ("brk", "udf", "hlt", "bkpt", "trap"):
        return Flow.EXCEPTION
    if base in ("svc", "hvc", "smc"):
        return Flow.INTERRUPT
    if ins.group(capstone.CS_GRP_CALL) or base in ("bl", "blx", "blr", "blraa", "blrab"):
        return (
            Flow.INDIRECT_CALL
            if base in ("blr", "blraa", "blrab") or (base == "blx" and "#" not in ins.op_str)
            else Flow.CALL
        )
    if base in ("br", "braa", "brab") or (not arm64 and base == "bx"):
        return Flow.INDIRECT_BRANCH
    if (
        base in ("cbz", "cbnz", "tbz", "tbnz")
        or (base == "b" and "." in mnemonic)
        or (not arm64 and base.startswith("b") and len(base) == 3 and base != "bic")
    ):
        return Flow.CONDITIONAL_BRANCH
    if base == "b":
        return Flow.BRANCH
    if not arm64 and base == "pop" and "pc" in ins.op_str:
        return Flow.RETURN
    return Flow.NEXT


def analyze(
    decoded: Decoded,
    registers: RegisterLookup,
    read_pointer: Callable[[int], int | None],
    width: int,
) -> InstructionAnalysis:
    """The instruction's accesses and instruction-pointer update, with the x86 analysis's meaning."""
    ins = decoded.instruction
    mask = (1 << (width * 8)) - 1

    def lookup(name: str) -> int | None:
        if name.startswith("w") and name[1:].isdigit():
            value = registers("x" + name[1:])
            return None if value is None else value & 0xFFFFFFFF
        if name in ("xzr", "wzr"):
            return 0
        return registers(name)

    accesses: list[MemoryAccess] | None = []
    for mem, direction in decoded.accesses:
        address = mem.evaluate(lookup, width=width)
        if address is None:
            accesses = None
            break
        base_value = (
            mem.pc_relative_base
            if mem.pc_relative_base is not None
            else (lookup(mem.base) if mem.base is not None else None)
        )
        assert accesses is not None
        accesses.append(MemoryAccess(address, mem.size, direction, is_likely_null_pointer=base_value == 0))

    def update(address: int) -> MemoryAccess:
        address &= mask
        return MemoryAccess(address, None, AccessType.READ, is_likely_null_pointer=address == 0)

    ip_update: MemoryAccess | NoUpdate | None = NO_UPDATE
    if ins.flow in (Flow.INDIRECT_BRANCH, Flow.INDIRECT_CALL, Flow.RETURN):
        target_reg = next((op.register for op in ins.operands if op.register is not None), None)
        if ins.mnemonic.startswith("pop"):
            ip_update = None  # the new pc comes from the stack, after the other registers
            sp = lookup("sp")
            if sp is not None and decoded.register_list:
                value = read_pointer((sp + 4 * (len(decoded.register_list) - 1)) & mask)
                ip_update = None if value is None else update(value)
        else:
            value = lookup(target_reg or "lr")
            ip_update = None if value is None else update(value)
    elif ins.flow in (Flow.BRANCH, Flow.CALL, Flow.CONDITIONAL_BRANCH):
        ip_update = None  # direct branches: assumed to go where they say (as rust-minidump does on x86)
    used = sorted({r for mem, _ in decoded.accesses for r in mem.registers})
    return InstructionAnalysis(
        instruction=ins,
        memory_accesses=None if accesses is None else tuple(accesses),
        instruction_pointer_update=ip_update,
        registers=tuple(used),
        is_access_derivable=all(d is not AccessType.UNDERIVABLE for _, d in decoded.accesses),
        is_division=ins.mnemonic.split(".")[0] in ("sdiv", "udiv"),
        is_privileged=ins.mnemonic.split(".")[0] in ("msr", "mrs", "hvc", "smc", "eret", "wfi", "cps"),
        is_only_gpf_when_non_canonical=False,
    )
