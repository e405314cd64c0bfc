"""The reader against rust-minidump 0.25 on the real dumps of ../shared/corpus (skipped without it).

For every case of CASES.tsv the values the reader derives (modules, threads,
system info, crash info, pid, uptime, Linux map count, lsb-release, thread
last-error values) are
compared with the reference JSON field by field; for every reference
`--dump --brief` output the rust-minidump part of our `dump` report must be
identical; and `dump` must run on all 80 `.dmp` files (the 8 that are not
minidumps fail with one clear line and exit 1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector import cli_dump
from inspector.core.minidump import DebugId, Minidump, Thread, basename, windows_error_name
from inspector.core.report.dump_text import render_dump, rust_minidump_part
from inspector.core.types import Cpu
from tests.conftest import read_cases

pytestmark = pytest.mark.golden

_32_BIT = (Cpu.X86, Cpu.ARM, Cpu.MIPS, Cpu.PPC, Cpu.SPARC)

#: The corpus files that are neither minidumps nor microdumps (a crash-upload excerpt).
NOT_MINIDUMPS = 1


def _hex(value: int | None, cpu: Cpu) -> str | None:
    if value is None:
        return None
    return f"0x{value:08x}" if cpu in _32_BIT else f"0x{value:016x}"


def _last_error(dump: Minidump, thread: Thread) -> str | None:
    value = dump.last_error_value(thread)
    return None if value is None else windows_error_name(value)


def _ours(dump: Minidump, reference: dict[str, Any]) -> dict[str, Any]:
    info = dump.system_info
    assert info is not None
    microcode = dump.cpu_microcode_version
    cpu = dump.cpu
    ours: dict[str, Any] = {
        "system_info": {
            "os": info.os_name,
            "os_ver": info.os_ver,
            "cpu_arch": info.cpu_arch,
            "cpu_info": info.cpu_info,
            "cpu_count": info.cpu_count,
            "cpu_microcode_version": None if microcode is None else hex(microcode),
        },
        "crash_info": {
            "type": dump.crash_reason,
            "address": _hex(dump.crash_address, cpu),
            "crashing_thread": dump.crashing_thread_index,
        },
        "modules": [
            {
                "base_addr": _hex(m.base, cpu),
                "end_addr": _hex(m.end, cpu),
                "debug_file": basename(m.debug_file),
                "debug_id": (m.debug_identifier or DebugId.nil()).breakpad(),
                "code_id": m.code_id,
                "filename": m.filename,
            }
            for m in dump.modules
        ],
        "threads": [
            {
                "thread_id": t.thread_id,
                "thread_name": dump.thread_name(t),
                "last_error_value": _last_error(dump, t),
            }
            for t in dump.threads
        ],
        "pid": dump.process_id,
        "linux_memory_map_count": dump.linux_memory_map_count,
        "lsb_release": dump.lsb_release,
    }
    if "process_uptime" in reference:  # rust-minidump 0.25 does not write it; later versions do
        ours["process_uptime"] = dump.process_uptime
    return ours


def _theirs(reference: dict[str, Any]) -> dict[str, Any]:
    theirs: dict[str, Any] = {
        "system_info": reference["system_info"],
        "crash_info": {k: reference["crash_info"][k] for k in ("type", "address", "crashing_thread")},
        "modules": [
            {k: m[k] for k in ("base_addr", "end_addr", "debug_file", "debug_id", "code_id", "filename")}
            for m in reference["modules"]
        ],
        "threads": [
            {k: t.get(k) for k in ("thread_id", "thread_name", "last_error_value")}
            for t in reference["threads"]
        ],
        "pid": reference.get("pid"),
        "linux_memory_map_count": reference.get("linux_memory_map_count"),
        "lsb_release": reference.get("lsb_release"),
    }
    if "process_uptime" in reference:
        theirs["process_uptime"] = reference["process_uptime"]
    return theirs


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        yield f"{path}.length", len(value)
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def test_reader_matches_rust_minidump_json_on_every_case(
    corpus_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dumps = compared = equal = 0
    differences = []
    for label, dump_name, _symbols, reference_name in read_cases():
        reference = json.loads((corpus_dir / reference_name).read_text())
        with Minidump.open(corpus_dir / dump_name) as dump:
            ours = dict(_leaves(_ours(dump, reference)))
        dumps += 1
        for path, expected in _leaves(_theirs(reference)):
            compared += 1
            actual = ours.get(path, "<missing>")
            if actual == expected:
                equal += 1
            else:
                differences.append(f"{label} {path}: ours {actual!r}, rust-minidump {expected!r}")
    with capsys.disabled():
        print(f"\n[corpus json] {dumps} dumps, {compared} fields compared, {equal} equal")
    assert dumps >= 70
    assert not differences, "\n".join(differences[:40])


def test_dump_report_matches_rust_minidump_dump_brief(
    corpus_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    references = sorted(corpus_dir.glob("**/*.rust-minidump.dump.txt"))
    mismatches = []
    for reference in references:
        dump_path = Path(str(reference).replace(".rust-minidump.dump.txt", ".dmp"))
        with Minidump.open(dump_path) as dump:
            ours = rust_minidump_part(render_dump(dump))
        if ours != reference.read_bytes().decode("utf-8"):  # not read_text: keep the \r bytes
            mismatches.append(str(reference.relative_to(corpus_dir)))
    with capsys.disabled():
        print(
            f"[corpus dump] {len(references)} reference dumps, {len(references) - len(mismatches)} identical"
        )
    assert len(references) >= 70
    assert not mismatches, mismatches


def test_dump_command_runs_on_every_corpus_file(corpus_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(corpus_dir.glob("**/*.dmp"))
    failures = []
    refused = []
    for path in files:
        code = cli_dump.run([str(path)])
        out, err = capsys.readouterr()
        if code == 0:
            first = "Microdump " if "microdump" in path.parts else "MDRawHeader\n"
            assert out.startswith(first) and err == "", path
        else:
            assert code == 1, path
            assert out == "" and err.count("\n") == 1 and err.startswith("crash-inspector: error: "), err
            assert "not a minidump" in err, err
            refused.append(path.name)
            if path.name != "chrome_crash_report.dmp":  # microdumps are read too
                failures.append(path)
    assert len(files) == 80
    assert len(refused) == NOT_MINIDUMPS and not failures, (refused, failures)
