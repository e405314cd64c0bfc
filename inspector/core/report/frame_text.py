"""A frame as rust-minidump's human report writes it: its label, its lines, its registers.

Shared by the human report, the window (its copy of a stack is the report's text) and the
explanation of the walk (each frame's title).
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext, basename
from inspector.core.unwind import INLINE_DESCRIPTION, InlineFrame, StackFrame


def frame_lines(frame: StackFrame, first_number: int) -> tuple[list[str], int]:
    """One physical frame's report lines, its inline frames first, numbered from `first_number`.

    Returns the lines and the number of the next frame. The GUI's copy of a stack uses this
    too, so what it copies is the report's text exactly.
    """
    out = []
    number = first_number
    for inline in frame.inlines:
        out.append(f"{number:2}  {inline_label(frame, inline)}")
        out.append(f"    Found by: {INLINE_DESCRIPTION}")
        number += 1
    out.append(f"{number:2}  {frame_label(frame)}")
    out.extend(register_lines(frame.context))
    out.append(f"    Found by: {frame.trust.description}")
    return out, number + 1


def inline_label(frame: StackFrame, inline: InlineFrame) -> str:
    """`module!function [file : line]` of an inline frame of `frame` (the triage's top frames too)."""
    text = "" if frame.module is None else basename(frame.module.code_file)
    text += f"!{inline.function}"
    if inline.file is not None and inline.line is not None:
        text += f" [{basename(inline.file)} : {inline.line}]"
    return text


def frame_label(frame: StackFrame) -> str:
    """`module!function [file : line + 0xoff]`, `module!function + 0xoff`, `module + 0xoff` or the address."""
    addr = frame.instruction
    module = frame.module
    if module is None:
        text = f"{addr:#x}"
        for hit in frame.unloaded_modules:
            text += f" (unloaded {hit.name}@" + "|".join(f"{offset:#x}" for offset in hit.offsets) + ")"
        return text
    text = module.filename
    symbol = frame.symbol
    function_base = frame.function_base
    if symbol is None or function_base is None:
        return f"{text} + {addr - module.base:#x}"
    text += f"!{symbol.function_name}"
    line_base = frame.source_line_base
    if symbol.source_file is not None and symbol.source_line is not None and line_base is not None:
        return f"{text} [{basename(symbol.source_file)} : {symbol.source_line} + {addr - line_base:#x}]"
    return f"{text} + {addr - function_base:#x}"


def register_lines(ctx: CpuContext) -> list[str]:
    """The valid registers, ` {name:>6} = 0x…` each, wrapped before 80 columns (rust-minidump's layout)."""
    lines = []
    current = ""
    for name, _ in ctx.valid_registers():
        piece = f" {name: >6} = {ctx.format_register(name)}"
        if len(current) + len(piece) > 80:
            lines.append(f" {current}")
            current = ""
        current += piece
    if current:
        lines.append(f" {current}")
    return lines
