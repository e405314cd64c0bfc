"""The crash analysis on synthetic crashes: rust-minidump 0.25's answers, and damaged code memory.

The expected values of the first tests are what `minidump-stackwalk` 0.25 printed for the
same dumps (made with tests/synth; checked by hand against `processor.rs`).
"""

from __future__ import annotations

from pathlib import Path

from inspector.core.analysis import CodeOrigin
from inspector.core.report.human import render_human
from inspector.core.types import Os
from tests.analysis.conftest import RIP, RSP, analyse, crash_dump, crash_info

MEM_COMMIT = 0x1000
PAGE_NOACCESS, PAGE_READWRITE, PAGE_EXECUTE_READ = 0x01, 0x04, 0x20
AV = 0xC0000005


def _summary(text: str) -> list[str]:
    return text[text.index("Crash reason") : text.index("Process uptime")].splitlines()


def test_write_under_4k_may_be_a_bit_flip(tmp_path: Path) -> None:
    """breakpad's linux_write_to_under_4k in small: `mov dword [rax], 0x1` with rax = 0xf93."""
    maps = (
        "00400000-00401000 r-xp 00000000 08:01 1 /bin/app\n7fff0000-7fff1000 rw-p 00000000 00:00 0 [stack]\n"
    )
    path = crash_dump(
        tmp_path,
        bytes.fromhex("c70001000000"),
        registers={"rax": 0xF93, "rbx": 0x400100},  # rbx and rip are near the flipped address
        address=0xF93,
        maps=maps,
    )
    state = analyse(path)
    info = crash_info(state)
    assert info["instruction"] == "mov dword [rax], 0x1"
    assert info["memory_accesses"] == [{"access_type": "write", "address": "0x0000000000000f93", "size": 4}]
    assert info["adjusted_address"] is None
    flip = {
        "address": "0x0000000000400f93",
        "confidence": 0.6625000238418579,
        "details": {
            "is_null": False,
            "nearby_registers": 2,
            "poison_registers": False,
            "was_low": False,
            "was_non_canonical": False,
        },
    }
    assert info["possible_bit_flips"] == [
        {**flip, "source_register": None},
        {**flip, "source_register": "rax"},
    ]
    assert _summary(render_human(state)) == [
        "Crash reason:  SIGSEGV",
        "Crash address: 0x0000000000000f93",
        "Crashing instruction: `mov dword [rax], 0x1`",
        "Memory accessed by instruction:",
        "  0. Address: 0x0000000000000f93",
        "     Size: 4",
        "     Access type: Write",
        "No instruction pointer update by instruction",
        "Crashing address may be the result of a flipped bit:",
        "  0. Valid address: 0x0000000000400f93 (0.663)",
        "  1. Valid address: rax=0x0000000000400f93 (0.663)",
    ]


def test_guard_page_and_its_bit_flip(tmp_path: Path) -> None:
    """A read in a 4 KiB no-access region between two read-write ones (Windows memory info)."""
    regions = [
        (0x10000, 0x10000, MEM_COMMIT, PAGE_READWRITE, 0x20000),
        (0x20000, 0x1000, MEM_COMMIT, PAGE_NOACCESS, 0x20000),
        (0x21000, 0x1000, MEM_COMMIT, PAGE_READWRITE, 0x20000),
    ]
    path = crash_dump(
        tmp_path,
        bytes.fromhex("488b4008"),
        os=Os.WINDOWS,
        registers={"rax": 0x20000},
        exception_code=AV,
        parameters=(0, 0x20008),
        memory_info=regions,
    )
    state = analyse(path)
    info = crash_info(state)
    assert info["type"] == "EXCEPTION_ACCESS_VIOLATION_READ"
    assert info["memory_accesses"] == [
        {"access_type": "read", "address": "0x0000000000020008", "is_likely_guard_page": True, "size": 8}
    ]
    # the address with bit 12 flipped is in the read-write page after; so is rax's with bit 12,
    # and rax's with bit 17 flipped is null
    flips = info["possible_bit_flips"]
    assert isinstance(flips, list)
    assert [(f["address"], f["source_register"], f["confidence"]) for f in flips] == [
        ("0x0000000000021008", None, 0.25),
        ("0x0000000000021000", "rax", 0.625),
        ("0x0000000000000000", "rax", 0.625),
    ]
    assert "     This address falls in a likely guard page." in _summary(render_human(state))


def test_windows_access_violation_inconsistencies(tmp_path: Path) -> None:
    regions = [(0x10000, 0x10000, MEM_COMMIT, PAGE_READWRITE, 0x20000)]
    # the faulting read is in readable memory: the exception contradicts the memory info
    path = crash_dump(
        tmp_path,
        bytes.fromhex("8b00"),
        os=Os.WINDOWS,
        registers={"rax": 0x10010},
        exception_code=AV,
        parameters=(0, 0x10010),
        memory_info=regions,
    )
    state = analyse(path)
    assert crash_info(state)["crash_inconsistencies"] == ["access_violation_when_access_allowed"]
    assert "  Crash reason is access violation exception but access is allowed" in _summary(
        render_human(state)
    )
    # a general-protection fault (read of 0xffff...) by an instruction with only a canonical address
    path = crash_dump(
        tmp_path,
        bytes.fromhex("8b00"),
        os=Os.WINDOWS,
        registers={"rax": 0x10010},
        exception_code=AV,
        parameters=(0, 0xFFFFFFFFFFFFFFFF),
    )
    assert crash_info(analyse(path))["crash_inconsistencies"] == ["non_canonical_address_falsely_reported"]
    # executing at an address other than the instruction pointer's
    path = crash_dump(
        tmp_path, bytes.fromhex("31c0"), os=Os.WINDOWS, exception_code=AV, parameters=(8, 0x12345)
    )
    assert crash_info(analyse(path))["crash_inconsistencies"] == [
        "crashing_access_not_found_in_memory_accesses"
    ]
    # a division by zero at an instruction that does not divide
    path = crash_dump(
        tmp_path, bytes.fromhex("8b00"), os=Os.WINDOWS, registers={"rax": 0x10}, exception_code=0xC0000094
    )
    assert crash_info(analyse(path))["crash_inconsistencies"] == ["int_div_by_zero_not_possible"]


def test_non_canonical_address_behind_a_general_protection_fault(tmp_path: Path) -> None:
    # Linux reports a GPF as SIGSEGV / SI_KERNEL at address 0; macOS as EXC_I386_GPFLT
    path = crash_dump(
        tmp_path,
        bytes.fromhex("488b4008"),
        registers={"rax": 0xDEAD000000000000},
        exception_flags=0x80,
    )
    state = analyse(path)
    info = crash_info(state)
    assert info["type"] == "SIGSEGV / SI_KERNEL"
    assert info["adjusted_address"] == {"kind": "non-canonical", "address": "0xdead000000000008"}
    assert _summary(render_human(state))[1:3] == [
        "Crash address: 0x0000000000000000 **",
        "    ** Non-canonical address detected: 0xdead000000000008",
    ]
    path = crash_dump(
        tmp_path,
        bytes.fromhex("488b00"),
        os=Os.MACOS,
        registers={"rax": 0x8000000000000000},
        exception_code=1,
        exception_flags=13,
    )
    info = crash_info(analyse(path))
    assert info["adjusted_address"] == {"kind": "non-canonical", "address": "0x8000000000000000"}
    # the non-canonical address with its top bit flipped back is null: 1 - 0.75 * 0.1 * 0.5,
    # once for the address and once for rax, which held it
    flip = {
        "address": "0x0000000000000000",
        "confidence": 0.9624999761581421,
        "details": {
            "is_null": True,
            "nearby_registers": 0,
            "poison_registers": False,
            "was_low": False,
            "was_non_canonical": True,
        },
    }
    assert info["possible_bit_flips"] == [
        {**flip, "source_register": None},
        {**flip, "source_register": "rax"},
    ]


def test_return_to_a_null_address(tmp_path: Path) -> None:
    path = crash_dump(tmp_path, bytes.fromhex("c3"))  # the stack holds zeros
    state = analyse(path)
    info = crash_info(state)
    assert info["instruction_pointer_update"] == {"address": "0x0000000000000000"}
    assert info["adjusted_address"] == {"kind": "null-pointer", "offset": "0x0000000000000000"}
    assert info["possible_bit_flips"] is None  # not tried for a null pointer plus an offset
    assert _summary(render_human(state))[-2:] == [
        "Instruction pointer update done by instruction:",
        "  Address: 0x0000000000000000",
    ]


def test_no_memory_at_the_instruction_pointer(tmp_path: Path) -> None:
    """A jump to an unmapped page: no instruction, the flip of the address still tried; no problem."""
    path = crash_dump(tmp_path, None, pc=0, maps="00400000-00401000 r-xp 00000000 08:01 1 /bin/app\n")
    state = analyse(path)
    info = crash_info(state)
    assert info["instruction"] is None and info["memory_accesses"] is None
    flips = info["possible_bit_flips"]
    assert isinstance(flips, list) and [f["address"] for f in flips] == ["0x0000000000400000"]
    assert info["inspector_code_source"] == {
        "from": None,
        "address": "0x0000000000000000",
        "size": 0,
        "module": None,
        "path": None,
        "note": "the dump holds no memory there; the address is in no module",
    }
    assert not state.problems


def test_instruction_running_past_the_end_of_its_region(tmp_path: Path) -> None:
    """Damaged memory: only 2 of the 4 bytes of `mov rax, [rax + 8]` are in the dump."""
    path = crash_dump(tmp_path, bytes.fromhex("488b"))
    state = analyse(path)
    assert state.analysis is not None and state.analysis.instruction is None
    assert [(p.code, p.message) for p in state.problems] == [
        (
            "CodeTruncated",
            f"the crashing instruction at {RIP:#x} runs past the end of the dump's memory region: "
            "only 2 byte(s) there (48 8b)",
        )
    ]
    info = crash_info(state)
    assert info["instruction"] is None
    assert "Crashing instruction" not in render_human(state)
    assert "[dump] CodeTruncated" in render_human(state)


def test_short_region_is_enough_for_a_short_instruction(tmp_path: Path) -> None:
    path = crash_dump(tmp_path, bytes.fromhex("c3"), stack=(0x401234).to_bytes(8, "little"))
    state = analyse(path)
    assert crash_info(state)["instruction"] == "ret"
    assert crash_info(state)["instruction_pointer_update"] == {"address": "0x0000000000401234"}
    assert not state.problems


def test_bytes_that_do_not_decode(tmp_path: Path) -> None:
    path = crash_dump(tmp_path, bytes.fromhex("06") + bytes(15))  # push es: not in 64-bit mode
    state = analyse(path)
    assert [p.code for p in state.problems] == ["CodeUndecodable"]
    assert crash_info(state)["instruction"] is None
    assert state.analysis is not None and state.analysis.code_source is not None
    assert state.analysis.code_source.origin is CodeOrigin.DUMP


def test_code_source_is_reported_beside_the_reference_fields(tmp_path: Path) -> None:
    path = crash_dump(tmp_path, bytes.fromhex("488b4008") + bytes(12), registers={"rax": 0})
    info = crash_info(analyse(path))
    assert info["inspector_code_source"] == {
        "from": "dump",
        "address": f"{RIP:#018x}",
        "size": 15,
        "module": None,
        "path": None,
        "note": None,
    }
    assert info["adjusted_address"] == {"kind": "null-pointer", "offset": "0x0000000000000008"}


def test_stack_memory_reads_use_the_crashing_threads_stack(tmp_path: Path) -> None:
    stack = bytes(8) + (0x7FFF3AB68FC0).to_bytes(8, "little") + bytes(240)
    path = crash_dump(tmp_path, bytes.fromhex("c3"), sp=RSP, registers={"rsp": RSP + 8}, stack=stack)
    assert crash_info(analyse(path))["instruction_pointer_update"] == {"address": "0x00007fff3ab68fc0"}
