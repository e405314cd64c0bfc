"""Render the application's SVG icon to the bitmap formats desktops and bundles want: PNG, ICO, ICNS.

Qt's own SVG renderer does the drawing, so the SVG stays the only source and no
image library is needed. Works without a QGuiApplication (raster painting only).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QImage, QImageWriter, QPainter
from PySide6.QtSvg import QSvgRenderer

#: the sizes a Windows .ico carries (Explorer picks from these; 256 is the largest it uses)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
#: ICNS element types holding PNG data (macOS 10.7+), by pixel size; the @2x types repeat sizes
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),
    (b"ic11", 32),
    (b"ic12", 64),
    (b"ic13", 256),
    (b"ic14", 512),
)


class IconRenderError(ValueError):
    """The SVG cannot be read or an image cannot be written."""


def render_image(svg: Path, size: int) -> QImage:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise IconRenderError(f"{svg}: not a readable SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def _encode(image: QImage, fmt: str) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QImageWriter(buffer, fmt.encode())
    if not writer.write(image):
        raise IconRenderError(f"cannot encode {fmt.upper()}: {writer.errorString()}")
    buffer.close()
    return bytes(data.data())


def render_png(svg: Path, size: int) -> bytes:
    """The icon as a `size`×`size` PNG with transparency."""
    return _encode(render_image(svg, size), "png")


def ico_bytes(svg: Path, sizes: Iterable[int] = ICO_SIZES) -> bytes:
    """A Windows icon file holding one PNG-compressed image per size (readable since Windows Vista).

    Qt's ICO writer stores a single image, so the container is written here: a 6-byte header, a
    16-byte directory entry per image (width and height 0 meaning 256), then the images.
    """
    images = [(size, render_png(svg, size)) for size in sorted(set(sizes))]
    if not images or any(not 1 <= size <= 256 for size, _ in images):
        raise IconRenderError("ICO images are 1 to 256 pixels wide")
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    directory = b""
    for size, png in images:
        side = size % 256  # 256 is written as 0
        directory += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        offset += len(png)
    return header + directory + b"".join(png for _, png in images)


def write_ico(svg: Path, target: Path, sizes: Iterable[int] = ICO_SIZES) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(ico_bytes(svg, sizes))
    return target


def icns_bytes(svg: Path) -> bytes:
    """A macOS icon file: `icns` and the total length, then (type, length, PNG) per element.

    Qt's ICNS writer stores one image with a table of contents its own reader rejects, so the
    container is written here; every length is big-endian and counts its own 8-byte header.
    """
    pngs: dict[int, bytes] = {}
    elements = b""
    for kind, size in ICNS_TYPES:
        png = pngs.setdefault(size, render_png(svg, size))
        elements += kind + struct.pack(">I", 8 + len(png)) + png
    return b"icns" + struct.pack(">I", 8 + len(elements)) + elements


def write_icns(svg: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(icns_bytes(svg))
    return target
