"""`crash-inspector dump LOG` for a microdump: every record of it, as read, then the problems.

A microdump has no streams; this prints its records in the writer's order (product, OS,
process type, crash reason, GPU, free address space, stack, CPU context, modules), each with
the line it came from, the stack as the regions its lines make up, the context with every
field (as the minidump dump prints one), each module with its lookup range when Breakpad's
range map cut it, and every problem found.
"""

from __future__ import annotations

from inspector.core.microdump.dump import Microdump, MicrodumpModuleList
from inspector.core.report.context_text import context_text


def render_microdump(dump: Microdump) -> str:
    records = dump.records
    info = dump.info
    out: list[str] = []
    where = "" if dump.path is None else f" in {dump.path}"
    state = "complete" if info.complete else f"cut off: {records.text.cut_reason}"
    process = "" if info.process_id is None else f", process {info.process_id}"
    lines = f"lines {info.first_line}–{info.last_line}"
    out.append(
        f"Microdump {info.index} (of {info.count}, numbered from 0){where}, {lines} ({state}){process}\n\n"
    )
    if records.product is not None:
        out.append(f"V  product        = {records.product}\n")
    os = records.os
    if os is not None:
        system = dump.system_info
        name = system.os_name if system is not None and system.os_name else "unknown"
        out.append(f"O  os             = {os.os_id} ({name})   line {os.line.number}\n")
        out.append(f"   arch           = {os.arch}\n")
        out.append(f"   cpu count      = {os.cpu_count}\n")
        out.append(f"   hardware arch  = {os.hardware_arch}\n")
        out.append(f"   version        = {os.version}\n")
    if records.process_type is not None:
        out.append(f"P  process type   = {records.process_type}\n")
    crash = records.crash
    if crash is not None:
        out.append(
            f"R  crash          = signal {crash.signal} {crash.signal_name} at {crash.address:#x}   "
            f"line {crash.line.number}\n"
        )
    gpu = records.gpu
    if gpu is not None:
        if gpu.version or gpu.vendor or gpu.renderer:
            out.append(f"G  gl version     = {gpu.version}\n")
            out.append(f"   gl vendor      = {gpu.vendor}\n")
            out.append(f"   gl renderer    = {gpu.renderer}\n")
        else:
            out.append("G  gpu            = UNKNOWN\n")
    heap = records.heap
    if heap is not None:
        histogram = " ".join(f"2^{b}:{n}" for b, n in heap.histogram)
        out.append(f"H  mappings span  = {heap.low:#x}-{heap.high:#x}\n")
        out.append(
            f"   free holes     = {heap.hole_count}, largest {heap.largest_hole:#x}, sum {heap.hole_sum:#x}\n"
        )
        out.append(f"   hole sizes     = {histogram}\n")
    out.append("\n")
    header = records.stack_header
    if header is not None:
        out.append(
            f"S 0 stack        = {header.size:#x} bytes at {header.start:#x}, stack pointer "
            f"{header.stack_pointer:#x}   line {header.line.number}\n"
        )
    out.append(f"S  stack lines    = {len(records.chunks)}\n")
    for region in dump.memory.regions:
        out.append(f"   region         = {region.base:#x}-{region.end:#x} ({region.size:#x} bytes)\n")
    out.append("\n")
    if records.context is not None:
        out.append(
            f"C  context        = {len(records.context.data)} bytes   line {records.context.line.number}\n"
        )
        thread = dump.threads[0] if dump.threads else None
        if thread is not None and thread.context is not None:
            out.append(context_text(thread.context))
        else:
            out.append("   (unreadable: see the problems)\n\n")
    modules = dump.modules
    out.append(f"M  modules        = {len(records.modules)}\n")
    lookup = modules.lookup_ranges() if isinstance(modules, MicrodumpModuleList) else {}
    for index, (record, module) in enumerate(zip(records.modules, modules.modules, strict=True)):
        line = (
            f"   {record.base:#010x}-{record.base + record.size - 1:#010x}  offset {record.file_offset:#x}  "
            f"{record.identifier}  {record.name}"
        )
        span = lookup.get(index)
        if span is None:
            line += "   (not in lookups: overlaps an earlier module)"
        elif span != (module.base, module.end - 1):
            line += f"   (looked up at {span[0]:#x}-{span[1]:#x}: overlaps another module)"
        out.append(line + "\n")
    if records.unknown:
        out.append("\nUnknown lines\n")
        out.extend(f"   line {line.number}: {line.text[:120]}\n" for line in records.unknown)
    problems = dump.problems
    out.append(f"\nProblems\n  count = {len(problems)}\n")
    out.extend(f"  {p.message} [{p.code}]\n" for p in problems)
    return "".join(out)
