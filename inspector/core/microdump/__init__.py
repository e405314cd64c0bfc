"""Breakpad microdumps: the text crash reports Android apps (Chrome, WebView) write to logcat.

`dump.Microdump` reads one microdump of a log into the streams a minidump has, so everything
that reads a `Minidump` reads it too; `log.scan_log` finds the microdumps of a log and
`log.is_microdump` sniffs a file's first bytes. Open any dump with
`inspector.core.dumpfile.open_any_dump`.

The package imports nothing itself: sniffing (`log`) must not cost the reader's import on
every `stackwalk` of a minidump.
"""
