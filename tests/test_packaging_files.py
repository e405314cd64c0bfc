"""The desktop file, MIME type, AppStream metainfo and icon: valid, and naming one app id everywhere."""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from inspector import __version__, app
from inspector.resources import (
    APP_ID,
    MICRODUMP_MIME_TYPE,
    MINIDUMP_MIME_TYPE,
    app_icon,
    desktop_files_dir,
    sample_dump,
)

LINUX = desktop_files_dir()
DESKTOP = LINUX / f"{APP_ID}.desktop"
MIME = LINUX / f"{APP_ID}-mime.xml"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"
MIME_NS = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}


def desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(DESKTOP, encoding="utf-8")
    return parser["Desktop Entry"]


def run_validator(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which(args[0]) is None:
        pytest.skip(f"{args[0]} not installed (Debian: desktop-file-utils, appstream)")
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)


def test_desktop_file_is_valid() -> None:
    out = run_validator("desktop-file-validate", str(DESKTOP))
    assert out.returncode == 0 and out.stdout == "", out.stdout + out.stderr


def test_metainfo_is_valid() -> None:
    out = run_validator("appstreamcli", "validate", "--no-net", "--explain", str(METAINFO))
    assert out.returncode == 0, out.stdout + out.stderr


def test_one_app_id_everywhere() -> None:
    entry = desktop_entry()
    assert entry["Icon"] == APP_ID
    assert entry["Exec"] == "crash-inspector %f" and entry["TryExec"] == "crash-inspector"
    assert {MINIDUMP_MIME_TYPE, MICRODUMP_MIME_TYPE} <= set(entry["MimeType"].split(";"))
    assert "Development" in entry["Categories"].split(";") and "Debugger" in entry["Categories"].split(";")
    # X11 window managers match this against the WM_CLASS Qt sets from the application name
    assert entry["StartupWMClass"] == app.APPLICATION

    component = ET.parse(METAINFO).getroot()
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == DESKTOP.name
    mediatypes = [e.text for e in component.findall("provides/mediatype")]
    assert mediatypes == [MINIDUMP_MIME_TYPE, MICRODUMP_MIME_TYPE]
    assert component.find("releases/release").get("version") == __version__  # type: ignore[union-attr]

    mime = ET.parse(MIME).getroot()
    assert [t.get("type") for t in mime.findall("m:mime-type", MIME_NS)] == [
        MINIDUMP_MIME_TYPE,
        MICRODUMP_MIME_TYPE,
    ]
    assert app_icon().name == f"{APP_ID}.svg" and app_icon().is_file()


def _matches(rule: ET.Element, data: bytes) -> bool:
    """One shared-mime-info <match> (the kinds our file uses), with its nested matches."""
    first, _, last = rule.get("offset", "0").partition(":")
    offset, value = int(first), rule.get("value", "")
    kind = rule.get("type")
    if kind == "string" and last:  # a range of offsets: the string may start anywhere in it
        found = value.encode() in data[offset : int(last) + len(value)]
    elif kind == "string":
        found = data[offset : offset + len(value)] == value.encode()
    elif kind in ("little16", "big16"):
        field = data[offset : offset + 2]
        found = len(field) == 2 and struct.unpack("<H" if kind == "little16" else ">H", field)[0] == int(
            value, 0
        )
    else:
        raise AssertionError(f"unexpected match type {kind}")
    children = rule.findall("m:match", MIME_NS)
    return found and (not children or any(_matches(child, data) for child in children))


def _sniffed(data: bytes, mime_type: str = MINIDUMP_MIME_TYPE) -> bool:
    magic = ET.parse(MIME).getroot().find(f"m:mime-type[@type='{mime_type}']/m:magic", MIME_NS)
    assert magic is not None
    return any(_matches(rule, data) for rule in magic.findall("m:match", MIME_NS))


def test_the_magic_recognises_minidumps_of_either_byte_order_and_nothing_else() -> None:
    little = sample_dump().read_bytes()[:32]
    signature, version = struct.unpack_from("<II", little)
    big = struct.pack(">II", signature, version) + little[8:]  # what a big-endian writer puts first
    assert big[:4] == b"PMDM"
    assert _sniffed(little) and _sniffed(big)
    assert not _sniffed(b"MDMP" + b"\x00" * 28)  # the signature alone, with another format version
    assert not _sniffed(b"\xd4\xc3\xb2\xa1" + bytes(28))  # a pcap, which shares the .dmp glob
    assert not _sniffed(b"PAGEDU64" + bytes(24))  # a Windows kernel dump, also called .dmp


def test_the_magic_recognises_microdumps_in_logs_and_nothing_else() -> None:
    from tests.synth.microdump import arm_crash, threadtime_prefix

    log = b"".join(b"02-23 15:49:14.700   801   820 I ActivityManager: line %d\n" % i for i in range(60))
    for data in (
        arm_crash().to_bytes(),
        log + arm_crash().to_bytes(threadtime_prefix(1740)),
        arm_crash().to_bytes(""),
    ):
        assert _sniffed(data[:8192], MICRODUMP_MIME_TYPE)
        assert not _sniffed(data)  # not a minidump
    assert not _sniffed(sample_dump().read_bytes()[:8192], MICRODUMP_MIME_TYPE)
    assert not _sniffed(log * 3 + arm_crash().to_bytes(), MICRODUMP_MIME_TYPE)  # past the first 8 KB
    assert not _sniffed(b"-----BEGIN PGP SIGNED MESSAGE-----\n", MICRODUMP_MIME_TYPE)


def test_the_icon_renders_at_desktop_sizes() -> None:
    from inspector.gui.icon_render import render_image

    for size in (16, 32, 256):
        image = render_image(app_icon(), size)
        assert image.pixelColor(0, 0).alpha() == 0
        # the top (crashing) frame is red at every size: a quarter down, a third across
        pixel = image.pixelColor(size * 3 // 8, size * 31 // 128)
        assert pixel.red() > 200 and pixel.green() < 140, (size, pixel.name())


def test_the_window_icon_loads_through_qts_svg_icon_engine(qapp: object) -> None:
    from PySide6.QtGui import QIcon

    icon = QIcon(str(app_icon()))  # what app.py gives the application
    assert not icon.isNull() and not icon.pixmap(64, 64).isNull()


def test_windows_and_macos_icon_files(tmp_path: Path) -> None:
    from PySide6.QtGui import QImageReader

    from inspector.gui.icon_render import ICNS_TYPES, ICO_SIZES, write_icns, write_ico

    for path, expected in (
        (write_ico(app_icon(), tmp_path / "app.ico"), list(ICO_SIZES)),
        (write_icns(app_icon(), tmp_path / "app.icns"), [size for _, size in ICNS_TYPES]),
    ):
        reader = QImageReader(str(path))
        sizes = []
        for index in range(reader.imageCount()):
            reader.jumpToImage(index)
            sizes.append(reader.read().width())
        assert sizes == expected, path
