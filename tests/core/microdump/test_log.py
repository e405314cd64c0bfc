"""Finding microdumps in logs: logcat prefixes, interleaved processes, cut-off and partial blocks."""

from __future__ import annotations

import pytest

from inspector.core.microdump.log import scan_log
from tests.synth.microdump import BEGIN, END, arm_crash, brief_prefix, threadtime_prefix

RECORDS = arm_crash().lines()[1:-1]


@pytest.mark.parametrize(
    "prefix",
    [
        "W/google-breakpad( 3745): ",  # brief
        "02-25 07:54:01.688 F/google-breakpad(13589): ",  # time
        "02-23 15:49:14.700  1740  1739 F google-breakpad: ",  # threadtime
        "F/google-breakpad: ",  # tag only
        "",  # pasted without prefixes
        "I/DEBUG   ( 1234): ",  # another tag: records start where BEGIN did
    ],
    ids=["brief", "time", "threadtime", "tag", "bare", "other-tag"],
)
def test_every_logcat_format_gives_the_same_records(prefix: str) -> None:
    log = scan_log(arm_crash().to_bytes(prefix))
    assert len(log.dumps) == 1 and not log.notes
    dump = log.dumps[0]
    assert [line.text for line in dump.records] == RECORDS
    assert dump.end is not None and dump.begin.number == 1
    assert dump.records[0].number == 2 and dump.records[0].offset == len(f"{prefix}{BEGIN}\n")


def test_windows_line_ends_and_other_log_lines_around() -> None:
    body = arm_crash().to_bytes().replace(b"\n", b"\r\n")
    noise = (
        b"I/ActivityManager(  801): Start proc 3745\r\nW/google-breakpad( 3745): Output crash dump file:\r\n"
    )
    log = scan_log(noise + body + b"D/foo( 1): bar\r\n")
    assert [line.text for line in log.dumps[0].records] == RECORDS
    assert log.dumps[0].begin.number == 3 and not log.notes


def test_two_processes_interleaved_are_told_apart_by_their_pids() -> None:
    first = arm_crash().lines()
    second = arm_crash(crash=(6, "SIGABRT", 0)).lines()
    lines = []
    for a, b in zip(first, second, strict=True):  # line by line, as two crashing processes log
        lines += [f"{brief_prefix(100)}{a}", f"{threadtime_prefix(200)}{b}"]
    log = scan_log(("\n".join(lines) + "\n").encode())
    assert [d.process_id for d in log.dumps] == [100, 200]
    assert [line.text for line in log.dumps[0].records] == first[1:-1]
    assert [line.text for line in log.dumps[1].records] == second[1:-1]
    assert all(d.end is not None for d in log.dumps)


def test_a_new_begin_of_the_same_process_cuts_the_open_block_off() -> None:
    lines = arm_crash().lines()
    text = "".join(f"{brief_prefix(7)}{line}\n" for line in lines[:5] + lines)
    log = scan_log(text.encode())
    assert len(log.dumps) == 2
    cut, whole = log.dumps
    assert cut.end is None and cut.cut_reason == "a new microdump of the same process begins at line 6"
    assert [line.text for line in cut.records] == lines[1:5]
    assert whole.end is not None and whole.begin.number == 6


def test_a_block_without_end_is_cut_by_the_end_of_the_log() -> None:
    lines = arm_crash().lines()[:-3]
    log = scan_log("".join(f"{brief_prefix(7)}{line}\n" for line in lines).encode())
    (dump,) = log.dumps
    assert dump.end is None and dump.cut_reason == f"the log ends at line {len(lines)}"
    assert dump.line_span == f"lines 1–{len(lines)}"


def test_the_tail_of_an_earlier_microdump_is_a_note() -> None:
    tail = [line for line in arm_crash().lines() if line.startswith("M ")] + [END]
    text = "".join(f"{brief_prefix(9)}{line}\n" for line in tail) + arm_crash().to_bytes().decode()
    log = scan_log(text.encode())
    assert len(log.dumps) == 1 and log.dumps[0].begin.number == len(tail) + 1
    (note,) = log.notes
    assert note.code == "MicrodumpFragment" and note.line == 1
    assert note.message.startswith(f"lines 1–{len(tail)}: the end of a microdump whose BEGIN line")


def test_no_microdump_gives_no_blocks() -> None:
    assert scan_log(b"").dumps == ()
    assert scan_log(b"just a log\nW/google-breakpad( 1): Output crash dump file:\n").dumps == ()
