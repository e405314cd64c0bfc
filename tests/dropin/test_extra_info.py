"""`--evil-json`: what rust-minidump 0.25 reads from Mozilla's side-channel JSON, and what it ignores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.extra_info import apply_extra_info, read_extra_info
from inspector.core.minidump.format import StreamType
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthMinidump


def _write(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "extra.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_subjects_as_an_object_or_as_a_string_holding_one(tmp_path: Path) -> None:
    by_subject = {"Mozilla Corporation": ["xul.dll", "firefox.exe"], "Microsoft Windows": ["ntdll.dll"]}
    for value in (by_subject, json.dumps(by_subject)):
        info = read_extra_info(_write(tmp_path, {"ModuleSignatureInfo": value, "Other": [1, 2]}))
        assert dict(info.cert_subjects) == {
            "xul.dll": "Mozilla Corporation",
            "firefox.exe": "Mozilla Corporation",
            "ntdll.dll": "Microsoft Windows",
        }
        assert info.problems == () and info.cpu_microcode_version is None


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ([1, 2], "not a JSON object"),
        ({"ModuleSignatureInfo": "[1]"}, "ModuleSignatureInfo"),
        ({"ModuleSignatureInfo": {"subject": "xul.dll"}}, "ModuleSignatureInfo"),
        ({"ModuleSignatureInfo": None}, "ModuleSignatureInfo"),
    ],
)
def test_what_cannot_be_used_is_a_problem_not_an_error(tmp_path: Path, content: object, problem: str) -> None:
    info = read_extra_info(_write(tmp_path, content))
    assert dict(info.cert_subjects) == {}
    assert len(info.problems) == 1 and problem in info.problems[0]


def test_a_missing_file_is_a_problem(tmp_path: Path) -> None:
    info = read_extra_info(tmp_path / "missing.json")
    assert len(info.problems) == 1 and "could not load" in info.problems[0]


def test_the_microcode_version_is_taken_as_given(tmp_path: Path) -> None:
    info = read_extra_info(_write(tmp_path, {"CPUMicrocodeVersion": "0x2f", "ModuleSignatureInfo": {}}))
    assert info.cpu_microcode_version == "0x2f" and info.problems == ()


def _state_with_microcode(cpuinfo: str | None) -> ProcessState:
    dump = SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX).add_module(0x400000, 0x1000, "/usr/bin/app")
    if cpuinfo is not None:
        dump.add_text_stream(StreamType.LinuxCpuInfo, cpuinfo)
    return process(dump.to_minidump(), ProcessOptions(use_symbols_cache=False))


@pytest.mark.parametrize(
    ("cpuinfo", "given", "expected"),
    [
        (None, "0x2f", 0x2F),
        (None, "2f", None),  # rust-minidump wants the 0x
        (None, "0x", None),
        (None, "0xzz", None),
        (None, "0x10000000000000000", None),  # more than a u64
        ("processor\t: 0\nmicrocode\t: 0xb4\n", "0x2f", 0xB4),  # the dump's own /proc/cpuinfo wins
    ],
)
def test_the_microcode_version_is_only_a_fallback(
    tmp_path: Path, cpuinfo: str | None, given: str, expected: int | None
) -> None:
    info = read_extra_info(_write(tmp_path, {"CPUMicrocodeVersion": given}))
    state = apply_extra_info(_state_with_microcode(cpuinfo), info)
    assert state.system.cpu_microcode_version == expected
    assert isinstance(hash(state), int)  # a state stays hashable (a frozen value) with the extra information
