"""Desktop integration for the current user: launcher entry, minidump MIME type, icons, default handler.

`crash-inspector --install-desktop` writes, under the user's XDG data directory
(`$XDG_DATA_HOME`, else `~/.local/share`):

    applications/<APP_ID>.desktop                 Exec= the absolute path of this launcher
    mime/packages/<APP_ID>.xml                    application/x-minidump, text/x-breakpad-microdump
    icons/hicolor/scalable/apps/<APP_ID>.svg      the icon
    icons/hicolor/<N>x<N>/apps/<APP_ID>.png       the icon rendered with Qt, for desktops without SVG

then refreshes the MIME and desktop databases and makes the entry the default
handler of minidumps and microdumps (`update-mime-database`, `update-desktop-database`,
`xdg-mime default`), each only when installed: a missing or failing tool is
reported and skipped, never fatal. `--uninstall-desktop` removes those files
(every name is ours: they carry the app id), takes the entry out of
`mimeapps.list` and refreshes the databases again.

Nothing here imports Qt except the optional PNG rendering.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from inspector.commands import EXIT_OK, EXIT_UNUSABLE, EXIT_USAGE
from inspector.resources import APP_ID, MICRODUMP_MIME_TYPE, MINIDUMP_MIME_TYPE, app_icon, desktop_files_dir

#: PNG sizes for icon themes; the SVG covers desktops that scale icons themselves.
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256)
DESKTOP_ID = f"{APP_ID}.desktop"
TOOL_TIMEOUT_S = 60
#: mimeapps.list sections where an association names a desktop file as a handler.
_ASSOCIATION_SECTIONS = ("[Default Applications]", "[Added Associations]")
#: characters that make an Exec argument need quotes (Desktop Entry spec, "The Exec key")
_EXEC_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")

Report = Callable[[str], None]


def _xdg_dir(variable: str, fallback: str) -> Path:
    """`$variable`, or `~/fallback` when it is unset or relative (the XDG rule)."""
    value = os.environ.get(variable, "")
    return Path(value) if value and Path(value).is_absolute() else Path.home() / fallback


def data_home() -> Path:
    return _xdg_dir("XDG_DATA_HOME", ".local/share")


def config_home() -> Path:
    return _xdg_dir("XDG_CONFIG_HOME", ".config")


def launcher_command() -> list[str]:
    """The absolute command that starts this installation of the app (the desktop file's Exec)."""
    if getattr(sys, "frozen", False):  # a PyInstaller bundle: its own executable
        return [str(Path(sys.executable).resolve())]
    # A venv or a user install puts the gui-script next to the interpreter; the interpreter path
    # is kept unresolved so that a venv's bin/ (not the base Python's) is searched.
    interpreter = Path(sys.executable).absolute()
    for name in ("crash-inspector", "crash-inspector.exe"):
        script = interpreter.parent / name
        if script.is_file():
            return [str(script)]
    on_path = shutil.which("crash-inspector")
    if on_path:
        return [str(Path(on_path).absolute())]
    return [str(interpreter), "-m", "inspector"]


def exec_argument(arg: str) -> str:
    """One argument as the Exec key wants it: quoted if needed, `%` doubled, then string-escaped."""
    if any(c in _EXEC_RESERVED for c in arg):
        arg = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    arg = arg.replace("%", "%%")
    # The value is also a desktop-entry string, whose own escape is the backslash.
    return arg.replace("\\", "\\\\")


def desktop_entry(template: str, command: Sequence[str]) -> str:
    """The packaged desktop file with Exec= and TryExec= pointing at `command` (absolute)."""
    lines = []
    for line in template.splitlines():
        if line.startswith("Exec="):
            lines.append("Exec=" + " ".join(exec_argument(a) for a in command) + " %f")
        elif line.startswith("TryExec="):
            lines.append("TryExec=" + command[0].replace("\\", "\\\\"))
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class DesktopFiles:
    """Where each installed file goes under one XDG data directory."""

    data_home: Path

    @property
    def desktop_file(self) -> Path:
        return self.data_home / "applications" / DESKTOP_ID

    @property
    def mime_package(self) -> Path:
        return self.data_home / "mime" / "packages" / f"{APP_ID}.xml"

    @property
    def svg_icon(self) -> Path:
        return self.data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"

    def png_icon(self, size: int) -> Path:
        return self.data_home / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"

    def all_files(self) -> list[Path]:
        """Every file an install may write (uninstall removes those present)."""
        return [self.desktop_file, self.mime_package, self.svg_icon, *(self.png_icon(s) for s in PNG_SIZES)]


def _tool_env() -> dict[str, str]:
    """The environment for the freedesktop tools (shell and Perl scripts, GLib and KDE programs).

    In the bundle, QT_PLUGIN_PATH points at the bundle's Qt plugins (set at start-up, see
    packaging/pyinstaller/hooks); a Qt-based tool of the desktop must not load those.
    """
    env = dict(os.environ)
    if getattr(sys, "frozen", False):
        env.pop("QT_PLUGIN_PATH", None)
    return env


def _run_tool(args: list[str], purpose: str, report: Report, *, package: str) -> bool:
    """Run a freedesktop tool if it is installed; report what happened; never raise."""
    tool = shutil.which(args[0])
    if tool is None:
        report(f"skipped: {args[0]} is not installed ({package}), so {purpose} was not done")
        return False
    try:
        done = subprocess.run(
            [tool, *args[1:]],
            capture_output=True,
            text=True,
            timeout=TOOL_TIMEOUT_S,
            env=_tool_env(),
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        report(f"warning: {args[0]} could not run ({exc}), so {purpose} was not done")
        return False
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        reason = detail[-1] if detail else f"exit status {done.returncode}"
        report(f"warning: {args[0]} failed ({reason}), so {purpose} was not done")
        return False
    report(f"{purpose}: done ({args[0]})")
    return True


def _write(path: Path, data: bytes, report: Report) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)  # a half-written desktop file would be a broken menu entry
    report(f"installed {path}")


def _render_pngs(files: DesktopFiles, report: Report) -> None:
    try:
        from inspector.gui.icon_render import render_png
    except ImportError as exc:  # Qt missing or broken: the SVG icon still works on most desktops
        report(f"skipped: PNG icons need Qt's SVG support ({exc}); the SVG icon is installed")
        return
    for size in PNG_SIZES:
        _write(files.png_icon(size), render_png(app_icon(), size), report)


def _refresh(files: DesktopFiles, report: Report) -> None:
    _run_tool(
        ["update-mime-database", str(files.data_home / "mime")],
        "refreshing the MIME database",
        report,
        package="shared-mime-info",
    )
    _run_tool(
        ["update-desktop-database", str(files.data_home / "applications")],
        "refreshing the desktop database",
        report,
        package="desktop-file-utils",
    )
    # A stale icon cache hides new icons; only refresh one that exists (a user theme rarely has one).
    hicolor = files.data_home / "icons" / "hicolor"
    if (hicolor / "icon-theme.cache").exists():
        _run_tool(
            ["gtk-update-icon-cache", "--force", "--ignore-theme-index", str(hicolor)],
            "refreshing the icon cache",
            report,
            package="gtk-update-icon-cache",
        )


def install(files: DesktopFiles, command: Sequence[str], report: Report) -> None:
    """Install the desktop integration for `command`; raises OSError when a file cannot be written."""
    source = desktop_files_dir()
    template = (source / DESKTOP_ID).read_text(encoding="utf-8")
    _write(files.desktop_file, desktop_entry(template, command).encode("utf-8"), report)
    _write(files.mime_package, (source / f"{APP_ID}-mime.xml").read_bytes(), report)
    _write(files.svg_icon, app_icon().read_bytes(), report)
    _render_pngs(files, report)
    _refresh(files, report)
    _run_tool(
        ["xdg-mime", "default", DESKTOP_ID, MINIDUMP_MIME_TYPE, MICRODUMP_MIME_TYPE],
        f"making Crash Inspector the default application for {MINIDUMP_MIME_TYPE} and {MICRODUMP_MIME_TYPE}",
        report,
        package="xdg-utils",
    )


def remove_associations(text: str, desktop_id: str = DESKTOP_ID) -> str:
    """mimeapps.list text without `desktop_id` as a handler (keys left with no handler are dropped)."""
    out: list[str] = []
    section = ""
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
        elif section in _ASSOCIATION_SECTIONS and "=" in stripped and not stripped.startswith("#"):
            key, _, value = stripped.partition("=")
            handlers = [h for h in value.split(";") if h]
            if desktop_id in handlers:
                kept = [h for h in handlers if h != desktop_id]
                if kept:
                    out.append(f"{key}={';'.join(kept)};\n")
                continue
        out.append(line)
    return "".join(out)


def _mimeapps_lists(files: DesktopFiles) -> list[Path]:
    # xdg-mime writes the first; older tools and KDE 4 wrote the second.
    return [config_home() / "mimeapps.list", files.data_home / "applications" / "mimeapps.list"]


def uninstall(files: DesktopFiles, report: Report) -> None:
    """Remove what `install` wrote and our associations; raises OSError when a file cannot be removed."""
    removed = 0
    for path in files.all_files():
        if path.is_file() or path.is_symlink():
            path.unlink()
            report(f"removed {path}")
            removed += 1
    for mimeapps in _mimeapps_lists(files):
        if not mimeapps.is_file():
            continue
        text = mimeapps.read_text(encoding="utf-8", errors="surrogateescape")
        cleaned = remove_associations(text)
        if cleaned == text:
            continue
        if all(line.strip().startswith("[") for line in cleaned.splitlines() if line.strip()):
            mimeapps.unlink()  # only section headers left: the file was xdg-mime's, written for us
            report(f"removed {mimeapps} (it held only the {DESKTOP_ID} associations)")
        else:
            mimeapps.write_text(cleaned, encoding="utf-8", errors="surrogateescape")
            report(f"removed the {DESKTOP_ID} associations from {mimeapps}")
    if removed == 0:
        report(f"nothing to remove: Crash Inspector is not installed under {files.data_home}")
    _refresh(files, report)


def run(argv: Sequence[str]) -> int:
    """`--install-desktop` or `--uninstall-desktop` (the only argument); returns the exit code."""
    if list(argv) not in (["--install-desktop"], ["--uninstall-desktop"]):
        print(
            "usage: crash-inspector --install-desktop | --uninstall-desktop (no other arguments)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if sys.platform in ("win32", "darwin"):
        print(
            "crash-inspector: error: --install-desktop is for Linux and other freedesktop.org desktops; "
            "on this system use the app bundle",
            file=sys.stderr,
        )
        return EXIT_UNUSABLE
    files = DesktopFiles(data_home())

    def report(line: str) -> None:
        print(line, flush=True)

    try:
        if argv[0] == "--install-desktop":
            install(files, launcher_command(), report)
        else:
            uninstall(files, report)
    except OSError as exc:
        print(f"crash-inspector: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    return EXIT_OK
