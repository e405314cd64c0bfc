"""Breakpad's machine-readable report (`minidump_stackwalk -f machine`): pipe-delimited lines.

    OS|{os}|{version}
    CPU|{cpu}|{cpu info}|{cpu count}
    GPU|{GL version}|{GL vendor}|{GL renderer}            (a microdump's G line; empty for a minidump)
    Crash|{reason}|0x{address}|{requesting thread}       (or "No crash" / the assertion text)
    Module|{code file}|{version}|{debug file}|{debug id}|0x{base}|0x{end}|{1 if main}
                                                          (blank line)
    {thread}|{frame}|{module}|{function}|{source file}|{line}|0x{offset}

The requesting thread comes first, then the others. As in Breakpad, the thread that wrote
the dump is left out and the threads are numbered without it, inline frames are ordinary
rows before their frame, and offsets are computed from Breakpad's `ReturnAddress()` — the
return address on x86 and amd64 (caller frames differ by one from the human and JSON
reports), the instruction elsewhere (arm, arm64 and mips frames have no override) — from
the source line's start, else the function's, else the module's, else the absolute
address. A `|` or newline inside a value is removed. Breakpad's own crash-reason texts
differ for some signals; ours are rust-minidump's (a microdump's are its R line's, as
Breakpad's). A microdump has no main module, as in Breakpad.
"""

from __future__ import annotations

from inspector.core.process import ProcessState
from inspector.core.types import Cpu
from inspector.core.unwind import CallStack, CallStackInfo, StackFrame

SEPARATOR = "|"


def _clean(text: str | None) -> str:
    return "" if text is None else text.replace(SEPARATOR, "").replace("\n", "")


def render_machine(state: ProcessState) -> str:
    system = state.system
    gpu = state.microdump.gpu if state.microdump is not None else None
    out = [
        f"OS|{_clean(system.os_name)}|{_clean(system.os_version)}",
        f"CPU|{_clean(system.cpu_arch)}|{_clean(system.cpu_info)}|{system.cpu_count}",
        "GPU|||" if gpu is None else f"GPU|{_clean(gpu.version)}|{_clean(gpu.vendor)}|{_clean(gpu.renderer)}",
    ]
    walked = [
        (i, stack)
        for i, stack in enumerate(state.threads)
        if stack.info is not CallStackInfo.DUMP_THREAD_SKIPPED
    ]
    numbers = {original: number for number, (original, _) in enumerate(walked)}
    requesting = None if state.requesting_thread is None else numbers.get(state.requesting_thread)
    if state.crash is not None:
        crash = f"Crash|{_clean(state.crash.reason)}|{state.crash.address:#x}|"
    elif state.assertion:
        crash = f"Crash|{_clean(state.assertion)}||"
    else:
        crash = "Crash|No crash||"
    out.append(crash + ("" if requesting is None else str(requesting)))
    main = None if state.main_module is None else state.modules[state.main_module].module.base
    for entry in sorted(state.modules, key=lambda e: e.module.base):  # Breakpad lists them by address
        module = entry.module
        out.append(
            SEPARATOR.join(
                (
                    "Module",
                    _clean(module.filename),
                    _clean(module.version or ""),
                    _clean(module.debug_file_name),
                    _clean(module.debug_id),
                    f"0x{module.base:08x}",
                    f"0x{module.base + module.size - 1:08x}",
                    "1" if module.base == main else "0",
                )
            )
        )
    out.append("")
    # Breakpad's StackFrame::ReturnAddress() is the instruction unless the CPU's frame overrides it
    returns = system.cpu in (Cpu.X86, Cpu.AMD64)
    if requesting is not None:
        out.extend(_thread_rows(requesting, walked[requesting][1], returns))
    for number, (_, stack) in enumerate(walked):
        if number != requesting:
            out.extend(_thread_rows(number, stack, returns))
    return "\n".join(out) + "\n"


def _thread_rows(number: int, stack: CallStack, returns: bool) -> list[str]:
    rows: list[str] = []
    for frame in stack.frames:
        for inline in frame.inlines:
            row = _row(
                number,
                len(rows),
                frame,
                function=inline.function,
                file=inline.file,
                line=inline.line,
                address=frame.instruction,  # Breakpad's inline frames are plain frames: no return address
            )
            rows.append(row)
        row = _row(
            number,
            len(rows),
            frame,
            function=frame.function_name,
            file=frame.source_file,
            line=frame.source_line,
            address=frame.return_address if returns else frame.instruction,
        )
        rows.append(row)
    return rows


def _row(
    thread: int,
    index: int,
    frame: StackFrame,
    *,
    function: str | None,
    file: str | None,
    line: int | None,
    address: int,
) -> str:
    prefix = f"{thread}|{index}|"
    module = frame.module
    if module is None:
        return f"{prefix}||||{address:#x}"
    name = _clean(module.filename)
    if not function:
        return f"{prefix}{name}||||{address - module.base:#x}"
    line_base = frame.source_line_base
    if file and line_base is not None:
        return f"{prefix}{name}|{_clean(function)}|{_clean(file)}|{line or 0}|{address - line_base:#x}"
    function_base = frame.function_base
    offset = address - (function_base if function_base is not None else module.base)
    return f"{prefix}{name}|{_clean(function)}|||{offset:#x}"
