"""rust-minidump's human report (`minidump-stackwalk --human`, and `--brief`).

The layout follows rust-minidump 0.25.0 (`ProcessState::print`, `CallStack::print`):
system and crash summary, the crashing (or dump-requesting) thread first, then every
other thread, then the loaded and unloaded modules and the unimplemented / unknown
streams. Frame offsets are from `instruction` (the return address minus one on x86),
as rust-minidump prints them; registers are those valid for the frame, wrapped at 80
columns. Inline frames come first, `Found by: inlining`.

The crash analysis lines (`Crashing instruction:`, ...) are rust-minidump's
(`analysis_text`); for x86, ARM and ARM64 crashes, which rust-minidump 0.25 does not analyse,
ours are printed too unless `beyond_reference=False`. Certificate subjects
(`ProcessState.cert_subjects`, `--evil-json`) follow the module lines and guessed x86
arguments (`function_arguments`, `--recover-function-args`) their frames, as rust-minidump
prints them. With `trace=True` each frame is followed by how it was found (`trace_text`: the
explanation tree the window shows too).

Our additions, printed only when there is something to say: a walk stopped by the frame
limit ends with a line saying so, and the report closes with `Problems found in the inputs
(N):`, one line per entry of the JSON's `inspector_problems` (damage in the dump or the
symbol files, symbol files rust-minidump would refuse, walks cut short).
`render_human(..., problems=False)` leaves that list out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from inspector.core.arguments import FunctionArguments
from inspector.core.process import ModuleEntry, ProcessState
from inspector.core.report.analysis_text import human_lines, shown_analysis
from inspector.core.report.frame_text import frame_label, frame_lines, register_lines
from inspector.core.report.trace_text import frame_trace_lines
from inspector.core.types import format_address
from inspector.core.unwind import (
    CallStack,
    CallStackInfo,
    TerminationReason,
)

if TYPE_CHECKING:
    from inspector.core.microdump.dump import MicrodumpInfo

# the frame text lives in frame_text; its functions are still offered here
__all__ = [
    "frame_label",
    "frame_lines",
    "problem_section",
    "register_lines",
    "render_human",
    "render_threads",
]


def render_human(
    state: ProcessState,
    *,
    brief: bool = False,
    trace: bool = False,
    problems: bool = True,
    beyond_reference: bool = True,
) -> str:
    """The report; `problems=False` and `beyond_reference=False` leave out our closing list of
    problems and our analysis of CPUs rust-minidump does not analyse (rust-minidump's text)."""
    text = _render(state, brief=brief, trace=trace, beyond_reference=beyond_reference)
    if problems and state.problems:
        text += problem_section(state)
    return text


def problem_section(state: ProcessState) -> str:
    """`Problems found in the inputs (N):` and one line per problem (damage, refused symbols, cut walks)."""
    out = ["", f"Problems found in the inputs ({len(state.problems)}):"]
    for problem in state.problems:
        where = f" at {problem.offset:#x}" if problem.offset is not None else ""
        out.append(f"  [{problem.source}] {problem.code}{where}: {problem.message}")
    return "\n".join(out) + "\n"


def render_threads(state: ProcessState) -> str:
    """Only the threads of the report (the crashing one first), as the whole report prints them."""
    out: list[str] = []
    _threads(state, out, brief=False, trace=False)
    return "\n".join(out) + "\n"


def _threads(state: ProcessState, out: list[str], *, brief: bool, trace: bool) -> None:
    arguments = dict(state.function_arguments)
    requesting = state.requesting_thread
    if requesting is not None:
        stack = state.threads[requesting]
        status = "crashed" if state.crashed else "requested dump, did not crash"
        out.append(f"Thread {requesting} {stack.thread_name or ''} ({status}) - tid: {stack.thread_id}")
        _stack(stack, out, trace=_source(state, requesting) if trace else None, arguments=arguments)
        out.append("")
    if brief:
        return
    for i, stack in enumerate(state.threads):
        if i == requesting or stack.info is CallStackInfo.DUMP_THREAD_SKIPPED:
            continue
        out.append(f"Thread {i} {stack.thread_name or ''} - tid: {stack.thread_id}")
        _stack(stack, out, trace=_source(state, i) if trace else None, arguments=arguments)


def _render(state: ProcessState, *, brief: bool, trace: bool, beyond_reference: bool) -> str:
    out: list[str] = []
    _summary(state, out, beyond_reference)
    _threads(state, out, brief=brief, trace=trace)
    if brief:
        return "\n".join(out) + "\n"
    out.append("")
    out.append("Loaded modules:")
    main = None if state.main_module is None else state.modules[state.main_module].module.base
    subjects = dict(state.cert_subjects)
    for entry in _by_address(state):
        module = entry.module
        end = module.base + module.size - 1
        line = f"{module.base:#010x} - {end:#010x}  {module.filename}  {module.version or '???'}"
        if module.base == main:
            line += "  (main)"
        out.append(_with_subject(line, subjects.get(module.filename)))
    out.append("")
    out.append("Unloaded modules:")
    unloaded = sorted(
        (m for m in state.unloaded_modules if m.size and m.base + m.size <= 1 << 64),
        key=lambda m: (m.base, m.base + m.size - 1),
    )
    for gone in unloaded:
        line = f"{gone.base:#010x} - {gone.base + gone.size - 1:#010x}  {gone.filename}"
        out.append(_with_subject(line, subjects.get(gone.filename)))
    if state.unimplemented_streams:
        out.append("")
        out.append("Unimplemented streams encountered:")
        for stream in state.unimplemented_streams:
            vendor = stream.vendor.rust_minidump_label
            out.append(f"Stream {stream.stream_type:#010x} {stream.name} ({vendor}) @ {stream.rva:#010x}")
    if state.unknown_streams:
        out.append("")
        out.append("Unknown streams encountered:")
        for stream in state.unknown_streams:
            vendor = stream.vendor.rust_minidump_label
            out.append(f"Stream {stream.stream_type:#010x} ({vendor}) @ {stream.rva:#010x}")
    soft = state.soft_errors
    if isinstance(soft, list) and soft:
        out.append("")
        out.append("Soft errors were encountered when minidump was written:")
        out.append(json.dumps(soft, indent=2, ensure_ascii=False))
    return "\n".join(out) + "\n"


def _with_subject(line: str, subject: str | None) -> str:
    """A module line with its `--evil-json` certificate subject, as rust-minidump appends it."""
    return line if subject is None else f"{line} ({subject})"


def _by_address(state: ProcessState) -> list[ModuleEntry]:
    """The modules rust-minidump lists: its address map keeps the lowest of overlapping modules."""
    listed = []
    last_end = -1
    for entry in sorted(state.modules, key=lambda e: (e.module.base, e.module.base + e.module.size - 1)):
        start, end = entry.module.base, entry.module.base + entry.module.size - 1
        if start <= last_end:
            continue
        listed.append(entry)
        last_end = end
    return listed


def _microdump_summary(info: MicrodumpInfo, out: list[str]) -> None:
    """What a microdump adds (GPU as Breakpad prints it, the product and process type)."""
    gpu = info.gpu
    if gpu.known:
        out += [f"GPU: {gpu.version}", f"     {gpu.vendor}", f"     {gpu.renderer}"]
    else:
        out.append("GPU: UNKNOWN")
    if info.product is not None:
        out.append(f"Product: {info.product}")
    if info.process_type is not None:
        out.append(f"Process type: {info.process_type}")


def _summary(state: ProcessState, out: list[str], beyond_reference: bool) -> None:
    system = state.system
    out.append(f"Operating system: {system.os_name}")
    if system.os_version is not None:
        out.append(f"                  {system.os_version}")
    out.append(f"CPU: {system.cpu_arch}")
    if system.cpu_info is not None:
        out.append(f"     {system.cpu_info}")
    out.append(f"     {system.cpu_count} CPU{'s' if system.cpu_count > 1 else ''}")
    if state.lsb_release is not None:
        lsb = state.lsb_release
        out.append(f"Linux {lsb.id} {lsb.release} - {lsb.codename} ({lsb.description})")
    if state.microdump is not None:
        _microdump_summary(state.microdump, out)
    out.append("")
    width = system.pointer_width
    if state.crash is not None:
        out.append(f"Crash reason:  {state.crash.reason}")
        analysis = shown_analysis(state.analysis, all_cpus=beyond_reference)
        out.extend(
            human_lines(
                analysis, format_address(state.crash.address, width), lambda v: format_address(v, width)
            )
        )
    else:
        out.append("No crash")
    if state.mac_crash_info is not None:
        out.append("Mac Crash Info:")
        for i, record in enumerate(state.mac_crash_info.records):
            out.append(f"  Record {i}")
            for label, name, hexa in (
                ("thread", "thread", True),
                ("dialog mode", "dialog_mode", True),
                ("abort_cause", "abort_cause", True),
                ("module", "module_path", False),
                ("message", "message", False),
                ("signature string", "signature_string", False),
                ("backtrace", "backtrace", False),
                ("message2", "message2", False),
            ):
                value = record.value(name)
                if value is None:
                    continue
                # rust-minidump writes these as "0x" followed by the decimal value
                shown = f"0x{value}" if hexa else str(value)
                out.append(f"    {label}: {shown}")
        out.append("")
    if state.mac_boot_args is not None:
        out.append(f"Mac Boot Args: {state.mac_boot_args.bootargs or ''}")
        out.append("")
    if state.process_uptime is not None:
        out.append(f"Process uptime: {state.process_uptime} seconds")
    else:
        out.append("Process uptime: not available")
    out.append("")
    if state.linux_memory_map_count is not None:
        out.append(f"Linux memory map count: {state.linux_memory_map_count}")
        out.append("")


def _source(state: ProcessState, thread_index: int) -> str:
    """Where the thread's starting registers come from, for the trace of its first frame."""
    starts = state.thread_starts
    source = starts[thread_index].source if thread_index < len(starts) else None
    return "context" if source is None else source.value


def _stack(
    stack: CallStack,
    out: list[str],
    *,
    trace: str | None,
    arguments: Mapping[tuple[int, int], FunctionArguments],
) -> None:
    """The thread's frames (each with its guessed `arguments`, if any); with `trace` (where frame 0's
    registers come from) also how each was found."""
    if not stack.frames:
        out.append("<no frames>")
    number = 0
    last = len(stack.frames) - 1
    for index, frame in enumerate(stack.frames):
        lines, number = frame_lines(frame, number)
        out.extend(lines)
        guessed = arguments.get((stack.thread_index, frame.index))
        if guessed is not None:
            out.extend(argument_lines(guessed, frame.context.pointer_width))
        if trace is not None:
            termination = stack.termination if index == last else None
            out.extend(
                frame_trace_lines(
                    stack.frames, index, termination=termination, context_source=trace, indent="      "
                )
            )
    if trace is not None and not stack.frames and stack.termination is not None:
        out.append(f"    Walk stopped - {stack.termination.message}")
    elif (
        trace is None
        and stack.termination is not None
        and stack.termination.reason
        in (
            TerminationReason.MAX_FRAMES,
            TerminationReason.DUMP_FRAME_BUDGET,
        )
    ):
        out.append(f"    ({stack.termination.message}; the frames beyond it are not shown)")


def argument_lines(guessed: FunctionArguments, pointer_width: int) -> list[str]:
    """`--recover-function-args`: the assumed convention, one line per argument, then a blank line."""
    out = [f"    Arguments (assuming {guessed.convention.value})"]
    digits = 2 * pointer_width
    for i, argument in enumerate(guessed.arguments):
        value = "<unknown>" if argument.value is None else f"0x{argument.value:0{digits}x}"
        out.append(f"        arg {i} ({argument.name}) = {value}")
    out.append("")
    return out
