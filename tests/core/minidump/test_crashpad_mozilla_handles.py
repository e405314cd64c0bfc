"""CrashpadInfo annotations, Mozilla's macOS / Linux extension streams, and HandleData."""

from __future__ import annotations

from inspector.core.minidump import Minidump, StreamType
from inspector.core.types import Os
from tests.synth.minidump import SynthMinidump
from tests.synth.section import Section


def test_crashpad_simple_and_module_annotations() -> None:
    dump = (
        SynthMinidump(os=Os.MACOS)
        .add_crashpad_info(
            simple_annotations={"prod": "Electron", "ver": "1.4.3"},
            modules={
                1: {
                    "list_annotations": ["CoreSimulator 857.14"],
                    "simple_annotations": {"platform": "darwin"},
                    "annotation_objects": {
                        "exceptionName": "NSRangeException",
                        "Counter": (0x8001, b"\x01\x02"),
                    },
                }
            },
            report_id="725058a67289480f8a41517bd0ba216b",
        )
        .to_minidump()
    )
    info = dump.crashpad_info
    assert info is not None and dump.problems == ()
    assert info.version == 1 and str(info.report_id) == "725058a6-7289-480f-8a41-517bd0ba216b"
    assert dict(info.simple_annotations) == {"prod": "Electron", "ver": "1.4.3"}
    [module] = info.modules
    assert module.module_index == 1 and module.list_annotations == ("CoreSimulator 857.14",)
    assert dict(module.simple_annotations) == {"platform": "darwin"}
    objects = module.annotation_objects
    assert list(objects) == ["Counter", "exceptionName"]  # sorted like rust-minidump's BTreeMap
    assert objects["exceptionName"].value == "NSRangeException" and objects["exceptionName"].kind == "string"
    assert objects["Counter"].kind == "user defined" and objects["Counter"].value is None


def test_damaged_crashpad_annotations_keep_what_is_readable() -> None:
    synth = SynthMinidump().add_crashpad_info(simple_annotations={"a": "1", "b": "2"})
    data = bytearray(synth.finish())
    dump = Minidump.from_bytes(bytes(data))
    assert dump.crashpad_info is not None
    rva, _ = synth.stream_locations[StreamType.CrashpadInfoStream]
    dict_rva = int.from_bytes(data[rva + 40 : rva + 44], "little")
    data[dict_rva + 4 : dict_rva + 8] = (0xFFFFFFF0).to_bytes(4, "little")  # first key's RVA
    damaged = Minidump.from_bytes(bytes(data))
    info = damaged.crashpad_info
    assert info is not None and dict(info.simple_annotations) == {"b": "2"}
    assert damaged.strictly_rejected(StreamType.CrashpadInfoStream)


def test_crashpad_version_zero_is_flagged() -> None:
    dump = SynthMinidump().add_crashpad_info(version=0).to_minidump()
    assert dump.crashpad_info is not None and dump.strictly_rejected(StreamType.CrashpadInfoStream)


def test_mac_crash_info_version_5_record() -> None:
    strings = b"/usr/lib/libobjc.dylib\0message text\0\0bt\0msg2\0"
    fixed = (
        (0x4D7A0001).to_bytes(8, "little")
        + (5).to_bytes(8, "little")
        + (0x1234).to_bytes(8, "little")
        + (0).to_bytes(8, "little")
        + (0xAB).to_bytes(8, "little")
    )
    record = fixed + strings
    synth = SynthMinidump(os=Os.MACOS).add_stream(
        StreamType.MozMacosCrashInfoStream, bytes(172 + len(record))
    )
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.MozMacosCrashInfoStream]
    header = Section().d32(StreamType.MozMacosCrashInfoStream).d32(1).d32(40).d32(len(record)).d32(rva + 172)
    data[rva : rva + 20] = header.finish()
    data[rva + 172 : rva + 172 + len(record)] = record
    info = Minidump.from_bytes(bytes(data)).mac_crash_info
    assert info is not None and len(info.records) == 1
    rec = info.records[0]
    assert (rec.version, rec.thread, rec.dialog_mode, rec.abort_cause) == (5, 0x1234, 0, 0xAB)
    assert (rec.module_path, rec.message, rec.signature_string, rec.backtrace, rec.message2) == (
        "/usr/lib/libobjc.dylib",
        "message text",
        "",
        "bt",
        "msg2",
    )
    assert rec.value("dialog_mode") is None and rec.value("signature_string") is None


def test_mac_crash_info_with_a_bogus_record_count_reads_at_most_twenty() -> None:
    synth = SynthMinidump(os=Os.MACOS).add_stream(
        StreamType.MozMacosCrashInfoStream,
        Section().d32(0x4D7A0001).d32(0xFFFFFFFF).d32(40).append(bytes(160)),
    )
    dump = synth.to_minidump()
    info = dump.mac_crash_info
    assert info is not None and info.records == ()
    assert dump.strictly_rejected(StreamType.MozMacosCrashInfoStream)


def test_mac_bootargs() -> None:
    synth = SynthMinidump(os=Os.MACOS).add_stream(StreamType.MozMacosBootargsStream, bytes(12))
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.MozMacosBootargsStream]
    text = "-v debug=0x144".encode("utf-16-le")
    data += len(text).to_bytes(4, "little") + text
    data[rva : rva + 12] = (
        Section().d32(StreamType.MozMacosBootargsStream).d64(len(data) - len(text) - 4).finish()
    )
    boot = Minidump.from_bytes(bytes(data)).mac_bootargs
    assert boot is not None and boot.bootargs == "-v debug=0x144"


def test_linux_limits_and_soft_errors() -> None:
    limits = (
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max cpu time              unlimited            unlimited            seconds   \n"
        "Max open files            1024                 4096                 files     \n"
        "Max realtime timeout      unlimited            unlimited            us        \n"
    )
    dump = (
        SynthMinidump()
        .add_text_stream(StreamType.MozLinuxLimits, limits)
        .add_text_stream(StreamType.MozSoftErrors, '[{"ModuleListError":"x"}]')
        .to_minidump()
    )
    assert dump.linux_limits is not None
    rows = dump.linux_limits.limits()
    assert [(r.name, r.soft, r.hard, r.unit) for r in rows[:2]] == [
        ("Max cpu time", "unlimited", "unlimited", "seconds"),
        ("Max open files", 1024, 4096, "files"),
    ]
    assert dump.soft_errors is not None and dump.soft_errors.value == [{"ModuleListError": "x"}]
    bad = SynthMinidump().add_text_stream(StreamType.MozSoftErrors, b"\xff").to_minidump()
    assert bad.soft_errors is None and bad.problems[0].code == "BadData"
    not_json = SynthMinidump().add_text_stream(StreamType.MozSoftErrors, "{").to_minidump()
    assert not_json.soft_errors is not None and not_json.soft_errors.value is None


def test_handle_data_version_1() -> None:
    dump = (
        SynthMinidump(os=Os.WINDOWS)
        .add_handle_data([(4, "File", None), (8, "Event", "\\BaseNamedObjects\\x")])
        .to_minidump()
    )
    handles = dump.handle_data
    assert handles is not None and len(handles) == 2
    first, second = handles.handles
    assert (first.handle, first.type_name, first.object_name, first.object_info_rva) == (
        4,
        "File",
        None,
        None,
    )
    assert second.object_name == "\\BaseNamedObjects\\x"


def test_handle_data_version_2_object_information_chain_stops_on_cycles() -> None:
    synth = SynthMinidump(os=Os.WINDOWS).add_stream(StreamType.HandleDataStream, bytes(16 + 40 + 12))
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.HandleDataStream]
    info_rva = rva + 56
    body = Section().d32(16).d32(40).d32(1).d32(0)
    body.d64(0x10).d32(0).d32(0).d32(0).d32(0).d32(1).d32(1).d32(info_rva).d32(0)
    body.d32(info_rva).d32(1).d32(8)  # points back at itself
    data[rva : rva + len(body)] = body.finish()
    handles = Minidump.from_bytes(bytes(data)).handle_data
    assert handles is not None
    [handle] = handles.handles
    assert handle.object_info_rva == info_rva
    assert (
        1 <= len(handle.object_infos) <= 256 and handle.object_infos[0].type_name == "MiniThreadInformation1"
    )


def test_handle_descriptor_of_unknown_size_is_refused() -> None:
    dump = (
        SynthMinidump()
        .add_stream(StreamType.HandleDataStream, Section().d32(16).d32(24).d32(1).d32(0))
        .to_minidump()
    )
    assert dump.handle_data is not None and len(dump.handle_data) == 0
    assert dump.strictly_rejected(StreamType.HandleDataStream)
