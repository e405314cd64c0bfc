"""rust-minidump's JSON report (`minidump-stackwalk --json`), schema and key order as in 0.25.0.

Keys are sorted (rust-minidump builds the document with serde_json maps, which sort), hex
values are zero-padded to the pointer width (8 digits on 32-bit CPUs, else 16), registers
are printed for frame 0 of the crashing thread only (in the top-level `crashing_thread`).

Additions, documented in the README, which rust-minidump's schema ("assume all fields are
optional") lets consumers ignore: `inspector_problems`, a list of the damage we found in the
dump and the symbol files (`{"source", "code", "message", "offset"}`); per module
`inspector_matched_by`: how its symbol file was matched to it, `"debug_id"`, `"code_id"` or
null (no symbols loaded); and for a microdump (which rust-minidump does not read)
`inspector_microdump`: which microdump of the log it is, its product, process type, hardware
and GPU lines.

The crash analysis fields (`instruction`, `memory_accesses`, ...) are rust-minidump's, from
`inspector.core.analysis` (`analysis_text`); with `analysis_all_cpus=True` they also carry
our analysis of x86, ARM and ARM64 crashes, which rust-minidump 0.25 leaves out. One more
addition: `crash_info.inspector_code_source`, where the crashing instruction's bytes came from.
"""

from __future__ import annotations

from inspector.core.collector import collector_paused
from inspector.core.memo import memo
from inspector.core.minidump import basename
from inspector.core.process import ModuleEntry, ProcessState, last_error_name
from inspector.core.report.analysis_text import crash_info_fields, shown_analysis
from inspector.core.strict import strict
from inspector.core.symbols.identity import MatchedBy, has_debug_id
from inspector.core.unwind import CallStack, StackFrame

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from inspector.core.microdump.dump import MicrodumpInfo

    _Hex = Callable[[int], str]

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]

#: rust-minidump's `DebugId::default().breakpad()` for modules without an identifier.
NIL_DEBUG_ID = "0" * 33


def render_json(state: ProcessState, *, pretty: bool = False, analysis_all_cpus: bool = False) -> str:
    """The report as text: compact like `--json`, indented like `--json --pretty`."""
    # (`json`, with the `re` it imports, is imported on first use: importing the engine is cheaper)
    import json

    with collector_paused:  # thousands of dicts and lists, none in a cycle (see `collector_paused`)
        if pretty:
            text = json.dumps(
                _document(state, analysis_all_cpus, text=False),
                indent=2, ensure_ascii=False, check_circular=False,
            )  # fmt: skip
        else:
            text = _compact(_document(state, analysis_all_cpus, text=True))
    if strict():  # the tests: the text is the generic encoding of `json_document`, keys sorted
        expected = json.dumps(
            json_document(state, analysis_all_cpus=analysis_all_cpus),
            indent=2 if pretty else None, separators=None if pretty else (",", ":"),
            sort_keys=True, ensure_ascii=False,
        )  # fmt: skip
        assert text == expected, "the JSON report's text is not json_document's, keys sorted"
    return text


class _Text(str):
    """A value already written as compact JSON text (`_document(text=True)`)."""

    __slots__ = ()


def _compact(document: Mapping[str, object]) -> str:
    """`--json`'s text of a document whose values are JSON values or `_Text`, keys in order.

    The threads and modules (nearly all of a report) are written as text by `_TextWriter`; the
    rest goes through the standard encoder, its objects built with their keys in order, so it
    neither sorts them nor (a fresh tree) looks for cycles."""
    encode = _compact_encoder()
    escape = _escape()
    return (
        "{"
        + ",".join(
            f"{escape(key)}:{value if type(value) is _Text else encode(value)}"
            for key, value in document.items()
        )
        + "}"
    )


@memo(1)  # made once (`json.dumps` makes one a call)
def _compact_encoder() -> Callable[[object], str]:
    """`--json`'s encoder."""
    import json

    return json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


@memo(1)
def _escape() -> Callable[[str], str]:
    """A string as a JSON string, as the encoder writes it (`ensure_ascii=False`)."""
    from json.encoder import encode_basestring

    escape: Callable[[str], str] = encode_basestring
    return escape


def json_document(state: ProcessState, *, analysis_all_cpus: bool = False) -> dict[str, JsonValue]:
    """The report as JSON values. Every object has its keys in sorted order, as rust-minidump's
    serde maps write them: the hot ones (frames, modules, threads) are written so, the rest sorted."""
    document: dict[str, JsonValue] = _document(state, analysis_all_cpus, text=False)
    return document


def _document(state: ProcessState, analysis_all_cpus: bool, *, text: bool) -> dict[str, Any]:
    """`json_document`; with `text`, its threads, modules and crashing thread as `_Text` (`_compact`)."""
    hexa = hex_formatter(state.system.pointer_width)
    system = state.system
    crash = state.crash
    subjects = dict(state.cert_subjects)
    threads: list[Any]
    if text:
        writer = _TextWriter(state.system.pointer_width, hexa)
        frame_texts = [[writer.frame(frame) for frame in stack.frames] for stack in state.threads]
        threads = [
            writer.thread(stack, frames) for stack, frames in zip(state.threads, frame_texts, strict=True)
        ]
        modules: Any = _Text("[" + ",".join(writer.module(entry, subjects) for entry in state.modules) + "]")
    else:
        threads = [_thread(stack, hexa) for stack in state.threads]
        modules = [_module(entry, hexa, subjects) for entry in state.modules]
    crash_info: dict[str, JsonValue] = {
        "type": None if crash is None else crash.reason,
        "address": None if crash is None else hexa(crash.address),
        **crash_info_fields(
            shown_analysis(state.analysis, all_cpus=analysis_all_cpus), crash is not None, hexa
        ),
        "crashing_thread": state.requesting_thread,
        "assertion": None,
    }
    document: dict[str, Any] = {
        "status": "OK",
        "system_info": {
            "cpu_arch": system.cpu_arch,
            "cpu_count": system.cpu_count,
            "cpu_info": system.cpu_info,
            "cpu_microcode_version": None
            if system.cpu_microcode_version is None
            else f"{system.cpu_microcode_version:#x}",
            "os": system.os_name,
            "os_ver": system.os_version,
        },
        "crash_info": dict(sorted(crash_info.items())),
        "lsb_release": None
        if state.lsb_release is None
        else {
            "codename": state.lsb_release.codename,
            "description": state.lsb_release.description,
            "id": state.lsb_release.id,
            "release": state.lsb_release.release,
        },
        "proc_limits": None
        if state.proc_limits is None
        else {
            "limits": [
                {"hard": limit.hard, "name": limit.name, "soft": limit.soft, "unit": limit.unit}
                for limit in state.proc_limits
            ]
        },
        "soft_errors": _json_value(state.soft_errors),
        "mac_crash_info": None
        if state.mac_crash_info is None
        else {
            "num_records": len(state.mac_crash_info.records),
            "records": [
                {
                    "abort_cause": _opt_hex(record.value("abort_cause"), hexa),
                    "backtrace": _opt_str(record.value("backtrace")),
                    "dialog_mode": _opt_hex(record.value("dialog_mode"), hexa),
                    "message": _opt_str(record.value("message")),
                    "message2": _opt_str(record.value("message2")),
                    "module": _opt_str(record.value("module_path")),
                    "signature_string": _opt_str(record.value("signature_string")),
                    "thread": _opt_hex(record.value("thread"), hexa),
                }
                for record in state.mac_crash_info.records
            ],
        },
        "mac_boot_args": None if state.mac_boot_args is None else state.mac_boot_args.bootargs,
        "linux_memory_map_count": state.linux_memory_map_count,
        # rust-minidump 0.25 writes 0 whatever the modules, none included (`ProcessState.main_module`
        # is None then); its JSON schema says the first module is always the main one
        "main_module": 0,
        "modules_contains_cert_info": bool(subjects),
        "modules": modules,
        "pid": state.process_id,
        "thread_count": len(state.threads),
        "threads": _Text("[" + ",".join(threads) + "]") if text else threads,
        "unloaded_modules": [
            {
                "base_addr": hexa(module.base),
                # rust-minidump looks unloaded modules up by their whole name here (by base name in --human)
                "cert_subject": subjects.get(module.code_file),
                "code_id": module.code_id,
                "end_addr": hexa(module.base + module.size),
                "filename": module.code_file,
            }
            for module in state.unloaded_modules
        ],
        "handles": None
        if state.handles is None
        else [
            {"handle": handle.handle, "object_name": handle.object_name, "type_name": handle.type_name}
            for handle in state.handles.handles
        ],
        "inspector_problems": [
            {"code": p.code, "message": p.message, "offset": p.offset, "source": p.source}
            for p in state.problems
        ],
    }
    requesting = state.requesting_thread
    if text and requesting is not None and state.threads[requesting].frames:
        stack = state.threads[requesting]
        first_text = writer.frame(stack.frames[0], registers=writer.encode(_registers(stack.frames[0])))
        document["crashing_thread"] = writer.thread(
            stack, [first_text, *frame_texts[requesting][1:]], requesting
        )
    elif requesting is not None and state.threads[requesting].frames:
        thread = threads[requesting]
        assert isinstance(thread, dict)
        frames = thread["frames"]
        assert isinstance(frames, list)
        first = dict(frames[0]) if isinstance(frames[0], dict) else {}
        first["registers"] = _registers(state.threads[requesting].frames[0])
        # the thread's keys are sorted, and "threads_index" comes after all of them
        document["crashing_thread"] = {
            **thread,
            "frames": [dict(sorted(first.items())), *frames[1:]],
            "threads_index": requesting,
        }
    if state.microdump is not None:
        document["inspector_microdump"] = _microdump(state.microdump)
    return dict(sorted(document.items()))


def hex_formatter(pointer_width: int) -> _Hex:
    """`format_address(value, pointer_width)` as one bound method (called for every frame and module)."""
    formatter: _Hex = f"0x{{:0{pointer_width * 2}x}}".format
    return formatter


def _microdump(info: MicrodumpInfo) -> dict[str, JsonValue]:
    return {
        "complete": info.complete,
        "count": info.count,
        "first_line": info.first_line,
        "gpu": {"renderer": info.gpu.renderer, "vendor": info.gpu.vendor, "version": info.gpu.version},
        "hardware_arch": info.hardware_arch,
        "index": info.index,
        "last_line": info.last_line,
        "process_type": info.process_type,
        "product": info.product,
    }


def _thread(stack: CallStack, hexa: _Hex) -> dict[str, JsonValue]:
    return {
        "frame_count": len(stack.frames),
        "frames": [_frame(frame, hexa) for frame in stack.frames],
        "last_error_value": last_error_name(stack.last_error_value),
        "thread_id": stack.thread_id,
        "thread_name": stack.thread_name,
    }


def _frame(frame: StackFrame, hexa: _Hex) -> dict[str, JsonValue]:
    module = frame.module
    symbol = frame.symbol
    function_base = frame.function_base
    instruction = frame.instruction
    return {
        "file": None if symbol is None else symbol.source_file,
        "frame": frame.index,
        "function": None if symbol is None else symbol.function_name,
        "function_offset": None if function_base is None else hexa(instruction - function_base),
        "inlines": _inlines(frame) if frame.inlines else None,
        "line": None if symbol is None else symbol.source_line,
        "missing_symbols": symbol is None,
        "module": None if module is None else module.filename,
        "module_offset": None if module is None else hexa(instruction - module.base),
        "offset": hexa(instruction),
        "trust": frame.trust.value,
        "unloaded_modules": _unloaded_modules(frame, hexa) if frame.unloaded_modules else None,
    }


def _hex_text(pointer_width: int) -> str:
    """The %-format of `hex_formatter`'s text as a JSON string (with its quotes)."""
    return f'"0x%0{pointer_width * 2}x"'


# The text writers below are `_thread`, `_frame` and `_module` written straight to compact JSON:
# a report is mostly frames and modules, and building their objects for the encoder took as long
# as encoding them. In strict mode (the tests) every report's text is compared with the encoding
# of `json_document`, so the two forms cannot drift apart.


class _TextWriter:
    """What the text writers share for one report: the address format and the string escape."""

    __slots__ = ("encode", "escape", "hex_text", "hexa")

    def __init__(self, pointer_width: int, hexa: _Hex) -> None:
        self.hex_text = _hex_text(pointer_width)
        self.hexa = hexa
        self.escape = _escape()
        self.encode = _compact_encoder()

    def string(self, value: str | None) -> str:
        return "null" if value is None else self.escape(value)

    def thread(self, stack: CallStack, frames: list[str], index: int | None = None) -> _Text:
        """`_thread` as text, of its frames' texts; with `index`, the crashing thread."""
        last_error = last_error_name(stack.last_error_value)
        return _Text(
            f'{{"frame_count":{len(stack.frames)},"frames":[{",".join(frames)}],'
            f'"last_error_value":{self.string(last_error)},'
            f'"thread_id":{stack.thread_id},"thread_name":{self.string(stack.thread_name)}'
            + ("}" if index is None else f',"threads_index":{index}}}')
        )

    def frame(self, frame: StackFrame, registers: str | None = None) -> str:
        """`_frame` as text (with "registers", as text, for the crashing thread's first frame)."""
        module = frame.module
        symbol = frame.symbol
        function_base = frame.function_base
        instruction = frame.instruction
        hex_text = self.hex_text
        if symbol is None:
            file = function = line = "null"
        else:
            file = self.string(symbol.source_file)
            function = self.string(symbol.function_name)
            line = "null" if symbol.source_line is None else str(symbol.source_line)
        inlines = self.encode(_inlines(frame)) if frame.inlines else "null"
        unloaded = self.encode(_unloaded_modules(frame, self.hexa)) if frame.unloaded_modules else "null"
        return (
            f'{{"file":{file},"frame":{frame.index},"function":{function},"function_offset":'
            f"{'null' if function_base is None else hex_text % (instruction - function_base)},"
            f'"inlines":{inlines},"line":{line},"missing_symbols":{"true" if symbol is None else "false"},'
            f'"module":{"null" if module is None else self.escape(module.filename)},"module_offset":'
            f"{'null' if module is None else hex_text % (instruction - module.base)},"
            f'"offset":{hex_text % instruction},'
            + ("" if registers is None else f'"registers":{registers},')
            + f'"trust":{self.escape(frame.trust.value)},"unloaded_modules":{unloaded}}}'
        )

    def module(self, entry: ModuleEntry, cert_subjects: Mapping[str, str]) -> str:
        """`_module` as text."""
        module = entry.module
        symbols = entry.symbols
        match = symbols.match
        debug_file, debug_id = _debug_file_and_id(entry)
        base = module.base
        hex_text, escape, string = self.hex_text, self.escape, self.string
        return (
            f'{{"base_addr":{hex_text % base},"cert_subject":{string(cert_subjects.get(module.filename))},'
            f'"code_id":{escape(module.code_id)},"corrupt_symbols":{"true" if symbols.corrupt else "false"},'
            f'"debug_file":{escape(debug_file)},"debug_id":{escape(debug_id or NIL_DEBUG_ID)},'
            f'"end_addr":{hex_text % (base + module.size)},"filename":{escape(module.filename)},'
            f'"inspector_matched_by":{"null" if match is None else escape(match.by.json)},'
            f'"loaded_symbols":{"true" if symbols.loaded else "false"},'
            f'"missing_symbols":{"true" if symbols.missing else "false"},'
            f'"symbol_url":{string(symbols.symbol_url)},"version":{string(module.version)}}}'
        )


def _registers(frame: StackFrame) -> dict[str, JsonValue]:
    """The context's valid registers, zero-padded to its own width (`CpuContext.format_register`)."""
    ctx = frame.context
    hexa = hex_formatter(ctx.pointer_width)
    return {name: hexa(value) for name, value in sorted(ctx.valid_registers())}


def _inlines(frame: StackFrame) -> list[JsonValue]:
    return [
        {"file": inline.file, "function": inline.function, "line": inline.line} for inline in frame.inlines
    ]


def _unloaded_modules(frame: StackFrame, hexa: _Hex) -> list[JsonValue]:
    return [
        {"module": hit.name, "offsets": [hexa(offset) for offset in hit.offsets]}
        for hit in frame.unloaded_modules
    ]


def _debug_file_and_id(entry: ModuleEntry) -> tuple[str, str]:
    """The module's debug file and id, or, for a module without a debug id whose symbols were
    found by code id, what that file names (as rust-minidump reports a symbol server's answer to
    its code-id lookup)."""
    module, match = entry.module, entry.symbols.match
    if match is not None and match.by is MatchedBy.CODE_ID and not has_debug_id(module):
        return basename(match.file.debug_file), match.file.debug_id
    return module.debug_file_name, module.debug_id


def _module(entry: ModuleEntry, hexa: _Hex, cert_subjects: Mapping[str, str]) -> dict[str, JsonValue]:
    module = entry.module
    symbols = entry.symbols
    match = symbols.match
    debug_file, debug_id = _debug_file_and_id(entry)
    base = module.base
    return {
        "base_addr": hexa(base),
        "cert_subject": cert_subjects.get(module.filename),
        "code_id": module.code_id,
        "corrupt_symbols": symbols.corrupt,
        "debug_file": debug_file,
        "debug_id": debug_id or NIL_DEBUG_ID,
        "end_addr": hexa(base + module.size),
        "filename": module.filename,
        "inspector_matched_by": None if match is None else match.by.json,
        "loaded_symbols": symbols.loaded,
        "missing_symbols": symbols.missing,
        "symbol_url": symbols.symbol_url,
        "version": module.version,
    }


def _opt_hex(value: int | str | None, hexa: _Hex) -> str | None:
    return hexa(value) if isinstance(value, int) else None


def _opt_str(value: int | str | None) -> str | None:
    return value if isinstance(value, str) else None


def _json_value(value: object) -> JsonValue:
    """A parsed-JSON value (from `json.loads`) passed through with its type checked."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return dict(sorted(((str(k), _json_value(v)) for k, v in value.items()), key=lambda item: item[0]))
    return str(value)
