"""`crash-inspector --install-desktop`: a .dmp is recognised, opens with us, and uninstall leaves nothing.

The integration tests run the real freedesktop tools (shared-mime-info, xdg-utils,
GLib's `gio`) against temporary XDG folders, and skip with the reason when a tool
is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.desktop_install import (
    DESKTOP_ID,
    PNG_SIZES,
    DesktopFiles,
    desktop_entry,
    exec_argument,
    install,
    remove_associations,
    uninstall,
)
from inspector.resources import (
    APP_ID,
    MICRODUMP_MIME_TYPE,
    MINIDUMP_MIME_TYPE,
    desktop_files_dir,
    sample_dump,
)
from tests.conftest import REPO

#: variables that make xdg-utils talk to a particular desktop instead of its generic code
DESKTOP_SESSION_VARIABLES = (
    "XDG_CURRENT_DESKTOP",
    "DESKTOP_SESSION",
    "KDE_FULL_SESSION",
    "GNOME_DESKTOP_SESSION_ID",
)


@dataclass
class Xdg:
    """Temporary XDG folders and the environment that points the tools at them."""

    data: Path
    config: Path
    env: dict[str, str]

    @property
    def files(self) -> DesktopFiles:
        return DesktopFiles(self.data)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, capture_output=True, text=True, env=self.env, timeout=60, check=False)

    def all_files(self) -> set[Path]:
        return {p for root in (self.data, self.config) for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Xdg:
    data, config = tmp_path / "data", tmp_path / "config"
    data.mkdir()
    config.mkdir()
    for name in DESKTOP_SESSION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return Xdg(data, config, dict(os.environ))


def need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed (Debian: apt-get install shared-mime-info xdg-utils "
            "desktop-file-utils libglib2.0-bin)"
        )


def install_command(xdg: Xdg, *args: str) -> subprocess.CompletedProcess[str]:
    return xdg.run(sys.executable, "-m", "inspector", *args)


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A stand-in for the app: a launcher that writes the arguments it got, one per line."""
    record = tmp_path / "launched-with.txt"
    launcher = tmp_path / "bin" / "crash-inspector"
    launcher.parent.mkdir()
    launcher.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > {record}\n')
    launcher.chmod(0o755)
    yield launcher, record


def wait_for(path: Path, timeout_s: float = 10) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().endswith("\n"):
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written within {timeout_s} s")


# ---- the real thing: the freedesktop tools on temporary XDG folders ----


def test_install_makes_minidumps_ours_and_uninstall_removes_everything(xdg: Xdg, tmp_path: Path) -> None:
    need("update-mime-database", "xdg-mime")
    before = xdg.all_files()

    out = install_command(xdg, "--install-desktop")
    assert out.returncode == 0, out.stderr
    files = xdg.files
    for path in (files.desktop_file, files.mime_package, files.svg_icon, files.png_icon(48)):
        assert path.is_file(), f"{path} was not installed"
    entry = files.desktop_file.read_text()
    launcher = Path(sys.executable).parent / "crash-inspector"
    assert f"Exec={launcher} %f" in entry.splitlines()  # the venv's own launcher, absolute

    # by name, and by content for a copy whose name says nothing
    assert xdg.run("xdg-mime", "query", "filetype", str(sample_dump())).stdout.strip() == MINIDUMP_MIME_TYPE
    renamed = tmp_path / "crash-report"
    shutil.copy(sample_dump(), renamed)
    assert xdg.run("xdg-mime", "query", "filetype", str(renamed)).stdout.strip() == MINIDUMP_MIME_TYPE
    # by name alone: a truncated .mdmp (Windows Error Reporting's name) has no header to sniff
    truncated = tmp_path / "truncated.mdmp"
    truncated.write_bytes(sample_dump().read_bytes()[:2])
    assert xdg.run("xdg-mime", "query", "filetype", str(truncated)).stdout.strip() == MINIDUMP_MIME_TYPE
    # a packet capture named .dmp keeps its own type: the magic decides, not the shared glob
    capture = tmp_path / "capture.dmp"
    capture.write_bytes(b"\xd4\xc3\xb2\xa1\x02\x00\x04\x00" + bytes(16))
    assert xdg.run("xdg-mime", "query", "filetype", str(capture)).stdout.strip() != MINIDUMP_MIME_TYPE
    # double-click: our desktop file is the default handler
    assert xdg.run("xdg-mime", "query", "default", MINIDUMP_MIME_TYPE).stdout.strip() == DESKTOP_ID

    out = install_command(xdg, "--uninstall-desktop")
    assert out.returncode == 0, out.stderr
    left = xdg.all_files() - before
    # what remains are the databases the tools rebuild, and none of them mentions us any more
    assert not [p for p in left if APP_ID in p.name], left
    for path in left:
        text = path.read_bytes()
        assert APP_ID.encode() not in text and MINIDUMP_MIME_TYPE.encode() not in text, path
    assert not (xdg.config / "mimeapps.list").exists()  # xdg-mime wrote it only for us
    assert xdg.run("xdg-mime", "query", "default", MINIDUMP_MIME_TYPE).stdout.strip() == ""


def test_microdumps_are_found_by_content_whatever_their_name(xdg: Xdg, tmp_path: Path) -> None:
    """A logcat excerpt with a microdump is ours as .txt, .log, .dmp or nameless; other text stays text.

    GLib (gio) takes a single glob match as final without looking at the content, so there a
    .txt or .log file keeps its glob's type; the .dmp glob is shared (sniffed), a bare name too.
    """
    need("update-mime-database", "xdg-mime", "gio", "mimetype")
    from tests.synth.microdump import arm_crash, threadtime_prefix

    install(xdg.files, [str(tmp_path / "crash-inspector")], lambda line: None)
    log = b"".join(b"02-23 15:49:14.700   801   820 I ActivityManager: line %d\n" % i for i in range(20))
    for name in ("logcat.txt", "crash.log", "microdump.dmp", "no-extension"):
        path = tmp_path / name
        path.write_bytes(log + arm_crash().to_bytes(threadtime_prefix(1740)))
        assert xdg.run("xdg-mime", "query", "filetype", str(path)).stdout.strip() == MICRODUMP_MIME_TYPE, name
        gio = xdg.run("gio", "info", "--attributes=standard::content-type", str(path)).stdout
        by_glob = {"logcat.txt": "text/plain", "crash.log": "text/x-log"}.get(name, MICRODUMP_MIME_TYPE)
        assert f"standard::content-type: {by_glob}\n" in gio, name
        assert xdg.run("mimetype", "--brief", str(path)).stdout.strip() == MICRODUMP_MIME_TYPE, name
    plain = tmp_path / "notes.txt"
    plain.write_bytes(log)
    assert xdg.run("xdg-mime", "query", "filetype", str(plain)).stdout.strip() == "text/plain"
    assert xdg.run("xdg-mime", "query", "default", MICRODUMP_MIME_TYPE).stdout.strip() == DESKTOP_ID


def test_desktops_sniff_the_type_like_xdg_mime(xdg: Xdg, tmp_path: Path) -> None:
    """GLib (GNOME, Xfce, …) and File::MimeInfo decide .dmp by content; the magic must win in both."""
    need("update-mime-database", "gio", "mimetype")
    install(xdg.files, [str(tmp_path / "crash-inspector")], lambda line: None)
    renamed = tmp_path / "no-extension"
    shutil.copy(sample_dump(), renamed)
    for path in (sample_dump(), renamed):
        gio = xdg.run("gio", "info", "--attributes=standard::content-type", str(path)).stdout
        assert f"standard::content-type: {MINIDUMP_MIME_TYPE}" in gio
        assert xdg.run("mimetype", "--brief", str(path)).stdout.strip() == MINIDUMP_MIME_TYPE


def test_double_click_runs_our_exec_with_the_file(
    xdg: Xdg, tmp_path: Path, recorder: tuple[Path, Path]
) -> None:
    """`gio open` is what GLib file managers do on a double-click; xdg-open what scripts do."""
    need("update-mime-database", "update-desktop-database", "xdg-mime", "gio")
    launcher, record = recorder
    install(xdg.files, [str(launcher)], lambda line: None)
    dump = tmp_path / "from the crash server.dmp"
    shutil.copy(sample_dump(), dump)

    assert xdg.run("gio", "open", str(dump)).returncode == 0
    assert wait_for(record) == f"{dump}\n"

    if shutil.which("xdg-open"):
        record.unlink()
        opened = subprocess.run(
            ["xdg-open", str(dump)], env={**xdg.env, "DISPLAY": ":0"}, timeout=60, check=False
        )
        assert opened.returncode == 0
        assert wait_for(record) == f"{dump}\n"


def test_exec_with_spaces_is_quoted_so_desktops_split_it_right(
    xdg: Xdg, tmp_path: Path, recorder: tuple[Path, Path]
) -> None:
    need("gio", "desktop-file-validate")
    launcher, record = recorder
    spaced = tmp_path / "My Tools" / "crash-inspector"
    spaced.parent.mkdir()
    shutil.copy(launcher, spaced)
    install(xdg.files, [str(spaced)], lambda line: None)

    validated = xdg.run("desktop-file-validate", str(xdg.files.desktop_file))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert xdg.run("gio", "launch", str(xdg.files.desktop_file), str(sample_dump())).returncode == 0
    assert wait_for(record) == f"{sample_dump()}\n"


def test_missing_tools_are_reported_and_skipped(xdg: Xdg, tmp_path: Path) -> None:
    env = {**xdg.env, "PATH": str(tmp_path / "empty")}  # no freedesktop tool can be found
    out = subprocess.run(
        [sys.executable, "-m", "inspector", "--install-desktop"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    for tool in ("update-mime-database", "update-desktop-database", "xdg-mime"):
        assert f"skipped: {tool} is not installed" in out.stdout
    assert xdg.files.desktop_file.is_file() and xdg.files.mime_package.is_file()


def test_install_twice_then_uninstall_twice(xdg: Xdg) -> None:
    lines: list[str] = []
    install(xdg.files, ["/opt/ci/crash-inspector"], lines.append)
    first = {p: p.read_bytes() for p in xdg.all_files() if APP_ID in p.name}
    install(xdg.files, ["/opt/ci/crash-inspector"], lines.append)
    assert {p: p.read_bytes() for p in xdg.all_files() if APP_ID in p.name} == first
    assert len(first) == 3 + len(PNG_SIZES)

    uninstall(xdg.files, lines.append)
    assert not [p for p in xdg.all_files() if APP_ID in p.name]
    lines.clear()
    uninstall(xdg.files, lines.append)
    assert any(line.startswith("nothing to remove") for line in lines)


def test_an_unwritable_data_folder_is_one_error_line(xdg: Xdg, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = subprocess.run(
        [sys.executable, "-m", "inspector", "--install-desktop"],
        capture_output=True,
        text=True,
        env={**xdg.env, "XDG_DATA_HOME": str(blocker)},
        timeout=60,
        check=False,
    )
    assert out.returncode == 1
    assert out.stderr.startswith("crash-inspector: error: ") and out.stderr.count("\n") == 1
    assert "Traceback" not in out.stderr


def test_extra_arguments_are_a_usage_error(xdg: Xdg) -> None:
    out = install_command(xdg, "--install-desktop", "now")
    assert out.returncode == 2 and "usage:" in out.stderr
    assert not xdg.files.desktop_file.exists()


def test_the_pngs_are_the_icon_at_each_size(xdg: Xdg) -> None:
    from PySide6.QtGui import QImage

    install(xdg.files, ["/opt/ci/crash-inspector"], lambda line: None)
    for size in PNG_SIZES:
        image = QImage(str(xdg.files.png_icon(size)))
        assert (image.width(), image.height()) == (size, size)
        assert image.pixelColor(0, 0).alpha() == 0  # a rounded plate: the corners are transparent
        assert image.pixelColor(size // 2, size // 2).alpha() == 255


# ---- pieces ----


def test_exec_argument_quotes_reserved_characters_and_doubles_percent() -> None:
    assert exec_argument("/usr/bin/crash-inspector") == "/usr/bin/crash-inspector"
    assert exec_argument("/home/a b/ci") == '"/home/a b/ci"'
    assert exec_argument("/opt/100%/ci") == "/opt/100%%/ci"
    # `$` is escaped inside the quotes, and every backslash is doubled again for the string level
    assert exec_argument("/x/$HOME") == '"/x/\\\\$HOME"'


def test_desktop_entry_points_exec_and_tryexec_at_the_launcher() -> None:
    template = (desktop_files_dir() / DESKTOP_ID).read_text()
    entry = desktop_entry(template, ["/usr/bin/python3", "-m", "inspector"])
    lines = entry.splitlines()
    assert "Exec=/usr/bin/python3 -m inspector %f" in lines
    assert "TryExec=/usr/bin/python3" in lines
    assert len(lines) == len(template.splitlines())  # nothing else changed


def test_remove_associations_keeps_other_handlers_and_other_files() -> None:
    text = (
        "# mine\n"
        "[Default Applications]\n"
        f"{MINIDUMP_MIME_TYPE}={DESKTOP_ID}\n"
        "text/plain=gedit.desktop\n"
        "\n"
        "[Added Associations]\n"
        f"{MINIDUMP_MIME_TYPE}=other.desktop;{DESKTOP_ID};\n"
        "[Removed Associations]\n"
        f"image/png={DESKTOP_ID};\n"
    )
    assert remove_associations(text) == (
        "# mine\n"
        "[Default Applications]\n"
        "text/plain=gedit.desktop\n"
        "\n"
        "[Added Associations]\n"
        f"{MINIDUMP_MIME_TYPE}=other.desktop;\n"
        "[Removed Associations]\n"
        f"image/png={DESKTOP_ID};\n"
    )


def test_uninstall_cleans_a_users_mimeapps_list_but_keeps_the_rest(xdg: Xdg) -> None:
    mimeapps = xdg.config / "mimeapps.list"
    mimeapps.write_text(
        f"[Default Applications]\ntext/plain=gedit.desktop\n{MINIDUMP_MIME_TYPE}={DESKTOP_ID}\n"
    )
    uninstall(xdg.files, lambda line: None)
    assert mimeapps.read_text() == "[Default Applications]\ntext/plain=gedit.desktop\n"


def test_the_package_data_is_in_the_checkout() -> None:
    assert desktop_files_dir() == REPO / "packaging" / "linux"
