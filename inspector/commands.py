"""What the command line dispatches on and how it exits: sub-command names and exit codes.

A leaf module (it imports nothing of ours) so that the dispatcher (`cli`), the GUI's
argument parser (`app`), the headless commands and the desktop installer can all name
them without importing each other.
"""

from __future__ import annotations

#: Sub-command name -> (module, function taking the remaining argv and returning an exit code).
#: Imported lazily so each command only loads what it uses.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "dump": ("inspector.cli_dump", "run"),
    "stackwalk": ("inspector.cli_stackwalk", "run"),
    "triage": ("inspector.cli_triage", "run"),
}

#: Options that do their job and exit instead of starting the GUI.
DESKTOP_OPTIONS = ("--install-desktop", "--uninstall-desktop")

EXIT_OK = 0
#: the command could not do its job: input it cannot use, a desktop install that failed
EXIT_UNUSABLE = 1
EXIT_USAGE = 2
