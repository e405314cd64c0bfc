"""A disassembly listing around one address, for the window's Disassembly pane (no Qt).

`disassemble_around(...)` reads code around a frame's instruction (from the dump's memory,
else from the module's file through a code-bytes provider, as the crash analysis does),
decodes a window of instructions with the same decoders, marks the instruction that holds
the address (the crashing one for frame 0, the call for a caller, whose instruction address
is inside the call), evaluates each memory operand with the frame's registers (an unknown
register makes the address unknown, and says which), and names direct branch targets and
each instruction's function through a `symbolize` callback.

Where to start decoding: ARM and ARM64 instructions have fixed sizes, so the window simply
starts a number of instructions earlier. x86 instructions have variable lengths and
decoding backwards is ambiguous: the listing starts at the function's start when the
symbols give one close enough, else tries start points before the address (farthest first)
and keeps the first whose linear sweep lands exactly on it; when none does, the listing
starts at the address itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from inspector.core.analysis.code_bytes import CodeBytesProvider
from inspector.core.analysis.model import CodeOrigin, Instruction, MemoryOperand, OperandKind
from inspector.core.minidump import CpuContext, MemoryView, Module
from inspector.core.record import Record
from inspector.core.types import Cpu

#: Instructions shown before and after the marked one (a ~64-instruction window decodes in a
#: few milliseconds: see the README's "Disassembly pane").
BEFORE, AFTER = 24, 40
#: The longest x86 instruction.
_X86_LONGEST = 15
#: A function start farther back than this is not decoded from (the window would be mostly hidden).
_MAX_FROM_FUNCTION = 2048

#: `symbolize(address)` -> `name + 0x10` (or None when no symbol covers it)
Symbolize = Callable[[int], str | None]


class OperandValue(Record):
    """A memory operand of a listed instruction evaluated with the frame's registers."""

    operand: int  # index in `Instruction.operands`
    text: str
    address: int | None  # None: a register it uses is not known in this frame
    registers: tuple[str, ...]  # the registers it uses (base, index)
    unknown: tuple[str, ...]  # those not known in this frame


class ListingLine(Record):
    address: int
    raw: bytes
    instruction: Instruction | None  # None: bytes that do not decode
    marked: bool  # holds the frame's instruction address
    function: str | None  # `name + 0x10` of the instruction's address
    branch_target: str | None  # a direct branch's target, named (`name + 0x4`, else the address)
    memory: tuple[OperandValue, ...]

    @property
    def text(self) -> str:
        return "(bad)" if self.instruction is None else self.instruction.text


class Listing(Record):
    """The instructions around `address`, or why there are none (`message`)."""

    address: int
    lines: tuple[ListingLine, ...]
    origin: CodeOrigin
    module: str | None
    path: str | None  # MODULE_FILE: the file read
    message: str | None = None  # NONE: why no code bytes were found, and what would help
    thumb: bool = False

    @property
    def marked_row(self) -> int | None:
        return next((i for i, line in enumerate(self.lines) if line.marked), None)


def register_lookup(cpu: Cpu, context: CpuContext) -> Callable[[str], int | None]:
    """A frame's register by the name a decoder prints (sub-registers from their full register)."""

    def lookup(name: str) -> int | None:
        value = context.get(name)
        if value is not None or context.canonical(name) is not None:
            return value
        full, mask = full_register(cpu, name)
        if full is None:
            return 0 if name in ("xzr", "wzr") else None
        value = context.get(full)
        return None if value is None else value & mask

    return lookup


def full_register(cpu: Cpu, name: str) -> tuple[str | None, int]:
    """(the register `name` is a part of, mask) on x86-64 / ARM64; (None, 0) for anything else."""
    if cpu is Cpu.AMD64:
        if len(name) == 3 and name[0] == "e":  # eax, esp, ...
            return "r" + name[1:], 0xFFFF_FFFF
        if name.startswith("r") and name.endswith("d") and name[1:-1].isdigit():  # r8d
            return name[:-1], 0xFFFF_FFFF
    if cpu is Cpu.ARM64 and name.startswith("w") and name[1:].isdigit():
        return "x" + name[1:], 0xFFFF_FFFF
    return None, 0


def _evaluate(
    index: int, text: str, memory: MemoryOperand, lookup: Callable[[str], int | None], width: int
) -> OperandValue:
    # a pc-relative base reads as the instruction's own place, known whatever the registers
    used = tuple(
        r for r in memory.registers if not (r == memory.base and memory.pc_relative_base is not None)
    )
    unknown = tuple(r for r in used if lookup(r) is None)
    address = None if unknown else memory.evaluate(lookup, width=width)
    return OperandValue(index, text, address, memory.registers, unknown)


def _read(
    start: int,
    end: int,
    *,
    memory: MemoryView,
    module: Module | None,
    providers: Sequence[CodeBytesProvider],
    address: int,
) -> tuple[int, bytes, CodeOrigin, str | None, list[str]]:
    """(first address, bytes, where from, file read, what was tried) covering `address` if anyone has it."""
    region = memory.region_for(address)
    if region is not None:
        lo, hi = max(start, region.base), min(end, region.end)
        data = region.read(lo, hi - lo) or b""
        if data:
            return lo, data, CodeOrigin.DUMP, None, []
    if module is None:
        return start, b"", CodeOrigin.NONE, None, ["the address is in no module of the dump"]
    lo = max(start, module.base)
    tried: list[str] = []
    for provider in providers:
        data = provider(module, lo - module.base, min(end, module.base + module.size) - lo) or b""
        if data:
            return lo, data, CodeOrigin.MODULE_FILE, getattr(provider, "used", {}).get(module.code_file), []
        tried.extend(getattr(provider, "tried", {}).get(module.code_file, []))
    return start, b"", CodeOrigin.NONE, None, tried


def _decode_all(cpu: Cpu, code: bytes, at: int, thumb: bool) -> list[Instruction | None]:
    if cpu in (Cpu.AMD64, Cpu.X86):
        from inspector.core.analysis import x86

        bitness = 64 if cpu is Cpu.AMD64 else 32
        return [None if d is None else d.instruction for d in x86.decode_all(code, at, bitness)]
    from inspector.core.analysis import arm

    return [
        None if d is None else d.instruction
        for d in arm.decode_all(code, at, arm64=cpu is Cpu.ARM64, thumb=thumb)
    ]


def _x86_starts(code: bytes, base: int, first: int, address: int, bitness: int) -> list[int] | None:
    """Where instructions start from `first` up to the one holding `address`, if a sweep from `first`
    reaches an instruction holding it (for a caller, `address` is inside the call)."""
    from inspector.core.analysis.iced import ix
    from inspector.core.analysis.x86 import invalid_code

    starts = []
    for ins in ix.Decoder(bitness, code[first - base : address - base + _X86_LONGEST], ip=first):
        if ins.ip > address or ins.code == invalid_code():
            return None
        starts.append(ins.ip)
        if ins.ip <= address < ins.ip + ins.len:
            return starts
    return None


def _window_start(cpu: Cpu, code: bytes, base: int, address: int, function_start: int | None) -> int:
    """Where to decode from so that the sweep lands on `address`, `BEFORE` instructions before it."""
    bitness = 64 if cpu is Cpu.AMD64 else 32
    firsts = [function_start] if function_start is not None and base <= function_start <= address else []
    firsts += range(max(base, address - BEFORE * 8), address + 1)
    for first in firsts:
        starts = _x86_starts(code, base, first, address, bitness)
        if starts is not None:
            return starts[max(0, len(starts) - 1 - BEFORE)]
    return address


def disassemble_around(
    *,
    cpu: Cpu,
    address: int,
    context: CpuContext | None,
    memory: MemoryView,
    module: Module | None,
    providers: Sequence[CodeBytesProvider] = (),
    function_start: int | None = None,
    symbolize: Symbolize = lambda _address: None,
    thumb: bool = False,
) -> Listing:
    """The listing around `address` (see the module docstring)."""
    name = None if module is None else module.filename
    if cpu not in (Cpu.AMD64, Cpu.X86, Cpu.ARM, Cpu.ARM64):
        return Listing(address, (), CodeOrigin.NONE, name, None, f"{cpu.value} code is not disassembled")
    variable = cpu in (Cpu.AMD64, Cpu.X86)
    if cpu is Cpu.ARM:
        address &= ~1
    unit = 2 if thumb else 4
    if variable:
        back = BEFORE * 8
        if function_start is not None and 0 <= address - function_start <= _MAX_FROM_FUNCTION:
            back = address - function_start
        start, end = address - back, address + (AFTER + 1) * _X86_LONGEST
    else:
        address -= address % unit
        start, end = address - BEFORE * unit, address + (AFTER + 1) * unit
    start = max(start, 0)
    base, code, origin, path, tried = _read(
        start, end, memory=memory, module=module, providers=providers, address=address
    )
    if not code or not base <= address < base + len(code):
        return Listing(address, (), CodeOrigin.NONE, name, None, _missing(address, name, tried))
    if variable:
        first = _window_start(cpu, code, base, address, function_start)
    else:
        first = max(base + (address - base) % unit, address - BEFORE * unit)
    sweep: list[tuple[int, Instruction | None]] = []
    at = first
    for ins in _decode_all(cpu, code[first - base :], first, thumb):
        sweep.append((at, ins))
        at += ins.size if ins is not None else (1 if variable else unit)
    marked = next(
        (i for i, (at, ins) in enumerate(sweep) if at <= address < at + (ins.size if ins else 1)), 0
    )
    window = sweep[max(0, marked - BEFORE) : marked + AFTER + 1]
    lookup = register_lookup(cpu, context) if context is not None else (lambda _name: None)
    width = 8 if cpu in (Cpu.AMD64, Cpu.ARM64) else 4
    lines = []
    for at, ins in window:
        memory_values: list[OperandValue] = []
        target = None
        if ins is not None:
            for i, op in enumerate(ins.operands):
                # a nop's operand is never accessed: its address would only be noise
                if op.memory is not None and not ins.mnemonic.startswith("nop"):
                    memory_values.append(_evaluate(i, op.text, op.memory, lookup, width))
                if op.kind is OperandKind.BRANCH and op.value is not None and target is None:
                    target = symbolize(op.value) or f"{op.value:#x}"
        raw = ins.raw if ins is not None else code[at - base : at - base + 1]
        lines.append(
            ListingLine(
                at,
                raw,
                ins,
                at <= address < at + max(len(raw), 1),
                symbolize(at),
                target,
                tuple(memory_values),
            )
        )
    return Listing(address, tuple(lines), origin, name, path, thumb=thumb)


def _missing(address: int, module: str | None, tried: list[str]) -> str:
    where = f"{address:#x}" + ("" if module is None else f" in {module}")
    text = f"No code bytes for {where}: the dump holds no memory there"
    if tried:
        text += "; " + "; ".join(tried)
    if module is not None:
        text += (
            f". Put the module's file ({module}, the same build) in a symbol path, "
            "or next to the path the dump recorded, to see its code"
        )
    return text + "."
