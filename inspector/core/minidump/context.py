"""CPU register contexts: one immutable `CpuContext` for every CPU, with names, values and validity.

Register names are the lower-case Breakpad / rust-minidump names. A layout's
`names` are its canonical registers in rust-minidump's order, which is also the
order rust-minidump prints frame registers in (JSON `registers`, human
`rip = 0x…` lines); `print_order(cpu)` gives that list. Aliases (`r11`/`fp`,
`x29`/`fp`, `x30`/`lr`, `r13`/`sp` …) resolve to the canonical name.

A context read from the dump has every register valid. The stackwalker builds
caller contexts with `with_registers` (only the registers it recovered are
valid) and `subset`.
"""

from __future__ import annotations

from inspector.core.minidump.context_layouts import (
    ContextLayout,
    FieldValue,
    context_size,
    decode_fields,
    register_bytes,
)
from inspector.core.minidump.errors import BadData, StreamTruncated
from inspector.core.minidump.format import ContextCpuFlag, ProcessorArchitecture, context_cpu_bits
from inspector.core.record import Record, field
from inspector.core.types import Cpu, Os, format_address

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

# --- register sets -------------------------------------------------------------------------------


# the layouts live in context_layouts; their names are offered here too
__all__ = [
    "ARCHITECTURE_SIGNS",
    "REGISTER_SETS",
    "ContextLayout",
    "CpuContext",
    "FieldValue",
    "RegisterSet",
    "architecture_of_context",
    "context_size",
    "cpu_of_architecture",
    "layout_for",
    "print_order",
    "read_context",
    "register_bytes",
]


class RegisterSet(Record):
    """What a layout's registers are called and where the special ones live."""

    layout: ContextLayout
    names: tuple[str, ...]
    width: int
    instruction_pointer: str
    stack_pointer: str
    frame_pointer: str | None
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: rust-minidump's frame-register print order (JSON / human output).
    print_order: tuple[str, ...] = ()

    #: every name the layout answers to (its own and the aliases) -> the canonical name
    _canonical: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = {name: name for name in self.names}
        object.__setattr__(self, "_canonical", {**self.aliases, **names})

    def canonical(self, name: str) -> str | None:
        """The canonical name for `name` (resolving aliases), None if the CPU has no such register."""
        return self._canonical.get(name)


_X86_NAMES = ("eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx", "eflags")
_AMD64_NAMES = (
    "rax",
    "rdx",
    "rcx",
    "rbx",
    "rsi",
    "rdi",
    "rbp",
    "rsp",
    *(f"r{i}" for i in range(8, 16)),
    "rip",
)
_ARM_NAMES = (*(f"r{i}" for i in range(11)), "r12", "fp", "sp", "lr", "pc")
_ARM64_NAMES = (*(f"x{i}" for i in range(29)), "fp", "lr", "sp", "pc")
_MIPS_GPR = (
    "zero",
    "at",
    "v0",
    "v1",
    "a0",
    "a1",
    "a2",
    "a3",
    *(f"t{i}" for i in range(8)),
    *(f"s{i}" for i in range(8)),
    "t8",
    "t9",
    "k0",
    "k1",
    "gp",
    "sp",
    "fp",
    "ra",
)
_MIPS_NAMES = (*_MIPS_GPR, "pc")
_MIPS_PRINT = ("gp", "sp", "fp", "ra", "pc", *(f"s{i}" for i in range(8)))
_PPC_NAMES = (
    "srr0",
    "srr1",
    *(f"r{i}" for i in range(32)),
    "cr",
    "xer",
    "lr",
    "ctr",
    "mq",
    "vrsave",
)
_PPC64_NAMES = tuple(n for n in _PPC_NAMES if n != "mq")
_SPARC_NAMES = (*(f"g_r{i}" for i in range(32)), "ccr", "pc", "npc", "y", "asi", "fprs")
_SPARC_ALIASES = {
    **{f"g{i}": f"g_r{i}" for i in range(8)},
    **{f"o{i}": f"g_r{i + 8}" for i in range(8)},
    **{f"l{i}": f"g_r{i + 16}" for i in range(8)},
    **{f"i{i}": f"g_r{i + 24}" for i in range(8)},
    "sp": "g_r14",
}

REGISTER_SETS: dict[ContextLayout, RegisterSet] = {
    ContextLayout.X86: RegisterSet(ContextLayout.X86, _X86_NAMES, 4, "eip", "esp", "ebp", {}, _X86_NAMES),
    ContextLayout.AMD64: RegisterSet(
        ContextLayout.AMD64, _AMD64_NAMES, 8, "rip", "rsp", "rbp", {}, _AMD64_NAMES
    ),
    ContextLayout.ARM: RegisterSet(
        ContextLayout.ARM,
        _ARM_NAMES,
        4,
        "pc",
        "sp",
        "fp",
        {"r11": "fp", "r13": "sp", "r14": "lr", "r15": "pc"},
        _ARM_NAMES,
    ),
    ContextLayout.ARM64: RegisterSet(
        ContextLayout.ARM64, _ARM64_NAMES, 8, "pc", "sp", "fp", {"x29": "fp", "x30": "lr"}, _ARM64_NAMES
    ),
    ContextLayout.ARM64_OLD: RegisterSet(
        ContextLayout.ARM64_OLD, _ARM64_NAMES, 8, "pc", "sp", "fp", {"x29": "fp", "x30": "lr"}, _ARM64_NAMES
    ),
    ContextLayout.MIPS: RegisterSet(
        ContextLayout.MIPS, _MIPS_NAMES, 8, "pc", "sp", "fp", {"s8": "fp", "epc": "pc"}, _MIPS_PRINT
    ),
    ContextLayout.PPC: RegisterSet(ContextLayout.PPC, _PPC_NAMES, 4, "srr0", "r1", None, {}, _PPC_NAMES),
    ContextLayout.PPC64: RegisterSet(
        ContextLayout.PPC64, _PPC64_NAMES, 8, "srr0", "r1", None, {}, _PPC64_NAMES
    ),
    ContextLayout.SPARC: RegisterSet(
        ContextLayout.SPARC, _SPARC_NAMES, 8, "pc", "g_r14", "g_r30", _SPARC_ALIASES, _SPARC_NAMES
    ),
}


class _Layout:
    """What a context's accessors need of its layout, looked up once per call.

    The stackwalker reads and builds contexts tens of thousands of times a corpus pass
    (`value`, `is_valid`, `from_registers`); going through the `RegisterSet` and its alias map
    cost three or four calls per register read.
    """

    __slots__ = ("canonical", "mask", "names", "print_slots", "register_set", "slots", "zeros")

    def __init__(self, rs: RegisterSet) -> None:
        index = {name: i for i, name in enumerate(rs.names)}
        self.register_set = rs
        #: every name the layout answers to (its own and the aliases) -> the canonical name
        self.canonical: dict[str, str] = dict(rs._canonical)
        #: every name the layout answers to -> the canonical register's index into `values`
        self.slots: dict[str, int] = {name: index[canonical] for name, canonical in self.canonical.items()}
        self.mask = (1 << (rs.width * 8)) - 1
        self.zeros = [0] * len(rs.names)
        #: (name, index) in rust-minidump's print order
        self.print_slots = tuple((name, index[name]) for name in rs.print_order)
        self.names = frozenset(rs.names)

    def canonical_set(self, names: Iterable[str]) -> frozenset[str]:
        """The canonical names of `names` (KeyError naming the register for one the layout lacks)."""
        given = frozenset(names)
        if given <= self.names:  # the usual case: canonical names already
            return given
        return frozenset(_resolve(self.register_set, name) for name in given)


_LAYOUTS: dict[ContextLayout, _Layout] = {layout: _Layout(rs) for layout, rs in REGISTER_SETS.items()}

#: Layout used for a CPU when a context is built from scratch.
_DEFAULT_LAYOUT: dict[Cpu, ContextLayout] = {
    Cpu.X86: ContextLayout.X86,
    Cpu.AMD64: ContextLayout.AMD64,
    Cpu.ARM: ContextLayout.ARM,
    Cpu.ARM64: ContextLayout.ARM64,
    Cpu.MIPS: ContextLayout.MIPS,
    Cpu.MIPS64: ContextLayout.MIPS,
    Cpu.PPC: ContextLayout.PPC,
    Cpu.PPC64: ContextLayout.PPC64,
    Cpu.SPARC: ContextLayout.SPARC,
}


def print_order(cpu: Cpu) -> tuple[str, ...]:
    """rust-minidump's order for printing a frame's valid registers on `cpu` (empty if unknown)."""
    layout = _DEFAULT_LAYOUT.get(cpu)
    return REGISTER_SETS[layout].print_order if layout else ()


def layout_for(cpu: Cpu) -> ContextLayout:
    """The default in-dump layout for `cpu` (ARM64 → the current Microsoft layout)."""
    try:
        return _DEFAULT_LAYOUT[cpu]
    except KeyError:
        raise ValueError(f"no register context for CPU {cpu.value}") from None


# --- the context -----------------------------------------------------------------------------------


class CpuContext(Record):
    """Registers of one frame: values for every register of the layout, and which are valid.

    `values` is aligned with `register_set.names`; values of invalid registers
    are leftovers and must not be trusted (`get` returns None for them).
    `raw` holds the context bytes as read from the dump (None for contexts the
    stackwalker built) so the dump report can print every field.
    """

    cpu: Cpu
    layout: ContextLayout
    values: tuple[int, ...]
    valid: frozenset[str]
    context_flags: int = 0
    frame_pointer_name: str | None = None
    raw: bytes | None = field(default=None, repr=False, compare=False)
    endian: str = field(default="<", repr=False, compare=False)

    # -- construction --

    @classmethod
    def from_registers(
        cls,
        cpu: Cpu,
        registers: Mapping[str, int],
        *,
        valid: Iterable[str] | None = None,
        layout: ContextLayout | None = None,
        frame_pointer_name: str | None = None,
        context_flags: int = 0,
    ) -> CpuContext:
        """A context with the given register values (others 0); valid = `valid` or the given names."""
        table = _LAYOUTS[layout or layout_for(cpu)]
        values = table.zeros.copy()
        _store(table, values, registers)
        rs = table.register_set
        return cls(
            cpu,
            rs.layout,
            tuple(values),
            table.canonical_set(registers if valid is None else valid),
            context_flags,
            frame_pointer_name or rs.frame_pointer,
        )

    def with_registers(self, registers: Mapping[str, int], *, keep_valid: bool = False) -> CpuContext:
        """A new context: these registers set, and only they valid (plus the old valid set if `keep_valid`).

        This is how a caller frame is made: the walker passes the registers it
        recovered (and the callee-saved ones it forwards); everything else is
        invalid in the caller.
        """
        table = _LAYOUTS[self.layout]
        values = list(self.values)
        _store(table, values, registers)
        names = table.canonical_set(registers)
        return CpuContext(
            self.cpu,
            self.layout,
            tuple(values),
            names | self.valid if keep_valid else names,
            self.context_flags,
            self.frame_pointer_name,
            None,
            self.endian,
        )

    def subset(self, names: Iterable[str]) -> CpuContext:
        """The same values with validity reduced to `names` (those that were valid)."""
        keep = _LAYOUTS[self.layout].canonical_set(names) & self.valid
        return CpuContext(
            self.cpu,
            self.layout,
            self.values,
            keep,
            self.context_flags,
            self.frame_pointer_name,
            self.raw,
            self.endian,
        )

    # -- access --

    @property
    def register_set(self) -> RegisterSet:
        return _LAYOUTS[self.layout].register_set

    @property
    def names(self) -> tuple[str, ...]:
        """Every register of the layout, canonical names, in rust-minidump's order."""
        return self.register_set.names

    @property
    def pointer_width(self) -> int:
        """Bytes per general-purpose register (4 or 8)."""
        return self.register_set.width

    def canonical(self, name: str) -> str | None:
        return _LAYOUTS[self.layout].canonical.get(name)

    def is_valid(self, name: str) -> bool:
        return _LAYOUTS[self.layout].canonical.get(name) in self.valid

    def get(self, name: str) -> int | None:
        """The register's value, or None when it is not valid (or the CPU has no such register)."""
        table = _LAYOUTS[self.layout]
        if table.canonical.get(name) not in self.valid:
            return None
        return self.values[table.slots[name]]

    def value(self, name: str) -> int:
        """The stored value whether valid or not; KeyError for a name the CPU does not have."""
        return self.values[_LAYOUTS[self.layout].slots[name]]

    @property
    def instruction_pointer(self) -> int | None:
        return self.get(self.register_set.instruction_pointer)

    @property
    def stack_pointer(self) -> int | None:
        return self.get(self.register_set.stack_pointer)

    @property
    def frame_pointer(self) -> int | None:
        """The ABI frame pointer (r7 on iOS ARM, r11/`fp` on other ARM), None if not valid."""
        name = self.frame_pointer_name or self.register_set.frame_pointer
        return None if name is None else self.get(name)

    def registers(self) -> Iterator[tuple[str, int]]:
        """(name, value) for every register, valid or not, in layout order."""
        return zip(self.names, self.values, strict=True)

    def valid_registers(self) -> list[tuple[str, int]]:
        """(name, value) for the valid registers in rust-minidump's print order."""
        values, valid = self.values, self.valid
        return [(name, values[i]) for name, i in _LAYOUTS[self.layout].print_slots if name in valid]

    def format_register(self, name: str) -> str:
        """`0x` + hex zero-padded to the register width, as rust-minidump prints registers."""
        return format_address(self.value(name), self.pointer_width)

    def fields(self) -> dict[str, FieldValue]:
        """Every field of the raw structure, by name, for the dump report (empty for built contexts)."""
        if self.raw is None:
            return {}
        return decode_fields(self.layout, self.raw, self.endian)


def _store(table: _Layout, values: list[int], registers: Mapping[str, int]) -> None:
    """Put each register's value, cut to the register width, into its slot of `values`."""
    mask, slots = table.mask, table.slots
    try:
        for name, value in registers.items():
            values[slots[name]] = value & mask
    except KeyError:
        for name in registers:
            _resolve(table.register_set, name)  # raises the error that names the register
        raise


def _resolve(rs: RegisterSet, name: str) -> str:
    canonical = rs.canonical(name)
    if canonical is None:
        raise KeyError(f"{rs.layout.value} has no register {name!r}")
    return canonical


# --- reading from a dump ------------------------------------------------------------------------

#: processor_architecture -> (layouts to try, CPU reported).
_ARCH_LAYOUTS: dict[int, tuple[ContextLayout, ContextCpuFlag, Cpu]] = {
    ProcessorArchitecture.INTEL: (ContextLayout.X86, ContextCpuFlag.X86, Cpu.X86),
    ProcessorArchitecture.IA32_ON_WIN64: (ContextLayout.X86, ContextCpuFlag.X86, Cpu.X86),
    ProcessorArchitecture.AMD64: (ContextLayout.AMD64, ContextCpuFlag.AMD64, Cpu.AMD64),
    ProcessorArchitecture.ARM: (ContextLayout.ARM, ContextCpuFlag.ARM, Cpu.ARM),
    ProcessorArchitecture.ARM64: (ContextLayout.ARM64, ContextCpuFlag.ARM64, Cpu.ARM64),
    ProcessorArchitecture.ARM64_OLD: (ContextLayout.ARM64_OLD, ContextCpuFlag.ARM64_OLD, Cpu.ARM64),
    ProcessorArchitecture.MIPS: (ContextLayout.MIPS, ContextCpuFlag.MIPS, Cpu.MIPS),
    ProcessorArchitecture.MIPS64: (ContextLayout.MIPS, ContextCpuFlag.MIPS64, Cpu.MIPS64),
    ProcessorArchitecture.PPC: (ContextLayout.PPC, ContextCpuFlag.PPC, Cpu.PPC),
    ProcessorArchitecture.PPC64: (ContextLayout.PPC64, ContextCpuFlag.PPC64, Cpu.PPC64),
    ProcessorArchitecture.SPARC: (ContextLayout.SPARC, ContextCpuFlag.SPARC, Cpu.SPARC),
}


def _register_values(layout: ContextLayout, f: Mapping[str, FieldValue]) -> list[int]:
    def ints(name: str) -> tuple[int, ...]:
        value = f[name]
        assert isinstance(value, tuple)
        return value

    def one(name: str) -> int:
        value = f[name]
        assert isinstance(value, int)
        return value

    if layout in (ContextLayout.X86, ContextLayout.AMD64):
        return [one(n) for n in REGISTER_SETS[layout].names]
    if layout is ContextLayout.ARM:
        r = ints("iregs")
        return [*r[:11], r[12], r[11], r[13], r[14], r[15]]
    if layout in (ContextLayout.ARM64, ContextLayout.ARM64_OLD):
        r = ints("iregs")
        return [*r[:29], r[29], r[30], one("sp"), one("pc")]
    if layout is ContextLayout.MIPS:
        return [*ints("iregs"), one("epc")]
    if layout in (ContextLayout.PPC, ContextLayout.PPC64):
        extra = (
            ("cr", "xer", "lr", "ctr", "mq", "vrsave")
            if layout is ContextLayout.PPC
            else (
                "cr",
                "xer",
                "lr",
                "ctr",
                "vrsave",
            )
        )
        return [one("srr0"), one("srr1"), *ints("gpr"), *(one(n) for n in extra)]
    return [*ints("g_r"), *(one(n) for n in ("ccr", "pc", "npc", "y", "asi", "fprs"))]


def cpu_of_architecture(processor_architecture: int) -> Cpu:
    """The CPU a context of this `processor_architecture` is read as (UNKNOWN if none)."""
    entry = _ARCH_LAYOUTS.get(processor_architecture)
    return Cpu.UNKNOWN if entry is None else entry[2]


#: (offset of context_flags, CPU bits, processor architecture), tried in this order when a dump has
#: no readable SystemInfo stream (amd64 first: its first word is a home address, not its flags).
ARCHITECTURE_SIGNS: tuple[tuple[int, int, int], ...] = (
    (0x30, ContextCpuFlag.AMD64, ProcessorArchitecture.AMD64),
    (0, ContextCpuFlag.X86, ProcessorArchitecture.INTEL),
    (0, ContextCpuFlag.ARM64, ProcessorArchitecture.ARM64),
    (0, ContextCpuFlag.ARM64_OLD, ProcessorArchitecture.ARM64_OLD),
    (0, ContextCpuFlag.ARM, ProcessorArchitecture.ARM),
    (0, ContextCpuFlag.MIPS64, ProcessorArchitecture.MIPS64),
    (0, ContextCpuFlag.MIPS, ProcessorArchitecture.MIPS),
    (0, ContextCpuFlag.PPC64, ProcessorArchitecture.PPC64),
    (0, ContextCpuFlag.PPC, ProcessorArchitecture.PPC),
    (0, ContextCpuFlag.SPARC, ProcessorArchitecture.SPARC),
)


def architecture_of_context(data: bytes | memoryview, endian: str = "<") -> int | None:
    """The processor architecture whose context layout `data` looks like (flags and size), or None."""
    for offset, bits, architecture in ARCHITECTURE_SIGNS:
        if len(data) < offset + 4:
            continue
        flags = int.from_bytes(bytes(data[offset : offset + 4]), "little" if endian == "<" else "big")
        layout = _ARCH_LAYOUTS[architecture][0]
        if context_cpu_bits(flags) == bits and len(data) >= register_bytes(layout):
            return architecture
    return None


def read_context(
    data: bytes | memoryview,
    *,
    processor_architecture: int,
    endian: str = "<",
    os: Os = Os.UNKNOWN,
    offset: int = 0,
) -> CpuContext:
    """Parse a context the way rust-minidump does: layout from the system info, checked by its flags.

    Raises `StreamTruncated` when the bytes end before the layout's last register (bytes
    missing after it, the floating-point state, read as zeros: see `register_bytes`) and
    `BadData` when the CPU is unknown or `context_flags` names another CPU.
    MIPS64 contexts (architecture MIPS64, or MIPS with MIPS64 flags) are read
    too; rust-minidump rejects them.
    """
    entry = _ARCH_LAYOUTS.get(processor_architecture)
    if entry is None:
        raise BadData(
            f"no context layout for processor architecture {processor_architecture:#x}", offset=offset
        )
    layout, expected_flag, cpu = entry
    size = context_size(layout)
    if len(data) < register_bytes(layout):
        raise StreamTruncated(
            f"{layout.value} needs {size} bytes but the context has {len(data)}", offset=offset
        )
    # A context cut short after its registers (a dump cut off by the end of the file) keeps
    # them; the missing floating-point state reads as zeros and the caller reports it.
    raw = bytes(data[:size]).ljust(size, b"\0")
    fields = decode_fields(layout, raw, endian)
    flags = fields["context_flags"]
    assert isinstance(flags, int)
    cpu_bits = context_cpu_bits(flags & 0xFFFFFFFF)
    if layout is ContextLayout.MIPS and cpu_bits in (ContextCpuFlag.MIPS, ContextCpuFlag.MIPS64):
        cpu = Cpu.MIPS64 if cpu_bits == ContextCpuFlag.MIPS64 else Cpu.MIPS
    elif cpu_bits != expected_flag:
        raise BadData(f"context_flags {flags:#x} do not describe a {layout.value} context", offset=offset)
    rs = REGISTER_SETS[layout]
    fp_name = "r7" if layout is ContextLayout.ARM and os is Os.IOS else rs.frame_pointer
    return CpuContext(
        cpu=cpu,
        layout=layout,
        values=tuple(_register_values(layout, fields)),
        valid=frozenset(rs.names),
        context_flags=flags,
        frame_pointer_name=fp_name,
        raw=raw,
        endian=endian,
    )
