"""`crash-inspector triage`: the JSON shape other tools read, CSV, self-contained HTML, progress,
exit codes, no traceback for bad input, and Ctrl+C writing what is done."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from inspector import cli
from tests.triage.conftest import CRASH_FOLDER_ENTRIES, OWN_CRASHES, REPO, own_symbol_paths

CRASH_KEYS = [
    "dump",
    "signature",
    "crash_reason",
    "crash_address",
    "crashing_thread",
    "top_frames",
    "modules_missing_symbols",
    "problems",
]


def _symbols(cache: str) -> list[str]:
    args = ["--symbols-cache", cache]
    for path in own_symbol_paths():
        args += ["--symbols", path]
    return args


def _triage(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", "triage", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def test_json_has_exactly_the_documented_shape(crash_folder: Path, index_cache: str, tmp_path: Path) -> None:
    out = tmp_path / "triage.json"
    run = _triage(
        "--json", str(out), "--workers", "2", *_symbols(index_cache), "crashes", cwd=crash_folder.parent
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    document = json.loads(out.read_text(encoding="utf-8"))
    assert list(document) == ["crashes", "groups"]
    crashes, groups = document["crashes"], document["groups"]
    assert len(crashes) == CRASH_FOLDER_ENTRIES
    for crash in crashes:
        assert list(crash) == CRASH_KEYS
        assert isinstance(crash["dump"], str) and isinstance(crash["signature"], str)
        assert isinstance(crash["crash_reason"], str) and isinstance(crash["crash_address"], str)
        assert crash["crashing_thread"] is None or isinstance(crash["crashing_thread"], int)
        assert all(isinstance(x, str) for k in CRASH_KEYS[5:] for x in crash[k])
    # paths as found: relative to where the command ran, as it was given
    assert sorted(c["dump"] for c in crashes)[0].startswith("crashes/")
    sample = next(c for c in crashes if c["dump"] == "crashes/sample-report.dmp")
    assert sample["signature"] == "store_pixel" and sample["crash_reason"].startswith("SIGSEGV")
    assert sample["crash_address"].startswith("0x") and sample["crashing_thread"] == 2
    assert sample["top_frames"][0].startswith("render_farm!store_pixel")
    for group in groups:
        assert list(group) == ["signature", "count", "dumps"] and group["count"] == len(group["dumps"])
    assert [g["count"] for g in groups] == sorted((g["count"] for g in groups), reverse=True)
    assert sum(g["count"] for g in groups) == len(crashes)
    assert groups[0] == {
        "signature": "store_pixel",
        "count": 3,
        "dumps": [
            "crashes/sample-report.dmp",
            "crashes/broken/folder.dmp/inside",
            "crashes/uploads/0123-abcd",
        ],
    }
    # the bad entries are in the output, each with why
    bad = {c["dump"]: c for c in crashes if c["signature"].startswith("unreadable dump")}
    assert {
        "crashes/broken/notes-not-a-dump.dmp",
        "crashes/broken/gone.dmp",
        "crashes/broken/folder.dmp",
    } <= set(bad)
    assert all(c["problems"] for c in bad.values())
    # progress on stderr (not a terminal here: a line every tenth), then a summary
    assert f"triage: {CRASH_FOLDER_ENTRIES}/{CRASH_FOLDER_ENTRIES} dumps" in run.stderr
    assert run.stderr.rstrip().endswith("could not be read")


def test_csv_has_one_row_per_dump(crash_folder: Path, index_cache: str, tmp_path: Path) -> None:
    run = _triage("--csv", "-", "--workers", "1", *_symbols(index_cache), str(crash_folder))
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    assert len(rows) == CRASH_FOLDER_ENTRIES
    assert list(rows[0]) == ["dump", "signature", "group_size", *CRASH_KEYS[2:]]
    sample = next(r for r in rows if r["dump"].endswith("sample-report.dmp"))
    assert sample["signature"] == "store_pixel" and sample["group_size"] == "3"
    assert sample["top_frames"].startswith("render_farm!store_pixel") and " | " in sample["top_frames"]


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_report_is_self_contained(crash_folder: Path, index_cache: str, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    run = _triage("--html", str(out), *_symbols(index_cache), str(crash_folder))
    assert run.returncode == 0, run.stderr
    page = _Collector()
    page.feed(out.read_text(encoding="utf-8"))
    tags = [tag for tag, _ in page.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags  # nothing to fetch
    assert not [
        a for _, attrs in page.tags for k, a in attrs.items() if k in ("src", "href") and a and ":" in a
    ]
    # a bar per group (fewer than 20 here) in the inline SVG chart, and every crash's frames
    groups = json.loads(_triage("--json", "-", *_symbols(index_cache), str(crash_folder)).stdout)["groups"]
    assert tags.count("svg") == 1 and tags.count("rect") == len(groups)
    text = "".join(page.text)
    assert f"{CRASH_FOLDER_ENTRIES} dumps, " in text
    assert "render_farm!store_pixel" in text and "discounted_unit_price" in text


def test_without_outputs_the_groups_are_printed(index_cache: str) -> None:
    dump = str(OWN_CRASHES["lib_callback"][0])
    run = _triage("--workers", "1", *_symbols(index_cache), dump, dump)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "     2  discounted_unit_price"


def test_bad_input_is_reported_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "a.dmp").write_text("not a dump")
    run = _triage("--json", "-", str(tmp_path / "a.dmp"), str(tmp_path / "missing.dmp"))
    assert run.returncode == 1  # nothing readable: the outputs are written all the same
    assert "Traceback" not in run.stderr
    assert "none of the inputs is a readable minidump" in run.stderr
    signatures = [c["signature"] for c in json.loads(run.stdout)["crashes"]]
    assert signatures == ["unreadable dump (NotAMinidump)", "unreadable dump (UnreadableFile)"]


def test_empty_folder_is_one_error_line(tmp_path: Path) -> None:
    run = _triage(str(tmp_path))
    assert run.returncode == 1 and run.stderr == "crash-inspector: error: no minidumps found in the inputs\n"


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["triage", "--workers", "0", str(tmp_path)]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
    assert cli.main(["triage", "--workers", "2", "--scheduler", "tcp://x:1", str(tmp_path)]) == 2
    assert cli.main(["triage", "--html", "-", str(tmp_path)]) == 2


def test_scheduler_without_dask_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert cli.main(["triage", "--scheduler", "tcp://127.0.0.1:1", str(OWN_CRASHES["sample"][0])]) == 1
    err = capsys.readouterr().err
    assert "pip install 'crash-inspector[cluster]'" in err and "Traceback" not in err


@pytest.mark.slow
def test_ctrl_c_stops_and_writes_what_is_done(tmp_path: Path, index_cache: str) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    sample = OWN_CRASHES["sample"][0]
    # enough dumps that the run cannot finish between its first progress line (a tenth done) and
    # the signal, even when this machine is busy: a warm walk of the sample takes milliseconds
    for i in range(3000):
        os.link(sample, folder / f"{i:04}.dmp")
    out = tmp_path / "partial.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "inspector",
            "triage",
            "--workers",
            "2",
            "--json",
            str(out),
            *_symbols(index_cache),
            str(folder),
        ],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: SIGINT to all of it, as Ctrl+C in a terminal
        cwd=REPO,
    )
    assert proc.stderr is not None
    with proc.stderr:
        first = proc.stderr.readline()  # the first progress line: a tenth is done
        assert first.startswith("triage: "), first
        os.killpg(proc.pid, signal.SIGINT)
        rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130
    assert "Traceback" not in rest and "interrupted: " in rest
    crashes = json.loads(out.read_text(encoding="utf-8"))["crashes"]
    assert 300 <= len(crashes) < 3000
    assert {c["signature"] for c in crashes} == {"store_pixel"}
