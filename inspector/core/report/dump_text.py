"""`dump` report: every stream of a minidump as text, in the layout of `minidump-stackwalk --dump --brief`.

The first part reproduces rust-minidump's raw dump (header, directory, then
the streams in its order, memory lists without hex dumps, Linux /proc copies
verbatim). A stream rust-minidump would refuse is left out of that part as it
does. A second part, after a `Crash Inspector additions` line, shows what only
this reader reports: streams rust-minidump does not print (thread info list,
auxv, DSO debug), unknown streams with their vendor, what could be salvaged
from refused streams, and every problem found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from inspector.core.minidump import (
    AssertionInfo,
    BreakpadInfo,
    CrashpadInfo,
    ExceptionStream,
    HandleData,
    MacBootargs,
    MacCrashInfo,
    MemoryInfoList,
    MemoryList,
    Minidump,
    MiscInfo,
    Module,
    ModuleList,
    StreamProblem,
    SystemInfo,
    Thread,
    ThreadInfoList,
    ThreadList,
    ThreadNames,
    UnloadedModuleList,
)
from inspector.core.minidump.format import XSTATE_FEATURE_NAMES, StreamType, stream_type_name
from inspector.core.minidump.modules import (
    CodeViewElf,
    CodeViewPdb20,
    CodeViewPdb70,
    CodeViewUnknown,
    DebugId,
    nul_terminated,
)
from inspector.core.minidump.system import format_system_time, format_time_t, utf16_units_to_string
from inspector.core.report.context_text import context_text
from inspector.core.report.memory_text import StackWords, memory_list_text

ADDITIONS_MARKER = "==== Crash Inspector additions ===="

#: Raw text streams printed at the end, in rust-minidump's order.
_RAW_TEXT_STREAMS = (
    (StreamType.LinuxCmdLine, "LinuxCmdLine"),
    (StreamType.LinuxEnviron, "LinuxEnviron"),
    (StreamType.LinuxLsbRelease, "LinuxLsbRelease"),
    (StreamType.LinuxProcStatus, "LinuxProcStatus"),
    (StreamType.LinuxCpuInfo, "LinuxCpuInfo"),
    (StreamType.LinuxMaps, "LinuxMaps"),
    (StreamType.MozLinuxLimits, "MozLinuxLimits"),
    (StreamType.MozSoftErrors, "MozSoftErrors"),
)


def render_dump(dump: Minidump, *, additions: bool = True, brief: bool = True) -> str:
    """The whole report as one string; `brief=False` adds the hex dumps of `minidump-stackwalk --dump`
    (each thread's stack as pointer-width words, each memory region's bytes)."""
    dump.parse_all()
    out: list[str] = []
    _rust_minidump_part(dump, out, brief=brief)
    if additions:
        out.append(f"\n{ADDITIONS_MARKER}\n\n")
        _additions(dump, out)
    return "".join(out)


def rust_minidump_part(text: str) -> str:
    """The part of a report that mirrors rust-minidump (what comes before the additions)."""
    head, _, _ = text.partition(f"\n{ADDITIONS_MARKER}\n")
    return head


T = TypeVar("T")


# --- the rust-minidump part --------------------------------------------------------------------------


def _usable(dump: Minidump, stream_type: int, value: T | None) -> T | None:
    """`value` unless the stream is missing or strict parsing refused it."""
    return None if value is None or dump.strictly_rejected(stream_type) else value


def _section(dump: Minidump, stream_type: int, value: T | None, render: Callable[[T], None]) -> None:
    usable = _usable(dump, stream_type, value)
    if usable is not None:
        render(usable)


def _rust_minidump_part(dump: Minidump, out: list[str], *, brief: bool) -> None:
    _header_and_directory(dump, out)
    system = _usable(dump, StreamType.SystemInfoStream, dump.system_info)
    with_system = system is not None
    stacks = None if brief else StackWords(dump, system)

    # Sections come in the order of rust-minidump's dump output, whatever the directory order.
    _section(
        dump,
        StreamType.ThreadListStream,
        dump.thread_list,
        lambda v: _thread_list(v, with_system, out, stacks),
    )
    _section(dump, StreamType.ModuleListStream, dump.module_list, lambda v: _module_list(v, out))
    _section(
        dump,
        StreamType.UnloadedModuleListStream,
        dump.unloaded_module_list,
        lambda v: _unloaded_modules(v, out),
    )
    _section(dump, StreamType.HandleDataStream, dump.handle_data, lambda v: _handles(v, out))
    _section(
        dump,
        StreamType.Memory64ListStream,
        dump.memory64_list,
        lambda v: memory_list_text(v, out, sixty_four=True, brief=brief),
    )
    _section(
        dump,
        StreamType.MemoryListStream,
        dump.memory_list,
        lambda v: memory_list_text(v, out, sixty_four=False, brief=brief),
    )
    _section(dump, StreamType.MemoryInfoListStream, dump.memory_info_list, lambda v: _memory_info(v, out))
    _section(dump, StreamType.ExceptionStream, dump.exception, lambda v: _exception(v, with_system, out))
    _section(dump, StreamType.AssertionInfoStream, dump.assertion, lambda v: _assertion(v, out))
    if system is not None:
        _system_info(system, out)
    _section(dump, StreamType.MiscInfoStream, dump.misc_info, lambda v: _misc_info(v, out))
    _section(dump, StreamType.ThreadNamesStream, dump.thread_names, lambda v: _thread_names(v, out))
    _section(dump, StreamType.BreakpadInfoStream, dump.breakpad_info, lambda v: _breakpad_info(v, out))
    if dump.entry(StreamType.CrashpadInfoStream) is not None:
        crashpad = _usable(dump, StreamType.CrashpadInfoStream, dump.crashpad_info)
        if crashpad is not None:
            _crashpad_info(crashpad, out)
        else:
            out.append("MinidumpCrashpadInfo cannot print invalid data")
    _section(dump, StreamType.MozMacosCrashInfoStream, dump.mac_crash_info, lambda v: _mac_crash_info(v, out))
    _section(dump, StreamType.MozMacosBootargsStream, dump.mac_bootargs, lambda v: _mac_bootargs(v, out))
    for stream_type, name in _RAW_TEXT_STREAMS:
        raw = dump.raw_stream(stream_type)
        if raw is not None:
            out.append(_raw_text(name, bytes(raw)))


def _header_and_directory(dump: Minidump, out: list[str]) -> None:
    h = dump.header
    out.append(
        "MDRawHeader\n"
        f"  signature            = {h.signature:#x}\n"
        f"  version              = {h.version:#x}\n"
        f"  stream_count         = {h.stream_count}\n"
        f"  stream_directory_rva = {h.stream_directory_rva:#x}\n"
        f"  checksum             = {h.checksum:#x}\n"
        f"  time_date_stamp      = {h.time_date_stamp:#x} {format_time_t(h.time_date_stamp)}\n"
        f"  flags                = {h.flags:#x}\n\n"
    )
    used = sorted(dump.streams.values(), key=lambda e: e.index)
    for entry in used:
        out.append(
            f"mDirectory[{entry.index}]\n"
            "MDRawDirectory\n"
            f"  stream_type        = {entry.stream_type:#x} ({entry.name})\n"
            f"  location.data_size = {entry.data_size}\n"
            f"  location.rva       = {entry.rva:#x}\n\n"
        )
    out.append("Streams:\n")
    for entry in dump.streams.values():
        out.append(f"  stream type {entry.stream_type:#x} ({entry.name}) at index {entry.index}\n")
    out.append("\n")


def _thread_list(
    threads: ThreadList, have_system_info: bool, out: list[str], stacks: StackWords | None
) -> None:
    out.append(f"MinidumpThreadList\n  thread_count = {len(threads)}\n\n")
    for i, thread in enumerate(threads):
        out.append(f"thread[{i}]\n")
        _thread(thread, have_system_info, out, stacks)


def _thread(thread: Thread, have_system_info: bool, out: list[str], stacks: StackWords | None) -> None:
    out.append(
        "MINIDUMP_THREAD\n"
        f"  thread_id                   = {thread.thread_id:#x}\n"
        f"  suspend_count               = {thread.suspend_count}\n"
        f"  priority_class              = {thread.priority_class:#x}\n"
        f"  priority                    = {thread.priority:#x}\n"
        f"  teb                         = {thread.teb:#x}\n"
        f"  stack.start_of_memory_range = {thread.stack_start:#x}\n"
        f"  stack.memory.data_size      = {thread.stack_location.data_size:#x}\n"
        f"  stack.memory.rva            = {thread.stack_location.rva:#x}\n"
        f"  thread_context.data_size    = {thread.context_location.data_size:#x}\n"
        f"  thread_context.rva          = {thread.context_location.rva:#x}\n\n"
    )
    if have_system_info and thread.context is not None:
        out.append(context_text(thread.context))
    else:
        out.append("  (no context)\n\n")
    out.append("\n" if stacks is None else stacks.lines(thread))


def _module_list(modules: ModuleList, out: list[str]) -> None:
    out.append(f"MinidumpModuleList\n  module_count = {len(modules)}\n\n")
    for i, module in enumerate(modules):
        out.append(f"module[{i}]\n")
        _module(module, out)


def _module(module: Module, out: list[str]) -> None:
    v = module.version_info
    out.append(
        "MINIDUMP_MODULE\n"
        f"  base_of_image                   = {module.base:#x}\n"
        f"  size_of_image                   = {module.size:#x}\n"
        f"  checksum                        = {module.checksum:#x}\n"
        f"  time_date_stamp                 = {module.time_date_stamp:#x} "
        f"{format_time_t(module.time_date_stamp)}\n"
        f"  module_name_rva                 = {module.module_name_rva:#x}\n"
        f"  version_info.signature          = {v.signature:#x}\n"
        f"  version_info.struct_version     = {v.struct_version:#x}\n"
        f"  version_info.file_version       = {v.file_version_hi:#x}:{v.file_version_lo:#x}\n"
        f"  version_info.product_version    = {v.product_version_hi:#x}:{v.product_version_lo:#x}\n"
        f"  version_info.file_flags_mask    = {v.file_flags_mask:#x}\n"
        f"  version_info.file_flags         = {v.file_flags:#x}\n"
        f"  version_info.file_os            = {v.file_os:#x}\n"
        f"  version_info.file_type          = {v.file_type:#x}\n"
        f"  version_info.file_subtype       = {v.file_subtype:#x}\n"
        f"  version_info.file_date          = {v.file_date_hi:#x}:{v.file_date_lo:#x}\n"
        f"  cv_record.data_size             = {module.cv_record.data_size}\n"
        f"  cv_record.rva                   = {module.cv_record.rva:#x}\n"
        f"  misc_record.data_size           = {module.misc_record.data_size}\n"
        f"  misc_record.rva                 = {module.misc_record.rva:#x}\n"
        f'  (code_file)                     = "{module.code_file}"\n'
        f'  (code_identifier)               = "{module.code_id}"\n'
    )
    cv = module.codeview
    if isinstance(cv, CodeViewPdb70):
        out.append(
            f"  (cv_record).cv_signature        = {cv.cv_signature:#x}\n"
            f"  (cv_record).signature           = {cv.guid}\n"
            f"  (cv_record).age                 = {cv.age}\n"
            f'  (cv_record).pdb_file_name       = "{nul_terminated(cv.pdb_file_name)}"\n'
        )
    elif isinstance(cv, CodeViewPdb20):
        out.append(
            f"  (cv_record).cv_header.signature = {cv.cv_signature:#x}\n"
            f"  (cv_record).cv_header.offset    = {cv.cv_offset:#x}\n"
            f"  (cv_record).signature           = {cv.signature:#x} {format_time_t(cv.signature)}\n"
            f"  (cv_record).age                 = {cv.age}\n"
            f'  (cv_record).pdb_file_name       = "{nul_terminated(cv.pdb_file_name)}"\n'
        )
    elif isinstance(cv, CodeViewElf):
        out.append(
            f"  (cv_record).cv_signature        = {cv.cv_signature:#x}\n"
            f"  (cv_record).build_id            = {cv.build_id.hex()}\n"
        )
    elif isinstance(cv, CodeViewUnknown):
        out.append(f"  (cv_record)                     = {cv.data.hex()}\n")
    else:
        out.append("  (cv_record)                     = (null)\n")
    out.append("  (misc_record)                   = (null)\n")
    version = module.version if module.version is not None else ""
    out.append(
        f'  (debug_file)                    = "{module.debug_file}"\n'
        f'  (debug_identifier)              = "{module.debug_identifier or DebugId.nil()}"\n'
        f'  (version)                       = "{version}"\n\n'
    )


def _unloaded_modules(modules: UnloadedModuleList, out: list[str]) -> None:
    out.append(f"MinidumpUnloadedModuleList\n  module_count = {len(modules)}\n\n")
    for i, m in enumerate(modules):
        out.append(
            f"module[{i}]\n"
            "MINIDUMP_UNLOADED_MODULE\n"
            f"  base_of_image                   = {m.base:#x}\n"
            f"  size_of_image                   = {m.size:#x}\n"
            f"  checksum                        = {m.checksum:#x}\n"
            f"  time_date_stamp                 = {m.time_date_stamp:#x} {format_time_t(m.time_date_stamp)}\n"
            f"  module_name_rva                 = {m.module_name_rva:#x}\n"
            f'  (code_file)                     = "{m.code_file}"\n'
            f'  (code_identifier)               = "{m.code_id}"\n'
        )


def _handles(handles: HandleData, out: list[str]) -> None:
    out.append(f"MinidumpHandleDataStream\n  handle_count = {len(handles)}\n\n")
    for i, h in enumerate(handles.handles):
        info_rva = "(invalid)" if h.object_info_rva is None else f"{h.object_info_rva:#x}"
        out.append(
            f"handle[{i}]\n"
            "MINIDUMP_HANDLE_DESCRIPTOR\n"
            f"  handle            = {h.handle:#x}\n"
            f"  type_name_rva     = {h.type_name_rva:#x}\n"
            f"  object_name_rva   = {h.object_name_rva:#x}\n"
            f"  attributes        = {h.attributes:#x}\n"
            f"  granted_access    = {h.granted_access:#x}\n"
            f"  handle_count      = {h.handle_count}\n"
            f"  pointer_count     = {h.pointer_count}\n"
            f"  object_info_rva   = {info_rva}\n"
            f"  (type_name)       = {h.type_name if h.type_name is not None else '(null)'}\n"
            f"  (object_name)     = {h.object_name if h.object_name is not None else '(null)'}\n"
        )
        if not h.object_infos:
            out.append("  (object_info)     = (null)\n")
        for info in h.object_infos:
            out.append(
                "  (object_info)     = {raw: MINIDUMP_HANDLE_OBJECT_INFORMATION { "
                f"next_info_rva: {info.next_info_rva}, info_type: {info.info_type}, "
                f"size_of_info: {info.size_of_info} }}, type: {info.type_name}}}\n"
            )
        out.append("\n")


def _memory_info(infos: MemoryInfoList, out: list[str]) -> None:
    out.append(f"MinidumpMemoryInfoList\n  region_count = {len(infos)}\n\n")
    for i, info in enumerate(infos.entries):
        out.append(
            f"region[{i}]\n"
            "MINIDUMP_MEMORY_INFO\n"
            f"  base_address          = {info.base_address:#x}\n"
            f"  allocation_base       = {info.allocation_base:#x}\n"
            f"  allocation_protection = {info.allocation_protection:#x}\n"
            f"  region_size           = {info.region_size:#x}\n"
            f"  state                 = {info.state:#x}\n"
            f"  protection            = {info.protection:#x}\n"
            f"  _type                 = {info.type:#x}\n\n"
        )


def _exception(exception: ExceptionStream, have_system_info: bool, out: list[str]) -> None:
    out.append(
        "MINIDUMP_EXCEPTION\n"
        f"  thread_id                                  = {exception.thread_id:#x}\n"
        f"  exception_record.exception_code            = {exception.exception_code:#x}\n"
        f"  exception_record.exception_flags           = {exception.exception_flags:#x}\n"
        f"  exception_record.exception_record          = {exception.exception_record:#x}\n"
        f"  exception_record.exception_address         = {exception.exception_address:#x}\n"
        f"  exception_record.number_parameters         = {exception.number_parameters}\n"
    )
    for i, value in enumerate(exception.parameters):
        out.append(f"  exception_record.exception_information[{i:2}] = {value:#x}\n")
    out.append(
        f"  thread_context.data_size                   = {exception.context_location.data_size}\n"
        f"  thread_context.rva                         = {exception.context_location.rva:#x}\n"
    )
    if have_system_info and exception.context is not None:
        out.append("\n" + context_text(exception.context))
    else:
        out.append("  (no context)\n\n    ")


def _assertion(assertion: AssertionInfo, out: list[str]) -> None:
    out.append(
        "MDAssertion\n"
        f"  expression                                 = {assertion.expression or ''}\n"
        f"  function                                   = {assertion.function or ''}\n"
        f"  file                                       = {assertion.file or ''}\n"
        f"  line                                       = {assertion.line}\n"
        f"  type                                       = {assertion.type}\n\n"
    )


def _system_info(info: SystemInfo, out: list[str]) -> None:
    out.append(
        "MINIDUMP_SYSTEM_INFO\n"
        f"  processor_architecture                     = {info.processor_architecture:#x}\n"
        f"  processor_level                            = {info.processor_level}\n"
        f"  processor_revision                         = {info.processor_revision:#x}\n"
        f"  number_of_processors                       = {info.number_of_processors}\n"
        f"  product_type                               = {info.product_type}\n"
        f"  major_version                              = {info.major_version}\n"
        f"  minor_version                              = {info.minor_version}\n"
        f"  build_number                               = {info.build_number}\n"
        f"  platform_id                                = {info.platform_id:#x}\n"
        f"  csd_version_rva                            = {info.csd_version_rva:#x}\n"
        f"  suite_mask                                 = {info.suite_mask:#x}\n"
        f"  (version)                                  = {info.major_version}.{info.minor_version}."
        f"{info.build_number} {info.csd_version or ''}\n"
        f"  (cpu_info)                                 = {info.cpu_info or ''}\n\n"
    )


def _field(name: str, value: object, fmt: str = "") -> str:
    text = "(invalid)" if value is None else format(value, fmt)
    return f"  {name:<29}= {text}\n"


def _misc_info(misc: MiscInfo, out: list[str]) -> None:
    lines = [
        "MINIDUMP_MISC_INFO\n",
        _field("size_of_info", misc.size_of_info),
        _field("flags1", misc.flags1, "x"),
    ]
    lines.append(_field("process_id", misc.process_id))
    created = misc.process_create_time
    lines.append(
        "  process_create_time          = "
        + ("(invalid)" if created is None else f"{created:#x} {format_time_t(created)}")
        + "\n"
    )
    lines.append(_field("process_user_time", misc.process_user_time))
    lines.append(_field("process_kernel_time", misc.process_kernel_time))
    for i, name in enumerate(
        (
            "processor_max_mhz",
            "processor_current_mhz",
            "processor_mhz_limit",
            "processor_max_idle_state",
            "processor_current_idle_state",
        )
    ):
        lines.append(_field(name, misc.processor_power_field(i)))
    lines.append(_field("process_integrity_level", misc.process_integrity_level))
    lines.append(_field("process_execute_flags", misc.process_execute_flags, "x"))
    lines.append(_field("protected_process", misc.protected_process))
    lines.append(_field("time_zone_id", misc.time_zone_id))
    tz = misc.time_zone
    if tz is None:
        lines.append("  time_zone                    = (invalid)\n")
    else:
        standard = utf16_units_to_string(tz.standard_name)
        daylight = utf16_units_to_string(tz.daylight_name)
        lines.append(
            "  time_zone                    = \n"
            f"    bias          = {tz.bias}\n"
            f"    standard_name = {standard if standard is not None else '(invalid)'}\n"
            f"    standard_date = {format_system_time(tz.standard_date)}\n"
            f"    standard_bias = {tz.standard_bias}\n"
            f"    daylight_name = {daylight if daylight is not None else '(invalid)'}\n"
            f"    daylight_date = {format_system_time(tz.daylight_date)}\n"
            f"    daylight_bias = {tz.daylight_bias}\n"
        )
    for name, value in (("build_string", misc.build_string), ("dbg_bld_str", misc.dbg_bld_str)):
        lines.append(_field(name, value))
    if misc.xstate_features is None or misc.xstate_enabled_features is None:
        lines.append("  xstate_data                  = (invalid)\n")
    else:
        lines.append("  xstate_data                  = \n")
        for i, (offset, size) in enumerate(misc.xstate_features):
            if misc.xstate_enabled_features >> i & 1:
                feature = XSTATE_FEATURE_NAMES.get(i)
                label = f"{feature:<22}" if feature else "(unknown)           "
                lines.append(f"    feature {i:2} - {label}:  offset {offset:4}, size {size:4}\n")
    lines.append(_field("process_cookie", misc.process_cookie))
    lines.append("\n")
    out.extend(lines)


def _thread_names(names: ThreadNames, out: list[str]) -> None:
    out.append(f"MinidumpThreadNames\n  thread_count = {len(names.names)}\n\n")
    for i, (tid, name) in enumerate(sorted(names.names.items())):
        out.append(
            f'thread_name[{i}]\nMINIDUMP_THREAD_NAME\n  thread_id = {tid:#x}\n  name      = "{name}"\n\n'
        )


def _breakpad_info(info: BreakpadInfo, out: list[str]) -> None:
    def opt(value: int | None) -> str:
        return "(invalid)" if value is None else f"{value:#x}"

    out.append(
        "MINIDUMP_BREAKPAD_INFO\n"
        f"  validity             = {info.validity:#x}\n"
        f"  dump_thread_id       = {opt(info.dump_thread_id)}\n"
        f"  requesting_thread_id = {opt(info.requesting_thread_id)}\n\n"
    )


def _crashpad_info(info: CrashpadInfo, out: list[str]) -> None:
    out.append(
        f"MDRawCrashpadInfo\n  version = {info.version}\n  report_id = {info.report_id}\n"
        f"  client_id = {info.client_id}\n"
    )
    for name, value in info.simple_annotations.items():
        out.append(f'  simple_annotations["{name}"] = {value}\n')
    for i, module in enumerate(info.modules):
        out.append(f"  module_list[{i}].minidump_module_list_index = {module.module_index}\n")
        out.append(f"  module_list[{i}].version = {module.version}\n")
        for j, text in enumerate(module.list_annotations):
            out.append(f"  module_list[{i}].list_annotations[{j}] = {text}\n")
        for name, value in module.simple_annotations.items():
            out.append(f'  module_list[{i}].simple_annotations["{name}"] = {value}\n')
        for name, annotation in module.annotation_objects.items():
            kind = annotation.kind
            shown = annotation.value if kind == "string" else f"<{kind}>"
            out.append(f'  module_list[{i}].annotation_objects["{name}"] = {shown}\n')
    out.append("\n")


def _mac_crash_info(info: MacCrashInfo, out: list[str]) -> None:
    out.append(f"MINIDUMP_MAC_CRASH_INFO\n  num_records = {len(info.records)}\n")
    for i, record in enumerate(info.records):
        out.append(f"\n  RECORD[{i}] \n")
        for name, fmt in (
            ("version", ""),
            ("thread", ""),
            ("dialog_mode", "x"),
            ("module_path", ""),
            ("message", ""),
            ("signature_string", ""),
            ("backtrace", ""),
            ("message2", ""),
            ("abort_cause", "x"),
        ):
            value = record.value(name)
            out.append(f"    {name:<18}= " + ("" if value is None else format(value, fmt)) + "\n")
    out.append("\n")


def _mac_bootargs(info: MacBootargs, out: list[str]) -> None:
    out.append(f"mac_boot_args = {info.bootargs or ''}\n\n")


def _raw_text(name: str, raw: bytes) -> str:
    text = "\\0\n".join(part.decode("utf-8", errors="replace") for part in raw.split(b"\0"))
    return f"Stream {name}:\n{text}\n\n"


# --- additions ------------------------------------------------------------------------------------


def _additions(dump: Minidump, out: list[str]) -> None:
    _crash_summary(dump, out)
    if dump.thread_info_list is not None:
        _thread_info(dump.thread_info_list, out)
    auxv = dump.linux_auxv
    if auxv is not None:
        out.append(f"LinuxAuxv\n  entry_count = {len(auxv.entries)}\n")
        out.extend(f"  {kind:#x} = {value:#x}\n" for kind, value in auxv.entries)
        out.append("\n")
    dso = dump.linux_dso_debug
    if dso is not None:
        out.append(
            f"LinuxDsoDebug\n  version   = {dso.version}\n  map       = {dso.map_rva:#x}\n"
            f"  dso_count = {dso.dso_count}\n  brk       = {dso.brk:#x}\n  ldbase    = {dso.ldbase:#x}\n"
            f"  dynamic   = {dso.dynamic:#x}\n"
        )
        for i, link in enumerate(dso.link_map):
            out.append(
                f'  link_map[{i}] addr = {link.addr:#x}, ld = {link.ld:#x}, name = "{link.name or ""}"\n'
            )
        out.append("\n")
    maps = dump.linux_maps
    if maps is not None:
        count = maps.mapping_count
        out.append(f"LinuxMaps\n  mapping_count = {count if count is not None else '(unparsable)'}\n\n")
    _salvaged(dump, out)
    _unknown_streams(dump, out)
    _problems(dump.problems, out)


def _crash_summary(dump: Minidump, out: list[str]) -> None:
    info = dump.system_info
    out.append("Summary\n")
    if info is not None:
        out.append(
            f"  os       = {info.os_name} {info.os_ver}\n  cpu      = {info.cpu_arch} {info.cpu_info or ''}\n"
        )
    reason = dump.crash_reason
    out.append(f"  crash    = {reason if reason is not None else '(no exception)'}\n")
    address = dump.crash_address
    if address is not None:
        out.append(f"  address  = {address:#x}\n")
    index = dump.crashing_thread_index
    out.append(f"  crashing thread index = {index if index is not None else '(none)'}\n")
    assertion = dump.assertion
    if assertion is not None:
        out.append(f"  assertion = {assertion.describe()}\n")
    out.append("\n")


def _thread_info(infos: ThreadInfoList, out: list[str]) -> None:
    out.append(f"MinidumpThreadInfoList\n  thread_info_count = {len(infos.entries)}\n\n")
    for i, t in enumerate(infos.entries):
        out.append(
            f"thread info[{i}]\n"
            "MINIDUMP_THREAD_INFO\n"
            f"  thread_id                   = {t.thread_id:#x}\n"
            f"  dump_flags                  = {t.dump_flags:#x}\n"
            f"  dump_error                  = {t.dump_error:#x}\n"
            f"  exit_status                 = {t.exit_status:#x}\n"
            f"  create_time                 = {t.create_time:#x}\n"
            f"  exit_time                   = {t.exit_time:#x}\n"
            f"  kernel_time                 = {t.kernel_time:#x}\n"
            f"  user_time                   = {t.user_time:#x}\n"
            f"  start_address               = {t.start_address:#x}\n"
            f"  affinity                    = {t.affinity:#x}\n\n"
        )


def _salvaged(dump: Minidump, out: list[str]) -> None:
    """Streams rust-minidump refuses, printed from what this reader could still read."""
    system = dump.system_info
    printers = (
        (StreamType.ThreadListStream, dump.thread_list),
        (StreamType.ModuleListStream, dump.module_list),
        (StreamType.UnloadedModuleListStream, dump.unloaded_module_list),
        (StreamType.HandleDataStream, dump.handle_data),
        (StreamType.Memory64ListStream, dump.memory64_list),
        (StreamType.MemoryListStream, dump.memory_list),
        (StreamType.MemoryInfoListStream, dump.memory_info_list),
        (StreamType.ExceptionStream, dump.exception),
        (StreamType.AssertionInfoStream, dump.assertion),
        (StreamType.MiscInfoStream, dump.misc_info),
        (StreamType.ThreadNamesStream, dump.thread_names),
        (StreamType.BreakpadInfoStream, dump.breakpad_info),
        (StreamType.CrashpadInfoStream, dump.crashpad_info),
        (StreamType.MozMacosCrashInfoStream, dump.mac_crash_info),
        (StreamType.MozMacosBootargsStream, dump.mac_bootargs),
    )
    for stream_type, value in printers:
        if value is None or not dump.strictly_rejected(stream_type):
            continue
        out.append(f"Salvaged from damaged stream {stream_type_name(stream_type)}:\n")
        if isinstance(value, ThreadList):
            for i, thread in enumerate(value):
                out.append(f"thread[{i}]\n")
                _thread(thread, system is not None, out, None)
        elif isinstance(value, ModuleList):
            for i, module in enumerate(value):
                out.append(f"module[{i}]\n")
                _module(module, out)
        elif isinstance(value, UnloadedModuleList):
            _unloaded_modules(value, out)
        elif isinstance(value, HandleData):
            _handles(value, out)
        elif isinstance(value, MemoryList):
            memory_list_text(value, out, sixty_four=stream_type == StreamType.Memory64ListStream, brief=True)
        elif isinstance(value, MemoryInfoList):
            _memory_info(value, out)
        elif isinstance(value, ExceptionStream):
            _exception(value, system is not None, out)
        elif isinstance(value, AssertionInfo):
            _assertion(value, out)
        elif isinstance(value, MiscInfo):
            _misc_info(value, out)
        elif isinstance(value, ThreadNames):
            _thread_names(value, out)
        elif isinstance(value, BreakpadInfo):
            _breakpad_info(value, out)
        elif isinstance(value, CrashpadInfo):
            _crashpad_info(value, out)
        elif isinstance(value, MacCrashInfo):
            _mac_crash_info(value, out)
        elif isinstance(value, MacBootargs):
            _mac_bootargs(value, out)


def _unknown_streams(dump: Minidump, out: list[str]) -> None:
    unknown = dump.unknown_streams()
    unimplemented = dump.unimplemented_streams()
    out.append(f"Unknown streams\n  count = {len(unknown)}\n")
    for e in unknown:
        out.append(
            f"  stream type {e.stream_type:#010x} vendor {e.vendor.value} ({e.vendor.rust_minidump_label}) "
            f"size {e.data_size} at {e.rva:#x}\n"
        )
    out.append(f"\nUnimplemented streams\n  count = {len(unimplemented)}\n")
    for e in unimplemented:
        out.append(f"  stream type {e.stream_type:#010x} ({e.name}) size {e.data_size} at {e.rva:#x}\n")
    out.append("\n")


def _problems(problems: Iterable[StreamProblem], out: list[str]) -> None:
    items = list(problems)
    out.append(f"Problems\n  count = {len(items)}\n")
    out.extend(f"  {p}\n" for p in items)
