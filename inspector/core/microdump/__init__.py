"""Breakpad microdumps: the text crash reports Android apps (Chrome, WebView) write to logcat.

`Microdump` reads one microdump of a log into the streams a minidump has, so everything that
reads a `Minidump` reads it too; `is_microdump` sniffs a file's first bytes. Open any dump
with `inspector.core.dumpfile.open_any_dump`.
"""

from __future__ import annotations

from inspector.core.microdump.dump import (
    FreeSpace,
    GpuInfo,
    Microdump,
    MicrodumpInfo,
    MicrodumpModuleList,
    MicrodumpSystemInfo,
    NotAMicrodump,
)
from inspector.core.microdump.log import BEGIN, END, MicrodumpLog, MicrodumpText, is_microdump, scan_log
from inspector.core.microdump.records import MicrodumpRecords, parse_records

__all__ = [
    "BEGIN",
    "END",
    "FreeSpace",
    "GpuInfo",
    "Microdump",
    "MicrodumpInfo",
    "MicrodumpLog",
    "MicrodumpModuleList",
    "MicrodumpRecords",
    "MicrodumpSystemInfo",
    "MicrodumpText",
    "NotAMicrodump",
    "is_microdump",
    "parse_records",
    "scan_log",
]
