"""x86 and x86-64: decoding with iced-x86, text in rust-minidump's syntax, and its access rules.

iced-x86 decodes (and gives exact operand information: base, index, scale, displacement,
segment, memory size, branch targets). The text is assembled here from those operands in
the syntax of yaxpeax-x86 2.0's `Display`, which rust-minidump 0.25 prints: Intel order,
`dword [rax + rdx * 8 - 0x10]` (size keyword, no `ptr`, every scale written, zero
displacements left out), `qword fs:[0x28]`, signed hex immediates (`cmp rax, -0x1000`;
unsigned for `int`, `enter`, `in`/`out` and VEX/EVEX imm8), relative branches as
`$+0x19`, `rep stos dword es:[rdi], eax` for string instructions, and yaxpeax's names for
condition codes (`jz`, `jnb`, `jna`; `cmovnb`; `setae`). iced's own NASM formatter gets
most of that with options but not the segment placement, the relative branches, the string
instructions or the per-family condition names, which is why the text is put together here.
Known remaining differences (x87 implicit `st(0)` operands, a few yaxpeax decoding quirks)
are listed in tests/golden/KNOWN_DIFFERENCES.md.

The access rules (which memory an instruction reads or writes, the instruction-pointer
update, division / privileged properties) follow `op_analysis.rs`; rust-minidump names the
opcodes it derives accesses for, others get accesses without a direction.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from inspector.core.analysis.iced import ix
from inspector.core.analysis.model import (
    MASK64,
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
from inspector.core.record import Record, replace

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    import iced_x86

    from inspector.core.analysis.model import RegisterLookup

#: rust-minidump's `AccessDerivableOpcode` (yaxpeax names), with the direction of each memory operand.
_DERIVABLE: dict[str, tuple[AccessType | None, ...]] = {
    "add": (AccessType.READ_WRITE, AccessType.READ),
    "sub": (AccessType.READ_WRITE, AccessType.READ),
    "call": (AccessType.READ,),
    "jmp": (AccessType.READ,),
    "jmpf": (AccessType.READ,),
    "push": (AccessType.READ,),
    "cmp": (AccessType.READ, AccessType.READ),
    "ucomiss": (AccessType.READ, AccessType.READ),
    "dec": (AccessType.READ_WRITE,),
    "inc": (AccessType.READ_WRITE,),
    "pop": (AccessType.WRITE,),
    "mov": (AccessType.WRITE, AccessType.READ),
    "movaps": (AccessType.WRITE, AccessType.READ),
    "movups": (AccessType.WRITE, AccessType.READ),
    "lea": (None, None),
    "ret": (),
    "retf": (),
}
_JCC = frozenset(
    {"jo", "jno", "jb", "jnb", "jz", "jnz", "ja", "jna", "js", "jns", "jp", "jnp", "jl", "jge", "jg", "jle"}
)
_DERIVABLE_NAMES = frozenset(_DERIVABLE) | _JCC
#: rust-minidump's `is_privileged` list (yaxpeax opcode names; `mov` is there for control registers).
_PRIVILEGED = frozenset(
    {
        "cli", "clts", "hlt", "in", "ins", "int", "into", "invd", "invept", "invlpg", "invvpid", "iret",
        "iretd", "iretq", "lgdt", "lidt", "lldt", "lmsw", "ltr", "monitor", "mov", "mwait", "out",
        "outs", "rdmsr", "rdpmc", "rdtsc", "rdtscp", "retf", "sti", "swapgs", "sysexit", "sysret",
        "vmcall", "vmclear", "vmlaunch", "vmptrld", "vmptrst", "vmread", "vmresume", "vmwrite", "vmxoff",
        "vmxon", "wbinvd", "wrmsr", "xsetbv",
    }
)  # fmt: skip
_IP_UPDATERS = frozenset({"call", "callf", "jmp", "jmpf", "jmpe"})
_RETURNS = frozenset({"ret", "retf", "iret", "iretd", "iretq"})

#: iced's condition-code spelling -> yaxpeax's, per instruction family.
_JCC_NAMES = {"e": "z", "ne": "nz", "ae": "nb", "be": "na"}
_CMOV_NAMES = {"e": "z", "ne": "nz", "ae": "nb", "be": "na"}
_SET_NAMES = {"e": "z", "ne": "nz"}
_RENAMES = {"pause": "nop", "prefetcht0": "prefetch0", "prefetcht1": "prefetch1", "prefetcht2": "prefetch2",
            "iretw": "iret", "sysretq": "sysret", "sysexitq": "sysexit"}  # fmt: skip
_STRING_NAMES = ("movs", "cmps", "stos", "lods", "scas", "ins", "outs")

#: yaxpeax's memory-size keywords by size in bytes ("ptr" when the size is not one of these).
_SIZE_WORDS = {1: "byte", 2: "word", 4: "dword", 6: "far", 8: "qword", 10: "mword", 16: "xmmword",
               32: "ymmword", 64: "zmmword"}  # fmt: skip


class _Iced(Record):
    """iced-x86's formatter (for mnemonics and register names) and the codes this module compares
    with. The codes are iced's answers for their encodings, not read from `ix.Code` or
    `ix.Mnemonic`: those two modules are most of what importing iced costs (`analysis.iced`)."""

    formatter: iced_x86.Formatter
    invalid: int  # `Code.INVALID`: what did not decode
    nop: int  # `Mnemonic.NOP`
    moffs: frozenset[int]  # `mov` with a 64-bit absolute address
    xchg_short: frozenset[int]  # `xchg eax, r32` (90+r)


#: `mov al/ax/eax/rax, [moffs]` and `mov [moffs], al/ax/eax/rax` (A0-A3, 66 and REX.W prefixes),
#: each with its 8-byte address in 64-bit code.
_MOFFS_ENCODINGS = tuple(
    opcode + bytes(8)
    for opcode in (b"\xa0", b"\x66\xa1", b"\xa1", b"\x48\xa1", b"\xa2", b"\x66\xa3", b"\xa3", b"\x48\xa3")
)
#: `xchg ax, cx`, `xchg eax, ecx`, `xchg rax, rcx`: the short (90+r) forms.
_XCHG_SHORT_ENCODINGS = (b"\x66\x91", b"\x91", b"\x48\x91")


@functools.cache
def _iced() -> _Iced:
    """Made on first use: iced-x86 is loaded only when a crash is analysed."""
    formatter = ix.Formatter(ix.FormatterSyntax.NASM)
    formatter.use_pseudo_ops = False  # `vpcmpb k0, zmm0, zmm2, 0x0`, not `vpcmpeqb`

    def code(raw: bytes) -> int:
        return int(ix.Decoder(64, raw).decode().code)

    return _Iced(
        formatter,
        int(ix.Instruction().code),
        int(ix.Decoder(64, b"\x90").decode().mnemonic),
        frozenset(map(code, _MOFFS_ENCODINGS)),
        frozenset(map(code, _XCHG_SHORT_ENCODINGS)),
    )


def invalid_code() -> int:
    """iced's `Code.INVALID`: the code of what did not decode."""
    return _iced().invalid


def _register_name(register: iced_x86.Register_) -> str:
    name: str = _iced().formatter.format_register(register)
    if name.startswith("st") and name[2:].isdigit():
        return f"st({name[2:]})"  # yaxpeax's x87 register names
    return name


class Decoded(Record):
    """A decoded instruction with what rust-minidump's analysis needs beside it.

    `has_memory` / `mem_size` are yaxpeax's `Instruction::mem_size()`: whether the instruction
    is said to touch memory at all (explicitly, or the stack for push / pop / call / ret, but
    not `push imm`), and the size in bytes (None when yaxpeax has no word for it: `ptr`).
    """

    instruction: Instruction
    mnemonic: str
    has_memory: bool
    mem_size: int | None


def decode(code: bytes, address: int, bitness: int) -> tuple[Decoded | None, str | None]:
    """The first instruction of `code` at `address`, or (None, "truncated" / "invalid")."""
    decoder = ix.Decoder(bitness, code, ip=address)
    ins = decoder.decode()
    if ins.code == _iced().invalid:
        return None, "truncated" if decoder.last_error == ix.DecoderError.NO_MORE_BYTES else "invalid"
    return describe(ins, code, bitness), None


def decode_all(code: bytes, address: int, bitness: int) -> list[Decoded | None]:
    """Every instruction of `code` in a linear sweep (None where the bytes do not decode)."""
    out: list[Decoded | None] = []
    for ins in ix.Decoder(bitness, code, ip=address):
        offset = ins.ip - address
        if ins.code == _iced().invalid:
            out.append(None)
        else:
            out.append(describe(ins, code[offset : offset + ins.len], bitness))
    return out


def _hex(value: int) -> str:
    return f"-0x{-value:x}" if value < 0 else f"0x{value:x}"


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _mnemonic(ins: iced_x86.Instruction) -> str:
    name: str = _iced().formatter.format_mnemonic(ins, ix.FormatMnemonicOptions.NO_PREFIXES)
    if ins.is_string_instruction:
        for base in _STRING_NAMES:
            if name.startswith(base):
                return base
    if ins.is_jcc_short_or_near and name[1:] in _JCC_NAMES:
        return "j" + _JCC_NAMES[name[1:]]
    if name.startswith("cmov") and name[4:] in _CMOV_NAMES:
        return "cmov" + _CMOV_NAMES[name[4:]]
    if name.startswith("set") and name[3:] in _SET_NAMES and ins.op_count == 1:
        return "set" + _SET_NAMES[name[3:]]
    if ins.is_jmp_far or ins.is_jmp_far_indirect:
        return "jmpf"
    if ins.is_call_far or ins.is_call_far_indirect:
        return "callf"
    return _RENAMES.get(name, name)


#: yaxpeax's operands of the string instructions: (segment or "", register role) in its order,
#: "acc" for the accumulator (al / ax / eax / rax), "dl" for the port (yaxpeax prints dx so).
#: `cmps` names rdi for the ds: operand and rsi for the es: one, as yaxpeax 2.0 prints it.
_STRING_OPERANDS: dict[str, tuple[tuple[str, str], ...]] = {
    "movs": (("es", "di"), ("ds", "si")),
    "stos": (("es", "di"), ("", "acc")),
    "scas": (("es", "di"), ("", "acc")),
    "lods": (("", "acc"), ("", "si")),
    "cmps": (("ds", "di"), ("es", "si")),
    "ins": (("", "di"), ("", "dl")),
    "outs": (("", "dl"), ("", "si")),
}
_ACCUMULATORS = {1: "al", 2: "ax", 4: "eax", 8: "rax"}


def describe(ins: iced_x86.Instruction, raw: bytes, bitness: int) -> Decoded:
    """The instruction's operands and text (see the module docstring for the syntax)."""
    mnemonic = _mnemonic(ins)
    next_ip = ins.next_ip
    memory_size = _real_memory_size(ins)
    if mnemonic == "lea" and ins.op0_kind == ix.OpKind.REGISTER:
        memory_size = int(ix.RegisterExt.size(ins.op0_register))
    elif mnemonic.startswith("prefetch"):
        memory_size = 64  # yaxpeax: a cache line, `prefetch0 zmmword [rsi]`
    unsigned_immediates = ins.encoding != ix.EncodingKind.LEGACY or mnemonic in _UNSIGNED_IMMEDIATES
    operands: list[Operand] = []

    def memory(base: str | None, index: str | None, scale: int, disp: int, segment: str | None) -> Operand:
        if base is None and index is None:
            # a 64-bit address only in the `mov` moffs forms; elsewhere a sign-extended disp32,
            # which yaxpeax prints as its 32 bits
            wide = bitness == 64 and ins.code in _iced().moffs
            inner = f"0x{disp & (MASK64 if wide else 0xFFFFFFFF):x}"
            disp = disp if wide else _signed(disp, 32)
        else:
            parts = [p for p in (base, None if index is None else f"{index} * {scale}") if p is not None]
            inner = " + ".join(parts)
            if disp:
                inner += f" - 0x{-disp:x}" if disp < 0 else f" + 0x{disp:x}"
        pc_base = next_ip if base in ("rip", "eip") else None
        operand = MemoryOperand(base, index, scale, disp, memory_size, segment, pc_relative_base=pc_base)
        seg = f"{segment}:" if segment else ""
        return Operand(OperandKind.MEMORY, f"{_size_word(memory_size)} {seg}[{inner}]", memory=operand)

    string_layout = ins.is_string_instruction and mnemonic in _STRING_OPERANDS
    for i in range(0 if string_layout else ins.op_count):
        kind = ins.op_kind(i)
        if kind == ix.OpKind.REGISTER:
            reg = _register_name(ins.op_register(i))
            text = reg
            if i == 0 and ins.has_op_mask:
                text += "{" + _register_name(ins.op_mask) + "}" + ("{z}" if ins.zeroing_masking else "")
            operands.append(Operand(OperandKind.REGISTER, text, register=reg))
        elif kind == ix.OpKind.MEMORY:
            base = None if ins.memory_base == ix.Register.NONE else _register_name(ins.memory_base)
            index = None if ins.memory_index == ix.Register.NONE else _register_name(ins.memory_index)
            if ins.is_ip_rel_memory_operand:
                disp = _signed(ins.memory_displacement - next_ip, 32)
            elif base is None and index is None:
                disp = ins.memory_displacement
            else:
                disp = _signed(ins.memory_displacement, 32)
            segment = None
            if ins.segment_prefix in (ix.Register.FS, ix.Register.GS) or (
                bitness != 64 and ins.segment_prefix != ix.Register.NONE
            ):
                segment = _register_name(ins.segment_prefix)  # 64-bit mode ignores cs, ds, es, ss
            operand = memory(base, index, ins.memory_index_scale, disp, segment)
            if i == 0 and ins.has_op_mask and operand.memory is not None:
                # `vmovdqu8 ymmword [rax]{k1}, ymm16`; yaxpeax's masked memory operand is one
                # rust-minidump does not evaluate, so it is kept out of the accesses too
                mask = "{" + _register_name(ins.op_mask) + "}"
                operand = replace(
                    operand, text=operand.text + mask, memory=replace(operand.memory, masked=True)
                )
            operands.append(operand)
        elif kind in (ix.OpKind.NEAR_BRANCH16, ix.OpKind.NEAR_BRANCH32, ix.OpKind.NEAR_BRANCH64):
            target = ins.near_branch_target
            relative = _signed(target - next_ip, bitness)
            text = ("$-" if relative < 0 else "$+") + f"0x{abs(relative):x}"
            operands.append(Operand(OperandKind.BRANCH, text, value=target))
        elif kind in (ix.OpKind.FAR_BRANCH16, ix.OpKind.FAR_BRANCH32):
            target = ins.far_branch32 if kind == ix.OpKind.FAR_BRANCH32 else ins.far_branch16
            text = f"0x{ins.far_branch_selector:x}:0x{target:x}"
            operands.append(Operand(OperandKind.BRANCH, text, value=target))
        else:
            value, bits = _immediate(ins, kind)
            if value is None:
                continue
            shown = value if unsigned_immediates else _signed(value, bits)
            operands.append(Operand(OperandKind.IMMEDIATE, _hex(shown), value=value))
    if string_layout:  # yaxpeax's operands and order
        prefix = {16: "", 32: "e", 64: "r"}[_address_bits(ins, bitness)]
        for segment, role in _STRING_OPERANDS[mnemonic]:
            if role == "acc":
                name = _ACCUMULATORS.get(memory_size or 0, "al")
                operands.append(Operand(OperandKind.REGISTER, name, register=name))
            elif role == "dl":
                operands.append(Operand(OperandKind.REGISTER, "dl", register="dx"))
            else:
                operands.append(memory(prefix + role, None, 1, 0, segment or None))
    if mnemonic in ("int3", "int1"):
        number = 3 if mnemonic == "int3" else 1
        mnemonic = "int"  # yaxpeax: `int 0x3`
        operands.append(Operand(OperandKind.IMMEDIATE, f"0x{number:x}", value=number))
    if (
        mnemonic == "xchg"
        and len(operands) == 2
        and (operands[1].kind is OperandKind.MEMORY or ins.code in _iced().xchg_short)
    ):
        operands.reverse()  # yaxpeax prints `xchg r/m, reg` in encoding order, the short form eax first
    if len(operands) == 1 and (
        operands[0].memory is not None or (operands[0].register or "").startswith("st(")
    ):
        st0 = Operand(OperandKind.REGISTER, "st(0)", register="st(0)")
        if mnemonic in _X87_STORES:
            operands.append(st0)  # yaxpeax shows x87's implicit st(0): `fstp qword [rax], st(0)`
        elif mnemonic in _X87_LOADS:
            operands.insert(0, st0)  # `fld st(0), dword [rax]`
    if ins.mnemonic == _iced().nop:
        mnemonic = "nop"
    if mnemonic == "nop" and not any(op.kind is OperandKind.MEMORY for op in operands):
        operands = []  # `66 90` is `xchg ax, ax` to iced, `nop` to yaxpeax
    prefixes = ["lock"] if ins.has_lock_prefix else []
    if ins.is_string_instruction and ins.has_rep_prefix:
        prefixes.append("rep")  # also for cmps / scas, where it means repz
    elif ins.is_string_instruction and ins.has_repne_prefix:
        prefixes.append("repnz")
    head = " ".join([*prefixes, mnemonic])
    text = head + (" " + ", ".join(op.text for op in operands) if operands else "")
    branch_target = next((op.value for op in operands if op.kind is OperandKind.BRANCH), None)
    instruction = Instruction(
        address=ins.ip,
        size=ins.len,
        raw=bytes(raw[: ins.len]),
        mnemonic=mnemonic,
        text=text,
        operands=tuple(operands),
        flow=_flow(ins, mnemonic),
        branch_target=branch_target,
    )
    has_memory = any(op.memory is not None for op in operands)
    mem_size = memory_size if memory_size in _SIZE_WORDS else None
    push_immediate = mnemonic == "push" and bool(operands) and operands[0].kind is OperandKind.IMMEDIATE
    if not has_memory and mnemonic in _STACK_USERS and not push_immediate:
        has_memory, mem_size = True, bitness // 8  # the stack slot (yaxpeax gives `push imm` no size)
    return Decoded(instruction, mnemonic, has_memory, mem_size)


_X87_STORES = frozenset({"fst", "fstp", "fist", "fistp", "fisttp", "fbstp"})
_X87_LOADS = frozenset(
    {
        "fld", "fild", "fbld", "fadd", "fiadd", "fsub", "fisub", "fsubr", "fisubr", "fmul", "fimul", "fdiv",
        "fidiv", "fdivr", "fidivr", "fcom", "fcomp", "ficom", "ficomp", "fucom", "fucomp",
    }
)  # fmt: skip


_UNSIGNED_IMMEDIATES = frozenset({"int", "enter", "in", "out", "ret", "retf"})
_STACK_USERS = frozenset({"push", "pop", "call", "callf", "ret", "retf"})


def _size_word(size: int | None) -> str:
    return _SIZE_WORDS.get(size or 0, "ptr")


def _address_bits(ins: iced_x86.Instruction, bitness: int) -> int:
    """The address size of a string instruction (a 0x67 prefix halves it)."""
    for i in range(ins.op_count):
        kind = ins.op_kind(i)
        if kind in (ix.OpKind.MEMORY_SEG_RSI, ix.OpKind.MEMORY_ESRDI, ix.OpKind.MEMORY_SEG_RDI):
            return 64
        if kind in (ix.OpKind.MEMORY_SEG_ESI, ix.OpKind.MEMORY_ESEDI, ix.OpKind.MEMORY_SEG_EDI):
            return 32
        if kind in (ix.OpKind.MEMORY_SEG_SI, ix.OpKind.MEMORY_ESDI, ix.OpKind.MEMORY_SEG_DI):
            return 16
    return bitness


def _real_memory_size(ins: iced_x86.Instruction) -> int | None:
    """Bytes the memory operand covers (an element for broadcasts), None when iced does not know."""
    ms = ins.memory_size
    if ms == ix.MemorySize.UNKNOWN:
        return None
    size = (
        ix.MemorySizeExt.element_size(ms) if ix.MemorySizeExt.is_broadcast(ms) else ix.MemorySizeExt.size(ms)
    )
    return int(size) or None


def _immediate(ins: iced_x86.Instruction, kind: iced_x86.OpKind_) -> tuple[int | None, int]:
    """(value as an unsigned number of `bits`, bits) of an immediate operand; (None, 0) otherwise."""
    table = {
        ix.OpKind.IMMEDIATE8: (ins.immediate8, 8),
        ix.OpKind.IMMEDIATE8_2ND: (ins.immediate8_2nd, 8),
        ix.OpKind.IMMEDIATE16: (ins.immediate16, 16),
        ix.OpKind.IMMEDIATE32: (ins.immediate32, 32),
        ix.OpKind.IMMEDIATE64: (ins.immediate64, 64),
        ix.OpKind.IMMEDIATE8TO16: (ins.immediate8to16, 16),
        ix.OpKind.IMMEDIATE8TO32: (ins.immediate8to32, 32),
        ix.OpKind.IMMEDIATE8TO64: (ins.immediate8to64, 64),
        ix.OpKind.IMMEDIATE32TO64: (ins.immediate32to64, 64),
    }
    found = table.get(kind)
    if found is None:
        return None, 0
    value, bits = found
    return value & ((1 << bits) - 1), bits


def _flow(ins: iced_x86.Instruction, mnemonic: str) -> Flow:
    flows = {
        ix.FlowControl.UNCONDITIONAL_BRANCH: Flow.BRANCH,
        ix.FlowControl.CONDITIONAL_BRANCH: Flow.CONDITIONAL_BRANCH,
        ix.FlowControl.INDIRECT_BRANCH: Flow.INDIRECT_BRANCH,
        ix.FlowControl.CALL: Flow.CALL,
        ix.FlowControl.INDIRECT_CALL: Flow.INDIRECT_CALL,
        ix.FlowControl.RETURN: Flow.RETURN,
        ix.FlowControl.INTERRUPT: Flow.INTERRUPT,
        ix.FlowControl.EXCEPTION: Flow.EXCEPTION,
    }
    return flows.get(ins.flow_control, Flow.EXCEPTION if mnemonic == "ud2" else Flow.NEXT)


# ---- rust-minidump's op analysis ------------------------------------------------------------


def analyze(
    decoded: Decoded,
    registers: RegisterLookup,
    read_pointer: Callable[[int], int | None],
    read_stack: Callable[[int], int | None],
    width: int,
) -> InstructionAnalysis:
    """`op_analysis::amd64::analyze_instruction` for one decoded instruction.

    `registers` answers with the exception context's valid registers by the names the
    decoder prints (rust-minidump knows only the full-width ones, so `eax` as a base makes the
    accesses unknown); `read_pointer` reads a pointer from the dump's memory, `read_stack`
    from the crashing thread's stack. `rip` as a base reads as the crashing instruction's own
    address, as in rust-minidump 0.25 (the CPU uses the next instruction's).
    """
    ins = decoded.instruction
    mnemonic = decoded.mnemonic
    derivable = mnemonic in _DERIVABLE_NAMES
    sp_name = "rsp" if width == 8 else "esp"
    return InstructionAnalysis(
        instruction=ins,
        memory_accesses=_memory_accesses(decoded, registers, sp_name, width),
        instruction_pointer_update=_ip_update(
            decoded,
            registers=registers,
            sp_name=sp_name,
            read_pointer=read_pointer,
            read_stack=read_stack,
            width=width,
        ),
        registers=tuple(sorted({r for m in ins.memory_operands for r in m.registers})),
        is_access_derivable=derivable,
        is_division=mnemonic in ("div", "idiv"),
        is_privileged=mnemonic in _PRIVILEGED,
        is_only_gpf_when_non_canonical=derivable and mnemonic != "movaps",
    )


class _RegisterInvalid(Exception):
    """A register the instruction addresses memory with is not in the context."""


def _address(memory: MemoryOperand, registers: RegisterLookup, width: int) -> tuple[int, bool]:
    """The operand's address and whether its base was null (`MemoryAddressInfo::try_from_operand`)."""

    def lookup(name: str) -> int:
        value = registers(name)
        if value is None:
            raise _RegisterInvalid(name)
        return value

    address, null_base = 0, False
    if memory.base is not None:
        address = lookup(memory.base)
        null_base = address == 0
    if memory.index is not None:
        address += lookup(memory.index) * memory.scale
    address += memory.displacement
    return address & ((1 << (width * 8)) - 1), null_base


def _memory_accesses(
    decoded: Decoded, registers: RegisterLookup, sp_name: str, width: int
) -> tuple[MemoryAccess, ...] | None:
    if not decoded.has_memory:
        return ()
    mnemonic = decoded.mnemonic
    size = decoded.mem_size
    derivable = mnemonic in _DERIVABLE_NAMES
    directions = _DERIVABLE.get(mnemonic, ())
    out: list[MemoryAccess] = []
    try:
        for index, operand in enumerate(decoded.instruction.operands):
            if operand.memory is None or operand.memory.masked:
                continue
            access_type: AccessType | None = AccessType.UNDERIVABLE
            if derivable:
                access_type = directions[index] if index < len(directions) else None
            if access_type is None:
                continue  # lea only computes an address
            address, null_base = _address(operand.memory, registers, width)
            out.append(MemoryAccess(address, size, access_type, is_likely_null_pointer=null_base))
    except _RegisterInvalid:
        return None
    sp = registers(sp_name)
    if derivable and sp is not None:
        if mnemonic in ("call", "push"):
            # rust-minidump: "for unknown reasons, rsp is off by 8 if crash on `call` or `push`"
            below = (sp - 8) & ((1 << (width * 8)) - 1)
            out.append(MemoryAccess(below, size, AccessType.WRITE, is_likely_null_pointer=below == 0))
        elif mnemonic in ("pop", "ret", "retf"):
            out.append(MemoryAccess(sp, size, AccessType.READ, is_likely_null_pointer=sp == 0))
    return tuple(out)


def _ip_update(
    decoded: Decoded,
    *,
    registers: RegisterLookup,
    sp_name: str,
    read_pointer: Callable[[int], int | None],
    read_stack: Callable[[int], int | None],
    width: int,
) -> MemoryAccess | NoUpdate | None:
    """`InstructionPointerUpdate::from_instruction`: None when it cannot be told (or for jcc)."""
    mnemonic = decoded.mnemonic

    def update(address: int) -> MemoryAccess:
        return MemoryAccess(address, None, AccessType.READ, is_likely_null_pointer=address == 0)

    if mnemonic in _IP_UPDATERS:
        operands = decoded.instruction.operands
        operand = operands[0] if operands else None
        if operand is not None and operand.kind is OperandKind.REGISTER and operand.register is not None:
            value = registers(operand.register)
            return None if value is None else update(value)
        if operand is not None and operand.memory is not None:
            try:
                address, _ = _address(operand.memory, registers, width)
            except _RegisterInvalid:
                return None
            target = read_pointer(address)
            return None if target is None else update(target)
        return None  # direct branches are assumed to go where they say
    if mnemonic in _RETURNS:
        sp = registers(sp_name)
        target = None if sp is None else read_stack(sp)
        return None if target is None else update(target)
    if mnemonic in _JCC:
        return None
    return NO_UPDATE
