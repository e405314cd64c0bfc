"""Threads: records, names, info list, the crashing thread and the stack region a walk uses."""

from __future__ import annotations

from inspector.core.minidump import Minidump, StreamType
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Section


def test_thread_record_fields_stack_and_context() -> None:
    stack = Section(start=0x7FFE0000).append(bytes(range(64)))
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.WINDOWS)
        .add_thread(
            0x5BC,
            context=SynthContext.amd64(rip=0x7FF9111E39E4, rsp=0x7FFE0010),
            stack=stack,
            suspend_count=1,
            priority_class=0x20,
            priority=8,
            teb=0xCBC80B9000,
        )
        .to_minidump()
    )
    [thread] = dump.threads
    assert (thread.index, thread.thread_id, thread.suspend_count) == (0, 0x5BC, 1)
    assert (thread.priority_class, thread.priority, thread.teb) == (0x20, 8, 0xCBC80B9000)
    assert thread.stack_start == 0x7FFE0000 and thread.stack_location.data_size == 64
    assert thread.stack is not None and thread.stack.read_u8(0x7FFE003F) == 63
    assert thread.context is not None and thread.context.instruction_pointer == 0x7FF9111E39E4
    assert thread.context_location.data_size == 1232
    assert dump.thread_list is not None and dump.thread_list.by_id(0x5BC) is thread


def test_thread_names_are_matched_by_id() -> None:
    dump = (
        SynthMinidump(os=Os.WINDOWS)
        .add_thread(1)
        .add_thread(2)
        .add_thread(3)
        .add_thread_names({3: "overflow thread", 1: "main thread"})
        .to_minidump()
    )
    assert [dump.thread_name(t) for t in dump.threads] == ["main thread", None, "overflow thread"]
    names = dump.thread_names
    assert names is not None and [e.thread_id for e in names.entries] == [3, 1]


def test_unreadable_thread_name_is_skipped_but_the_others_stay() -> None:
    synth = SynthMinidump(os=Os.WINDOWS).add_thread(1).add_thread(2).add_thread_names({1: "one", 2: "two"})
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.ThreadNamesStream]
    data[rva + 4 + 4 : rva + 4 + 12] = (0xFFFFFFF0).to_bytes(8, "little")  # first name RVA
    dump = Minidump.from_bytes(bytes(data))
    assert [dump.thread_name(t) for t in dump.threads] == [None, "two"]
    assert not dump.strictly_rejected(StreamType.ThreadNamesStream)


def test_thread_info_list() -> None:
    dump = (
        SynthMinidump(os=Os.WINDOWS)
        .add_thread_info([{"thread_id": 9, "start_address": 0x401000, "create_time": 77, "affinity": 0xF}])
        .to_minidump()
    )
    infos = dump.thread_info_list
    assert infos is not None and len(infos.entries) == 1
    info = infos.get(9)
    assert info is not None and (info.start_address, info.create_time, info.affinity) == (0x401000, 77, 0xF)


def test_crashing_thread_is_the_exception_thread_by_index() -> None:
    dump = (
        SynthMinidump(os=Os.LINUX)
        .add_thread(100)
        .add_thread(200)
        .add_thread(300)
        .add_exception(200, code=11, flags=1)
        .to_minidump()
    )
    assert dump.crashing_thread_index == 1
    assert dump.crashing_thread is not None and dump.crashing_thread.thread_id == 200


def test_crashing_thread_falls_back_to_breakpads_requesting_thread() -> None:
    dump = SynthMinidump().add_thread(1).add_thread(2).add_breakpad_info(requesting_thread_id=2).to_minidump()
    assert dump.crashing_thread_index == 1
    assert dump.crash_reason is None


def test_breakpads_dump_thread_is_never_the_crashing_thread() -> None:
    dump = (
        SynthMinidump()
        .add_thread(5)
        .add_thread(6)
        .add_exception(6, code=6)
        .add_breakpad_info(dump_thread_id=6, requesting_thread_id=5)
        .to_minidump()
    )
    assert dump.dump_thread_id == 6
    assert dump.crashing_thread_index is None


def test_repeated_thread_id_picks_the_last_one() -> None:
    dump = SynthMinidump().add_thread(1).add_thread(1).add_exception(1, code=11).to_minidump()
    assert dump.crashing_thread_index == 1


def test_exception_for_an_unlisted_thread_has_no_crashing_thread() -> None:
    dump = SynthMinidump().add_thread(1).add_exception(42, code=11).to_minidump()
    assert dump.crashing_thread_index is None and dump.crash_reason == "SIGSEGV"


def test_stack_region_is_the_threads_own_stack_when_sp_is_inside() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.AMD64)
        .add_thread(1, context=SynthContext.amd64(rsp=0x8010), stack=(0x8000, bytes(64)))
        .to_minidump()
    )
    region = dump.stack_region_for(dump.threads[0])
    assert region is not None and region.base == 0x8000


def test_exception_sp_outside_the_thread_stack_uses_the_memory_list_region() -> None:
    """A crash on a signal alternate stack: the exception context's SP is in another captured region."""
    dump = (
        SynthMinidump(cpu=Cpu.AMD64)
        .add_thread(1, context=SynthContext.amd64(rsp=0x8010), stack=(0x8000, bytes(64)))
        .add_memory(0x20000, bytes(256))
        .add_exception(1, code=11, context=SynthContext.amd64(rip=1, rsp=0x20080))
        .to_minidump()
    )
    thread = dump.threads[0]
    region = dump.stack_region_for(thread)
    assert region is not None and region.base == 0x20000
    # With the thread's own context, its own stack is used.
    own = dump.stack_region_for(thread, thread.context)
    assert own is not None and own.base == 0x8000


def test_sp_in_no_region_keeps_the_thread_stack() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.X86)
        .add_thread(1, context=SynthContext.x86(esp=0x9999999), stack=(0x8000, bytes(64)))
        .to_minidump()
    )
    region = dump.stack_region_for(dump.threads[0])
    assert region is not None and region.base == 0x8000


def test_sp_needs_eight_readable_bytes_even_on_32_bit() -> None:
    """rust-minidump checks that a u64 can be read at SP, whatever the pointer width."""
    dump = (
        SynthMinidump(cpu=Cpu.X86, stack_in_memory_list=False)
        .add_thread(1, context=SynthContext.x86(esp=0x803C), stack=(0x8000, bytes(64)))
        .add_memory(0x8038, bytes(16))
        .to_minidump()
    )
    region = dump.stack_region_for(dump.threads[0])
    assert region is not None and region.base == 0x8038


def test_stack_with_null_rva_is_found_in_the_memory_list_by_its_start() -> None:
    synth = SynthMinidump(cpu=Cpu.AMD64, stack_in_memory_list=False)
    synth.add_thread(1, context=SynthContext.amd64(rsp=0x8008)).add_memory(0x8000, bytes(32))
    dump = synth.to_minidump()
    thread = dump.threads[0]
    assert thread.stack is None
    region = dump.stack_region_for(thread)
    assert region is not None and region.base == 0x8000


def test_stack_rva_outside_the_file_is_a_tolerated_problem() -> None:
    synth = SynthMinidump(cpu=Cpu.AMD64).add_thread(
        1, context=SynthContext.amd64(), stack=(0x8000, bytes(32))
    )
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.ThreadListStream]
    data[rva + 4 + 36 : rva + 4 + 40] = (0xFFFFFF00).to_bytes(4, "little")  # stack.memory.rva
    dump = Minidump.from_bytes(bytes(data))
    assert dump.threads[0].stack is None and dump.threads[0].context is not None
    assert dump.stream_problems(StreamType.ThreadListStream)[0].code == "BadRva"
    assert not dump.strictly_rejected(StreamType.ThreadListStream)


def test_last_error_value_is_read_from_the_teb_like_rust_minidump() -> None:
    teb = 0x7FFDF000
    teb_bytes = Section(start=teb).append_repeated(0, 13 * 8).d32(183)  # LastErrorValue: 13 pointers in
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.WINDOWS)
        .add_thread(1, teb=teb)
        .add_thread(2, teb=0x1000)
        .add_memory(teb_bytes)
        .to_minidump()
    )
    assert dump.last_error_value(dump.threads[0]) == 183
    assert dump.last_error_value(dump.threads[1]) is None
    x86 = SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS).add_thread(1, teb=0x1000)
    x86.add_memory(Section(start=0x1000).append_repeated(0, 13 * 4).d32(87))
    dump32 = x86.to_minidump()
    assert dump32.last_error_value(dump32.threads[0]) == 87


def test_threads_sharing_one_bad_context_each_report_it_under_their_own_name() -> None:
    """The failed read is shared (cached by location) but every thread still reports its damage."""
    bad = SynthContext.x86(eip=1).to_bytes()  # one object: the builder places it once
    synth = SynthMinidump(cpu=Cpu.AMD64)
    for tid in (1, 2, 3):
        synth.add_thread(tid, context=bad)
    dump = synth.to_minidump()
    assert [t.context for t in dump.threads] == [None, None, None]
    assert len({t.context_location for t in dump.threads}) == 1
    messages = [p.message for p in dump.problems]
    assert len(messages) == 3
    for i, tid in enumerate((1, 2, 3)):
        assert messages[i].startswith(f"thread[{i}] (id {tid:#x}) context: ")
    assert messages[0].split(": ", 1)[1] == messages[2].split(": ", 1)[1]
