"""Bad input is the normal case: hostile counts, cut-off streams and wild offsets are reported, never fatal.

Every test damages one stream and checks that (1) the damage is recorded as a
problem with the stream type, (2) what fits is still read and (3) the other
streams of the dump read as before. The property test at the end mutates a
rich synthetic dump at random and checks that only `MinidumpError` escapes.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.errors import MinidumpError
from inspector.core.minidump import Minidump, StreamType
from inspector.core.report.dump_text import render_dump
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Section


def healthy() -> SynthMinidump:
    return (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_thread(1, context=SynthContext.amd64(rip=0x401000, rsp=0x8000), stack=(0x8000, bytes(64)))
        .add_module(0x400000, 0x1000, "/bin/app", build_id=b"\x07" * 20)
        .add_exception(1, code=11, flags=1, context=SynthContext.amd64(rip=0x401000, rsp=0x8000))
        .add_linux_maps("00400000-00401000 r-xp 00000000 00:00 0 /bin/app\n")
    )


def rest_is_intact(dump: Minidump) -> None:
    assert dump.system_info is not None and dump.system_info.cpu_arch == "amd64"
    assert dump.crash_reason == "SIGSEGV / SEGV_MAPERR"
    assert dump.linux_memory_map_count == 1


def test_thread_list_claiming_four_billion_threads_in_a_tiny_stream() -> None:
    records = Section()
    for tid in (10, 11):
        records.d32(tid).d32(0).d32(0).d32(0).d64(0).d64(0).d32(0).d32(0).d32(0).d32(0)
    body = Section().d32(0xFFFFFFFF).append(records)
    dump = healthy().add_stream(StreamType.ThreadListStream, body).to_minidump()  # a 2nd ThreadList, used
    assert [t.thread_id for t in dump.threads] == [10, 11]
    assert any(p.code == "StreamSizeMismatch" for p in dump.stream_problems(StreamType.ThreadListStream))
    assert dump.modules[0].code_file == "/bin/app"
    rest_is_intact(dump)


def test_huge_counts_in_every_list_stream_read_only_what_fits() -> None:
    huge = 0xFFFFFFFF
    streams = {
        StreamType.ModuleListStream: Section().d32(huge).append(bytes(10)),
        StreamType.MemoryListStream: Section().d32(huge).append(bytes(16)),
        StreamType.ThreadNamesStream: Section().d32(huge).append(bytes(5)),
        StreamType.UnloadedModuleListStream: Section().d32(12).d32(24).d32(huge),
        StreamType.MemoryInfoListStream: Section().d32(16).d32(48).d64(1 << 60),
        StreamType.ThreadInfoListStream: Section().d32(12).d32(64).d32(huge).append(bytes(64)),
        StreamType.HandleDataStream: Section().d32(16).d32(32).d32(huge).d32(0),
        StreamType.Memory64ListStream: Section().d64(1 << 63).d64(0),
    }
    synth = SynthMinidump(cpu=Cpu.AMD64).add_thread(1, context=SynthContext.amd64(rip=5))
    for stream_type, body in streams.items():
        synth.add_stream(stream_type, body)
    dump = synth.to_minidump()
    dump.parse_all()
    assert dump.module_list is not None and len(dump.module_list) == 0
    assert dump.thread_info_list is not None and len(dump.thread_info_list.entries) == 1
    assert dump.memory64_list is not None and len(dump.memory64_list.regions) == 0
    for stream_type in streams:
        assert dump.stream_problems(stream_type), stream_type
    assert dump.threads[0].context is not None and dump.threads[0].context.instruction_pointer == 5


def test_stream_cut_off_by_the_end_of_the_file() -> None:
    synth = SynthMinidump(cpu=Cpu.AMD64)
    for i in range(5):
        synth.add_module(0x10000 * (i + 1), 0x1000, f"/lib{i}.so")
    data = synth.finish()
    rva, _ = synth.stream_locations[StreamType.ModuleListStream]
    cut = data[: rva + 4 + 108 * 2 + 50]  # two whole modules and part of a third
    dump = Minidump.from_bytes(cut)
    modules = dump.module_list
    assert modules is not None and len(modules) == 2  # names live after the streams: gone, but records remain
    problems = dump.stream_problems(StreamType.ModuleListStream)
    assert any("cut off" in p.message for p in problems)
    assert dump.system_info is not None


def test_stream_with_an_rva_outside_the_file() -> None:
    synth = healthy().add_linux_cpu_info("microcode : 0x1\n")
    data = bytearray(synth.finish())
    # Point the LinuxCpuInfo directory entry far away.
    directory = int.from_bytes(data[12:16], "little")
    for i in range(int.from_bytes(data[8:12], "little")):
        at = directory + 12 * i
        if int.from_bytes(data[at : at + 4], "little") == StreamType.LinuxCpuInfo:
            data[at + 8 : at + 12] = (0x7FFFFFF0).to_bytes(4, "little")
    dump = Minidump.from_bytes(bytes(data))
    assert dump.linux_cpu_info is None and dump.cpu_microcode_version is None
    assert dump.stream_problems(StreamType.LinuxCpuInfo)[0].code == "BadRva"
    rest_is_intact(dump)


def test_exception_stream_too_short() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.AMD64)
        .add_thread(1)
        .add_stream(StreamType.ExceptionStream, bytes(40))
        .add_module(0x1000, 0x10, "/a")
        .to_minidump()
    )
    assert dump.exception is None and dump.crash_reason is None and dump.crashing_thread_index is None
    assert dump.stream_problems(StreamType.ExceptionStream)[0].code == "StreamTruncated"
    assert dump.modules[0].code_file == "/a"


def test_misc_info_smaller_than_version_1() -> None:
    dump = SynthMinidump().add_stream(StreamType.MiscInfoStream, bytes(10)).add_thread(1).to_minidump()
    assert dump.misc_info is None and dump.process_id is None
    assert dump.problems and len(dump.threads) == 1


def test_problems_name_stream_offset_and_reason() -> None:
    dump = SynthMinidump().add_stream(StreamType.ThreadListStream, b"\x05\x00").to_minidump()
    dump.parse_all()
    [problem] = dump.problems
    entry = dump.entry(StreamType.ThreadListStream)
    assert entry is not None
    assert problem.stream_type == StreamType.ThreadListStream and problem.offset == entry.rva
    assert "thread list count" in problem.message and problem.code == "StreamTruncated"
    assert "stream 0x3" in str(problem)


def rich_dump() -> bytes:
    stack = Section(start=0x7FFF0000)
    for i in range(16):
        stack.d64(0x401000 + i)
    return (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.WINDOWS)
        .add_thread(1, context=SynthContext.amd64(rip=0x401000, rsp=0x7FFF0000), stack=stack)
        .add_thread(2, context=SynthContext.amd64(rip=0x402000, rsp=0x7FFF0040))
        .add_module(0x400000, 0x10000, "c:\\app.exe", debug_id="5A9832E5287241C1838ED98914E9B7FF1")
        .add_unloaded_module(0x500000, 0x1000, "gone.dll")
        .add_exception(1, 0xC0000005, parameters=(1, 0x45), context=SynthContext.amd64(rip=1, rsp=0x7FFF0008))
        .add_misc_info(process_id=9, process_create_time=5, version=5)
        .add_thread_names({1: "main", 2: "worker"})
        .add_thread_info([{"thread_id": 1}])
        .add_memory_info([(0x400000, 0x10000, 0x1000, 0x20, 0x1000000)])
        .add_memory64(0x900000, b"m" * 32)
        .add_breakpad_info(requesting_thread_id=1)
        .add_assertion(expression="e", line=3)
        .add_crashpad_info(simple_annotations={"k": "v"}, modules={0: {"annotation_objects": {"a": "b"}}})
        .add_handle_data([(4, "File", "x")])
        .add_linux_cpu_info("microcode : 0x1\n")
        .add_linux_maps("00400000-00410000 r-xp 00000000 00:00 0 /x\n")
        .add_text_stream(StreamType.MozSoftErrors, "[]")
        .finish()
    )


RICH = rich_dump()


def exercise(dump: Minidump) -> None:
    """Everything a report or the GUI touches."""
    dump.parse_all()
    render_dump(dump)
    _ = (dump.crash_reason, dump.crash_address, dump.process_id, dump.process_uptime, dump.lsb_release)
    _ = (dump.linux_memory_map_count, dump.cpu_microcode_version, dump.unknown_streams())
    for thread in dump.threads:
        dump.stack_region_for(thread)
        dump.thread_name(thread)
    for module in dump.modules:
        dump.modules.module_at(module.base)
        _ = (module.debug_id, module.code_id, module.filename)
    for region in dump.memory:
        dump.memory.read_u64(region.base)


def test_the_rich_fuzzing_seed_reads_cleanly() -> None:
    dump = Minidump.from_bytes(RICH)
    exercise(dump)
    assert dump.problems == ()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edits=st.lists(
        st.tuples(st.integers(min_value=0, max_value=len(RICH) - 1), st.binary(min_size=1, max_size=8)),
        min_size=1,
        max_size=6,
    ),
    cut=st.one_of(st.none(), st.integers(min_value=0, max_value=len(RICH))),
)
def test_mutated_dumps_only_ever_raise_minidump_errors(
    edits: list[tuple[int, bytes]], cut: int | None
) -> None:
    data = bytearray(RICH)
    for offset, patch in edits:
        data[offset : offset + len(patch)] = patch
    if cut is not None:
        del data[cut:]
    try:
        dump = Minidump.from_bytes(bytes(data))
    except MinidumpError:
        return
    exercise(dump)


@settings(max_examples=60, deadline=None)
@given(
    stream_type=st.sampled_from(
        [t for t in StreamType if t not in (StreamType.LastReservedStream,)] + [0x4B6B0002, 0x12345678]
    ),
    body=st.binary(max_size=300),
)
def test_random_bytes_in_any_stream_never_escape(stream_type: int, body: bytes) -> None:
    dump = Minidump.from_bytes(SynthMinidump().add_thread(1).add_stream(stream_type, body).finish())
    exercise(dump)
