"""One CPU context as the `dump` report prints it: every field of the raw structure.

rust-minidump's layout for x86, amd64, arm and arm64 (vector and floating-point state
included), ours for the layouts it does not print (PPC, SPARC, MIPS and contexts the
stackwalker built, which have no raw bytes: their registers only).
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext
from inspector.core.minidump.context_layouts import ContextLayout, FieldValue
from inspector.core.minidump.reader import byte_order


def _int(fields: dict[str, FieldValue], name: str) -> int:
    value = fields[name]
    assert isinstance(value, int)
    return value


def _ints(fields: dict[str, FieldValue], name: str) -> tuple[int, ...]:
    value = fields[name]
    assert isinstance(value, tuple)
    return value


def _blob(fields: dict[str, FieldValue], name: str) -> bytes:
    value = fields[name]
    assert isinstance(value, bytes)
    return value


def _u128s(blob: bytes, endian: str) -> list[int]:
    order = byte_order(endian)
    return [int.from_bytes(blob[i : i + 16], order) for i in range(0, len(blob), 16)]


def context_text(ctx: CpuContext) -> str:
    """A context's every field, as rust-minidump's dump prints it (our own layout for PPC / SPARC)."""
    f = ctx.fields()
    if not f:
        return "".join(f"  {name} = {value:#x}\n" for name, value in ctx.registers()) + "\n"
    lines: list[str] = []
    if ctx.layout is ContextLayout.X86:
        lines.append("CONTEXT_X86\n")
        for name in ("context_flags", "dr0", "dr1", "dr2", "dr3", "dr6", "dr7"):
            lines.append(f"  {name:<28} = {_int(f, name):#x}\n")
        for name in (
            "float_save.control_word",
            "float_save.status_word",
            "float_save.tag_word",
            "float_save.error_offset",
            "float_save.error_selector",
            "float_save.data_offset",
            "float_save.data_selector",
        ):
            lines.append(f"  {name:<28} = {_int(f, name):#x}\n")
        area = _blob(f, "float_save.register_area")
        lines.append(f"  float_save.register_area[{len(area):2}] = 0x{area.hex()}\n")
        for name in (
            "float_save.cr0_npx_state",
            "gs",
            "fs",
            "es",
            "ds",
            "edi",
            "esi",
            "ebx",
            "edx",
            "ecx",
            "eax",
            "ebp",
            "eip",
            "cs",
            "eflags",
            "esp",
            "ss",
        ):
            lines.append(f"  {name:<28} = {_int(f, name):#x}\n")
        ext = _blob(f, "extended_registers")
        lines.append(f"  extended_registers[{len(ext):3}]      = 0x{ext.hex()}\n\n")
    elif ctx.layout is ContextLayout.AMD64:
        lines.append("CONTEXT_AMD64\n")
        names = (
            *(f"p{i}_home" for i in range(1, 7)),
            "context_flags",
            "mx_csr",
            "cs",
            "ds",
            "es",
            "fs",
            "gs",
            "ss",
            "eflags",
            *(f"dr{i}" for i in (0, 1, 2, 3, 6, 7)),
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
        lines.extend(f"  {name:<13} = {_int(f, name):#x}\n" for name in names)
        lines.append("\n")
    elif ctx.layout is ContextLayout.ARM:
        lines.append(f"CONTEXT_ARM\n  context_flags       = {_int(f, 'context_flags'):#x}\n")
        lines.extend(f"  iregs[{i:2}]            = {v:#x}\n" for i, v in enumerate(_ints(f, "iregs")))
        lines.append(f"  cpsr                = {_int(f, 'cpsr'):#x}\n")
        lines.append(f"  float_save.fpscr     = {_int(f, 'float_save.fpscr'):#x}\n")
        lines.extend(
            f"  float_save.regs[{i:2}] = {v:#x}\n" for i, v in enumerate(_ints(f, "float_save.regs"))
        )
        lines.extend(
            f"  float_save.extra[{i:2}] = {v:#x}\n" for i, v in enumerate(_ints(f, "float_save.extra"))
        )
    elif ctx.layout in (ContextLayout.ARM64, ContextLayout.ARM64_OLD):
        title = "CONTEXT_ARM64" if ctx.layout is ContextLayout.ARM64 else "CONTEXT_ARM64_OLD"
        lines.append(f"{title}\n  context_flags        = {_int(f, 'context_flags'):#x}\n")
        regs = _ints(f, "iregs")
        lines.extend(f"  x{i:<2}                  = {v:#x}\n" for i, v in enumerate(regs[:29]))
        lines.append(f"  x29 (fp)             = {regs[29]:#x}\n")
        lines.append(f"  x30 (lr)             = {regs[30]:#x}\n")
        for name in ("sp", "pc", "cpsr", "fpsr", "fpcr"):
            lines.append(f"  {name:<20} = {_int(f, name):#x}\n")
        lines.extend(
            f"  d{i:<2} = {v:#x}\n" for i, v in enumerate(_u128s(_blob(f, "float_regs"), ctx.endian))
        )
        if ctx.layout is ContextLayout.ARM64:
            for name in ("bcr", "bvr", "wcr", "wvr"):
                lines.extend(f"  {name}[{i:2}] = {v:#x}\n" for i, v in enumerate(_ints(f, name)))
    elif ctx.layout is ContextLayout.MIPS:
        lines.append(f"CONTEXT_MIPS\n  context_flags       = {_int(f, 'context_flags'):#x}\n")
        regs = _ints(f, "iregs")
        for name, index in (
            *((f"s{i}", 16 + i) for i in range(8)),
            ("gp", 28),
            ("sp", 29),
            ("fp", 30),
            ("ra", 31),
        ):
            lines.append(f"  {name}                = {regs[index]:#x}\n")
    else:
        # rust-minidump cannot print these (it aborts); list every field instead.
        lines.append(f"{ctx.layout.value}\n")
        for name, value in f.items():
            if isinstance(value, tuple):
                lines.extend(f"  {name}[{i:2}] = {v:#x}\n" for i, v in enumerate(value))
            elif isinstance(value, bytes):
                lines.append(f"  {name} = 0x{value.hex()}\n")
            else:
                lines.append(f"  {name} = {value:#x}\n")
        lines.append("\n")
    return "".join(lines)
