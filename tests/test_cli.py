"""The command line's own contract: version, help, exit codes."""

from __future__ import annotations

import subprocess
import sys

from inspector import __version__


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args], check=False, capture_output=True, text=True, timeout=60
    )


def test_version_prints_the_package_version() -> None:
    out = run("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"crash-inspector {__version__}"


def test_help_lists_usage_without_starting_the_gui() -> None:
    out = run("--help")
    assert out.returncode == 0
    assert "usage: crash-inspector" in out.stdout
