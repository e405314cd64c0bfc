"""ModuleList and UnloadedModuleList: identifiers as rust-minidump prints them, lookups, damage."""

from __future__ import annotations

from inspector.core.minidump import DebugId, Minidump, Module, StreamType, basename
from inspector.core.module_identity import ModuleIdentity
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthMinidump

GUID_AGE = "5A9832E5287241C1838ED98914E9B7FF1"


def test_pdb70_debug_id_code_id_and_debug_file_on_windows() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_module(
            0x400000, 0x2D000, "c:\\test_app.exe", debug_id=GUID_AGE, debug_file="c:\\b\\test_app.pdb",
            time_date_stamp=0x45D35F6C,
        )
        .to_minidump()
    )  # fmt: skip
    module = dump.modules[0]
    assert module.debug_id == GUID_AGE
    assert str(module.debug_identifier) == "5a9832e5-2872-41c1-838e-d98914e9b7ff-1"
    assert module.code_id == "45d35f6c2d000"
    assert module.debug_file == "c:\\b\\test_app.pdb"
    assert basename(module.debug_file) == module.debug_file_name == "test_app.pdb"
    assert module.filename == "test_app.exe"
    assert (module.base, module.size, module.end) == (0x400000, 0x2D000, 0x42D000)


def test_pdb70_with_age_zero_and_small_timestamp_keep_rust_minidump_padding() -> None:
    dump = (
        SynthMinidump(os=Os.WINDOWS)
        .add_module(
            0x1000, 0x9D000, "a.dll", debug_id="03C2597F1E075FC670463CFF006752430", time_date_stamp=0x606738F
        )
        .to_minidump()
    )
    module = dump.modules[0]
    assert module.debug_id == "03C2597F1E075FC670463CFF006752430"
    assert str(module.debug_identifier) == "03c2597f-1e07-5fc6-7046-3cff00675243"
    assert module.code_id == "0606738f9d000"


def test_nil_pdb70_guid_has_no_debug_id() -> None:
    dump = SynthMinidump(os=Os.WINDOWS).add_module(0x1000, 0x1000, "a.dll", debug_id="0" * 33).to_minidump()
    assert dump.modules[0].debug_identifier is None and dump.modules[0].debug_id == ""
    assert DebugId.nil().breakpad() == "0" * 33


def test_pdb20_identifiers() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_module(0x1000, 0x5000, "old.dll", pdb20=(0x3A2B1C0D, 2), time_date_stamp=0x11223344)
        .to_minidump()
    )
    module = dump.modules[0]
    assert module.debug_id == "3A2B1C0D2"
    assert str(module.debug_identifier) == "3A2B1C0D-2"
    assert module.code_id == "112233445000"
    assert module.debug_file == "old.dll"


def test_elf_build_id_gives_guid_debug_id_with_age_zero_and_full_code_id() -> None:
    build_id = bytes.fromhex("b7c04f7b5c2a80af870a1c234668a0de12345678")
    dump = (
        SynthMinidump(os=Os.LINUX)
        .add_module(0x400000, 0x17000, "/usr/bin/driver", build_id=build_id)
        .to_minidump()
    )
    module = dump.modules[0]
    # The first 16 bytes read as a little-endian GUID: data1..data3 byte-swapped.
    assert module.debug_id == "7B4FC0B72A5CAF80870A1C234668A0DE0"
    assert module.code_id == build_id.hex()
    assert module.debug_file == "/usr/bin/driver" and module.debug_file_name == "driver"


def test_short_elf_build_id_is_padded_and_zero_build_id_means_none() -> None:
    dump = (
        SynthMinidump(os=Os.LINUX)
        .add_module(0x1000, 0x1000, "/a.so", build_id=bytes.fromhex("0102030405"))
        .add_module(0x3000, 0x1000, "/font.ttf", build_id=bytes(20))
        .to_minidump()
    )
    short, zero = dump.modules
    assert short.debug_id == "04030201" + "0005" + "0000" + "0" * 16 + "0"
    assert short.code_id == "0102030405"
    assert zero.debug_identifier is None and zero.code_id == ""


def test_macos_pdb70_code_id_is_the_uuid() -> None:
    dump = (
        SynthMinidump(os=Os.MACOS)
        .add_module(0x1000, 0x1000, "/usr/lib/dyld", debug_id="8D9B8F2CC2BC33C09E6D1E0A1E6BB7E50")
        .to_minidump()
    )
    assert dump.modules[0].code_id == "8d9b8f2cc2bc33c09e6d1e0a1e6bb7e5"


def test_windows_module_without_codeview_gets_timestamp_size_code_id_only_on_windows() -> None:
    windows = SynthMinidump(os=Os.WINDOWS).add_module(
        0x1000, 0xA000, "wow64cpu.dll", time_date_stamp=0x378BC3CD
    )
    linux = SynthMinidump(os=Os.LINUX).add_module(0x1000, 0xA000, "SYSV00000000 (deleted)")
    assert windows.to_minidump().modules[0].code_id == "378bc3cda000"
    module = linux.to_minidump().modules[0]
    assert module.code_id == "" and module.debug_id == "" and module.debug_file == ""


def test_unknown_codeview_signature_gives_no_identifiers() -> None:
    dump = (
        SynthMinidump(os=Os.WINDOWS)
        .add_module(0x1000, 0x1000, "x.dll", codeview=b"NB11" + bytes(8))
        .to_minidump()
    )
    module = dump.modules[0]
    assert (module.debug_id, module.code_id, module.debug_file) == ("", "", "")


def test_version_string_per_os() -> None:
    windows = SynthMinidump(os=Os.WINDOWS).add_module(0x1000, 0x1000, "k.dll", version=(10, 0, 22000, 282))
    linux = SynthMinidump(os=Os.LINUX).add_module(0x1000, 0x1000, "k.so", version=(1, 2, 3, 4))
    unset = SynthMinidump(os=Os.WINDOWS).add_module(0x1000, 0x1000, "k.dll")
    assert windows.to_minidump().modules[0].version == "10.0.22000.282"
    # Not Windows/macOS: rust-minidump prints the four raw words.
    assert (
        linux.to_minidump().modules[0].version
        == f"{(1 << 16) | 2}.{(3 << 16) | 4}.{(1 << 16) | 2}.{(3 << 16) | 4}"
    )
    assert unset.to_minidump().modules[0].version is None


def test_filename_splits_on_both_separators() -> None:
    dump = (
        SynthMinidump()
        .add_module(0x1000, 0x10, "C:\\Windows\\System32\\ntdll.dll")
        .add_module(0x2000, 0x10, "/lib/x86_64-linux-gnu/libc.so.6")
        .add_module(0x3000, 0x10, "linux-gate.so")
        .to_minidump()
    )
    assert [m.filename for m in dump.modules] == ["ntdll.dll", "libc.so.6", "linux-gate.so"]


def test_module_satisfies_the_shared_module_identity_protocol() -> None:
    module = SynthMinidump().add_module(0x1000, 0x10, "/a.so", build_id=b"\x11" * 16).to_minidump().modules[0]
    assert isinstance(module, ModuleIdentity)
    identity: ModuleIdentity = module
    assert identity.code_file == "/a.so"


def test_lookup_by_address_and_main_module() -> None:
    modules = (
        SynthMinidump()
        .add_module(0x400000, 0x1000, "/main")
        .add_module(0x7F0000, 0x2000, "/lib")
        .add_module(0x100000, 0x100, "/low")
        .to_minidump()
        .modules
    )
    assert modules.main_module_index == 0 and modules.main_module is modules[0]
    assert modules.module_at(0x400000) is modules[0]
    assert modules.module_at(0x400FFF) is modules[0]
    assert modules.module_at(0x401000) is None
    assert modules.index_at(0x7F1FFF) == 1
    assert modules.module_at(0xFF) is None
    assert [m.code_file for m in modules.by_address()] == ["/low", "/main", "/lib"]


def test_overlapping_modules_lower_start_wins_lookups() -> None:
    modules = (
        SynthMinidump()
        .add_module(0x1000, 0x1000, "/second-in-file")
        .add_module(0x0800, 0x1000, "/lower-start")
        .to_minidump()
        .modules
    )
    assert len(modules) == 2
    assert modules.module_at(0x1400) is not None and modules.module_at(0x1400).code_file == "/lower-start"
    assert modules.module_at(0x1900) is None  # the dropped range does not answer either


def test_module_with_zero_size_is_skipped_like_rust_minidump() -> None:
    dump = SynthMinidump().add_module(0x1000, 0, "/empty").add_module(0x2000, 0x10, "/ok").to_minidump()
    assert [m.code_file for m in dump.modules] == ["/ok"]
    assert any("bad image size" in p.message and not p.rejects_stream for p in dump.problems)
    assert dump.modules.main_module_index == 0


def test_unreadable_name_and_codeview_keep_the_module() -> None:
    synth = (
        SynthMinidump(os=Os.WINDOWS)
        .add_module(0x1000, 0x10, "lost.dll", name_rva=0x7FFFFFF0, debug_id=GUID_AGE)
        .add_module(0x2000, 0x10, "fine.dll")
    )
    data = bytearray(synth.finish())
    dump_ok = synth.to_minidump()
    assert dump_ok.modules[0].code_file == ""
    assert dump_ok.modules[0].debug_id == GUID_AGE
    assert dump_ok.modules[1].code_file == "fine.dll"
    problems = dump_ok.stream_problems(StreamType.ModuleListStream)
    assert problems and problems[0].code == "BadRva" and problems[0].rejects_stream
    rva, _ = synth.stream_locations[StreamType.ModuleListStream]
    cv_rva_at = (
        rva + 4 + 8 + 4 + 4 + 4 + 4 + 52 + 4
    )  # count, base, size, checksum, time, name, version, cv size
    data[cv_rva_at : cv_rva_at + 4] = (0xFFFFFF00).to_bytes(4, "little")
    damaged = Minidump.from_bytes(bytes(data))
    assert damaged.modules[0].codeview is None and damaged.modules[0].debug_id == ""
    assert damaged.modules[1].code_file == "fine.dll"


def test_unloaded_modules() -> None:
    dump = (
        SynthMinidump(os=Os.WINDOWS)
        .add_unloaded_module(
            0x7FF90F450000, 0xEA000, "shcore.dll", time_date_stamp=0xD40BC30A, checksum=0xED569
        )
        .add_unloaded_module(0x7FF90F460000, 0x1000, "overlap.dll")
        .to_minidump()
    )
    first = dump.unloaded_modules.modules[0]
    assert (first.code_file, first.filename, first.code_id) == ("shcore.dll", "shcore.dll", "d40bc30aea000")
    assert first.end == 0x7FF90F53A000
    assert [m.code_file for m in dump.unloaded_modules.modules_at(0x7FF90F460010)] == [
        "shcore.dll",
        "overlap.dll",
    ]
    assert dump.unloaded_modules.modules_at(0x10) == []


def test_module_record_fields_are_kept_for_the_report() -> None:
    module: Module = (
        SynthMinidump(os=Os.WINDOWS)
        .add_module(0x1000, 0x10, "a.dll", checksum=0xABC, time_date_stamp=5, debug_id=GUID_AGE)
        .to_minidump()
        .modules[0]
    )
    assert module.checksum == 0xABC and module.time_date_stamp == 5
    assert module.cv_record.data_size == 4 + 16 + 4 + len("a.dll") + 1 and module.cv_record.rva > 0
    assert module.misc_record.data_size == 0
