"""The in-dump structures of CPU contexts: one layout per CPU (two for ARM64), field by field.

Each layout is its fields in file order with their struct codes (Microsoft's, Breakpad's
and Crashpad's CONTEXT structures); `decode_fields` reads a context's every field, and
`context_size` / `register_bytes` say how many bytes a layout needs in all and for its
registers alone. `context` builds the `CpuContext` the stackwalker uses from these.
"""

from __future__ import annotations

import struct

from inspector.core.enums import Enum
from inspector.core.memo import memo


class ContextLayout(Enum):
    """The in-dump structure a context was read from (ARM64 has two)."""

    # Members are singletons compared by identity; Enum's own hash (of the member's name, in
    # Python) is a third of a hostile 100 000-frame walk's time: every register access looks
    # the layout up in a dict.
    __hash__ = object.__hash__

    X86 = "CONTEXT_X86"
    AMD64 = "CONTEXT_AMD64"
    ARM = "CONTEXT_ARM"
    ARM64 = "CONTEXT_ARM64"
    ARM64_OLD = "CONTEXT_ARM64_OLD"
    MIPS = "CONTEXT_MIPS"
    PPC = "CONTEXT_PPC"
    PPC64 = "CONTEXT_PPC64"
    SPARC = "CONTEXT_SPARC"


# --- struct layouts: (field name, struct code) in file order ------------------------------------

_FieldSpec = tuple[tuple[str, str], ...]

_X86_FIELDS: _FieldSpec = (
    ("context_flags", "I"),
    ("dr0", "I"),
    ("dr1", "I"),
    ("dr2", "I"),
    ("dr3", "I"),
    ("dr6", "I"),
    ("dr7", "I"),
    ("float_save.control_word", "I"),
    ("float_save.status_word", "I"),
    ("float_save.tag_word", "I"),
    ("float_save.error_offset", "I"),
    ("float_save.error_selector", "I"),
    ("float_save.data_offset", "I"),
    ("float_save.data_selector", "I"),
    ("float_save.register_area", "80s"),
    ("float_save.cr0_npx_state", "I"),
    ("gs", "I"),
    ("fs", "I"),
    ("es", "I"),
    ("ds", "I"),
    ("edi", "I"),
    ("esi", "I"),
    ("ebx", "I"),
    ("edx", "I"),
    ("ecx", "I"),
    ("eax", "I"),
    ("ebp", "I"),
    ("eip", "I"),
    ("cs", "I"),
    ("eflags", "I"),
    ("esp", "I"),
    ("ss", "I"),
    ("extended_registers", "512s"),
)

_AMD64_FIELDS: _FieldSpec = (
    *((f"p{i}_home", "Q") for i in range(1, 7)),
    ("context_flags", "I"),
    ("mx_csr", "I"),
    ("cs", "H"),
    ("ds", "H"),
    ("es", "H"),
    ("fs", "H"),
    ("gs", "H"),
    ("ss", "H"),
    ("eflags", "I"),
    *((f"dr{i}", "Q") for i in (0, 1, 2, 3, 6, 7)),
    *(
        (name, "Q")
        for name in (
            "rax",
            "rcx",
            "rdx",
            "rbx",
            "rsp",
            "rbp",
            "rsi",
            "rdi",
            *(f"r{i}" for i in range(8, 16)),
            "rip",
        )
    ),
    ("float_save", "512s"),
    ("vector_register", "416s"),
    ("vector_control", "Q"),
    ("debug_control", "Q"),
    ("last_branch_to_rip", "Q"),
    ("last_branch_from_rip", "Q"),
    ("last_exception_to_rip", "Q"),
    ("last_exception_from_rip", "Q"),
)

_ARM_FIELDS: _FieldSpec = (
    ("context_flags", "I"),
    ("iregs", "16I"),
    ("cpsr", "I"),
    ("float_save.fpscr", "Q"),
    ("float_save.regs", "32Q"),
    ("float_save.extra", "8I"),
)

_ARM64_FIELDS: _FieldSpec = (
    ("context_flags", "I"),
    ("cpsr", "I"),
    ("iregs", "31Q"),
    ("sp", "Q"),
    ("pc", "Q"),
    ("float_regs", "512s"),
    ("fpcr", "I"),
    ("fpsr", "I"),
    ("bcr", "8I"),
    ("bvr", "8Q"),
    ("wcr", "2I"),
    ("wvr", "2Q"),
)

_ARM64_OLD_FIELDS: _FieldSpec = (
    ("context_flags", "Q"),
    ("iregs", "31Q"),
    ("sp", "Q"),
    ("pc", "Q"),
    ("cpsr", "I"),
    ("fpsr", "I"),
    ("fpcr", "I"),
    ("float_regs", "512s"),
)

_MIPS_FIELDS: _FieldSpec = (
    ("context_flags", "I"),
    ("_pad0", "I"),
    ("iregs", "32Q"),
    ("mdhi", "Q"),
    ("mdlo", "Q"),
    ("hi", "3I"),
    ("lo", "3I"),
    ("dsp_control", "I"),
    ("_pad1", "I"),
    ("epc", "Q"),
    ("badvaddr", "Q"),
    ("status", "I"),
    ("cause", "I"),
    ("float_save.regs", "32Q"),
    ("float_save.fpcsr", "I"),
    ("float_save.fir", "I"),
)

_PPC_VECTOR: _FieldSpec = (
    ("vector_save.save_vr", "512s"),
    ("vector_save.save_vscr", "16s"),
    ("vector_save.save_pad5", "4I"),
    ("vector_save.save_vrvalid", "I"),
    ("vector_save.save_pad6", "7I"),
)

_PPC_FIELDS: _FieldSpec = (
    ("context_flags", "I"),
    ("srr0", "I"),
    ("srr1", "I"),
    ("gpr", "32I"),
    ("cr", "I"),
    ("xer", "I"),
    ("lr", "I"),
    ("ctr", "I"),
    ("mq", "I"),
    ("vrsave", "I"),
    ("float_save.fpregs", "32Q"),
    ("float_save.fpscr_pad", "I"),
    ("float_save.fpscr", "I"),
    *_PPC_VECTOR,
)

_PPC64_FIELDS: _FieldSpec = (
    ("context_flags", "Q"),
    ("srr0", "Q"),
    ("srr1", "Q"),
    ("gpr", "32Q"),
    ("cr", "Q"),
    ("xer", "Q"),
    ("lr", "Q"),
    ("ctr", "Q"),
    ("vrsave", "Q"),
    ("float_save.fpregs", "32Q"),
    ("float_save.fpscr_pad", "I"),
    ("float_save.fpscr", "I"),
    *_PPC_VECTOR,
)

_SPARC_FIELDS: _FieldSpec = (
    ("context_flags", "I"),
    ("flag_pad", "I"),
    ("g_r", "32Q"),
    ("ccr", "Q"),
    ("pc", "Q"),
    ("npc", "Q"),
    ("y", "Q"),
    ("asi", "Q"),
    ("fprs", "Q"),
    ("float_save.regs", "32Q"),
    ("float_save.filler", "Q"),
    ("float_save.fsr", "Q"),
)

_FIELDS: dict[ContextLayout, _FieldSpec] = {
    ContextLayout.X86: _X86_FIELDS,
    ContextLayout.AMD64: _AMD64_FIELDS,
    ContextLayout.ARM: _ARM_FIELDS,
    ContextLayout.ARM64: _ARM64_FIELDS,
    ContextLayout.ARM64_OLD: _ARM64_OLD_FIELDS,
    ContextLayout.MIPS: _MIPS_FIELDS,
    ContextLayout.PPC: _PPC_FIELDS,
    ContextLayout.PPC64: _PPC64_FIELDS,
    ContextLayout.SPARC: _SPARC_FIELDS,
}

FieldValue = int | bytes | tuple[int, ...]


@memo(64)
def _struct_for(layout: ContextLayout, endian: str) -> struct.Struct:
    return struct.Struct(endian + "".join(code for _, code in _FIELDS[layout]))


#: The first field of each layout that holds no register the stackwalker or the reports use
#: (floating-point and vector state, debug registers): a context cut short after the
#: registers still has them.
_FIRST_NON_REGISTER_FIELD = {
    ContextLayout.X86: "extended_registers",
    ContextLayout.AMD64: "float_save",
    ContextLayout.ARM: "float_save.fpscr",
    ContextLayout.ARM64: "float_regs",
    ContextLayout.ARM64_OLD: "float_regs",
    ContextLayout.MIPS: "float_save.regs",
    ContextLayout.PPC: "float_save.fpregs",
    ContextLayout.PPC64: "float_save.fpregs",
    ContextLayout.SPARC: "float_save.regs",
}


@memo(16)
def register_bytes(layout: ContextLayout) -> int:
    """How many leading bytes of the layout hold every register (the rest is floating-point state)."""
    codes = []
    for name, code in _FIELDS[layout]:
        if name == _FIRST_NON_REGISTER_FIELD[layout]:
            break
        codes.append(code)
    return struct.calcsize("<" + "".join(codes))


def context_size(layout: ContextLayout) -> int:
    """Bytes the layout occupies in a dump (what must be present to read it)."""
    return _struct_for(layout, "<").size


def decode_fields(layout: ContextLayout, data: bytes | memoryview, endian: str) -> dict[str, FieldValue]:
    """Every field of the layout by name, in file order (an array field as a tuple)."""
    flat = _struct_for(layout, endian).unpack_from(data, 0)
    names, arrays = _field_plan(layout)
    if not arrays:  # every field one value (x86, amd64): the names zipped onto the values
        return dict(zip(names, flat, strict=True))
    out: dict[str, FieldValue] = {}
    for name, (start, count) in zip(names, arrays, strict=True):
        out[name] = flat[start] if count is None else tuple(flat[start : start + count])
    return out


@memo(16)
def _field_plan(layout: ContextLayout) -> tuple[tuple[str, ...], tuple[tuple[int, int | None], ...]]:
    """The layout's field names, and where each starts among the unpacked values and how many it
    has (None: one value); no places at all when every field is one value. Worked out once: the
    contexts of every thread are decoded."""
    names = []
    places: list[tuple[int, int | None]] = []
    position = 0
    for name, code in _FIELDS[layout]:
        count_text = code[:-1]
        count = None if code.endswith("s") or not count_text else int(count_text)
        names.append(name)
        places.append((position, count))
        position += 1 if count is None else count
    arrays = () if all(count is None for _, count in places) else tuple(places)
    return tuple(names), arrays
