"""Light and dark palettes that follow the system, the monospace font, and the colours panes use for meaning.

Qt 6.5+ reports the system's colour scheme (`QStyleHints.colorScheme`).
Where the platform supplies a matching palette we keep it; where it does not
(X11 without a desktop theme, offscreen), we set Fusion's palette for that
scheme ourselves. `Theme` holds the semantic colours (crash, missing,
loaded, stack pointer, frame bands…) tuned for each scheme; models read
them from the `Theme` they are given, never from globals.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from inspector.gui.lookups import PointerKind, PointerTarget


@dataclass(frozen=True)
class Theme:
    dark: bool
    mono: QFont
    mono_bold: QFont
    bold: QFont
    crash: QColor
    warning: QColor
    ok: QColor
    muted: QColor
    code_pointer: QColor
    stack_pointer_value: QColor
    sp_row: QColor
    register_row: QColor
    band_even: QColor
    band_odd: QColor
    band_selected: QColor
    link: QColor
    inline: QColor
    focus_row: QColor
    changed: QColor
    in_force: QColor
    saved_row: QColor

    def pointer_color(self, target: PointerTarget | None) -> QColor | None:
        """The colour of a value that points somewhere: code in a module, or a thread's stack."""
        if target is None:
            return None
        return self.code_pointer if target.kind is PointerKind.MODULE else self.stack_pointer_value

    @classmethod
    def for_scheme(cls, dark: bool, base_font: QFont | None = None) -> Theme:
        mono = monospace_font(base_font)
        mono_bold = QFont(mono)
        mono_bold.setBold(True)
        bold = QFont(base_font) if base_font is not None else QFont()
        bold.setBold(True)
        if dark:
            return cls(
                dark=True,
                mono=mono,
                mono_bold=mono_bold,
                bold=bold,
                crash=QColor("#ff6b6b"),
                warning=QColor("#f0b050"),
                ok=QColor("#6ccf7f"),
                muted=QColor("#8c8c8c"),
                code_pointer=QColor("#7fb4ff"),
                stack_pointer_value=QColor("#74d3c4"),
                sp_row=QColor("#3d3a1c"),
                register_row=QColor("#2a3344"),
                band_even=QColor("#262626"),
                band_odd=QColor("#2e2e33"),
                band_selected=QColor("#1f3a5a"),
                link=QColor("#7fb4ff"),
                inline=QColor("#b48cf0"),
                focus_row=QColor("#6b4f12"),
                changed=QColor("#f0b050"),
                in_force=QColor("#24452c"),
                saved_row=QColor("#2f2a3d"),
            )
        return cls(
            dark=False,
            mono=mono,
            mono_bold=mono_bold,
            bold=bold,
            crash=QColor("#c0262d"),
            warning=QColor("#a85d00"),
            ok=QColor("#1e7b34"),
            muted=QColor("#808080"),
            code_pointer=QColor("#1d4fb8"),
            stack_pointer_value=QColor("#00786c"),
            sp_row=QColor("#fff3b0"),
            register_row=QColor("#e3ecfa"),
            band_even=QColor("#ffffff"),
            band_odd=QColor("#f3f4f8"),
            band_selected=QColor("#d7e6fb"),
            link=QColor("#1d4fb8"),
            inline=QColor("#7a46b8"),
            focus_row=QColor("#ffd166"),
            changed=QColor("#b35900"),
            in_force=QColor("#d9f2dc"),
            saved_row=QColor("#efe7fb"),
        )


def monospace_font(base: QFont | None = None) -> QFont:
    """The system's fixed-width font at the size of the UI font."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    if base is not None and base.pointSizeF() > 0:
        font.setPointSizeF(base.pointSizeF())
    return font


def _palette_is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def system_prefers_dark(app: QGuiApplication) -> bool:
    """The colour scheme the system asks for; when it does not say, what the current palette looks like."""
    scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    return _palette_is_dark(app.palette())


def wants_dark(app: QGuiApplication, color_scheme: str = "system") -> bool:
    """Whether to draw dark: as forced (`light` / `dark`), or as the system prefers (`system`)."""
    if color_scheme == "dark":
        return True
    if color_scheme == "light":
        return False
    return system_prefers_dark(app)


def dark_palette() -> QPalette:
    p = QPalette()
    window, base, alt, text = (
        QColor(45, 45, 48),
        QColor(30, 30, 32),
        QColor(38, 38, 42),
        QColor(225, 225, 225),
    )
    highlight = QColor(42, 100, 170)
    disabled = QColor(128, 128, 128)
    roles = QPalette.ColorRole
    for role, color in (
        (roles.Window, window),
        (roles.WindowText, text),
        (roles.Base, base),
        (roles.AlternateBase, alt),
        (roles.ToolTipBase, QColor(55, 55, 60)),
        (roles.ToolTipText, text),
        (roles.PlaceholderText, disabled),
        (roles.Text, text),
        (roles.Button, window),
        (roles.ButtonText, text),
        (roles.BrightText, QColor(255, 90, 90)),
        (roles.Light, QColor(70, 70, 74)),
        (roles.Midlight, QColor(58, 58, 62)),
        (roles.Mid, QColor(40, 40, 43)),
        (roles.Dark, QColor(22, 22, 24)),
        (roles.Shadow, QColor(0, 0, 0)),
        (roles.Highlight, highlight),
        (roles.HighlightedText, QColor(255, 255, 255)),
        (roles.Link, QColor(127, 180, 255)),
        (roles.LinkVisited, QColor(180, 150, 255)),
    ):
        p.setColor(role, color)
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return p


def apply_color_scheme(app: QApplication, dark: bool) -> None:
    """Make the application palette match `dark`, keeping the platform's own palette when it already does."""
    current_dark = _palette_is_dark(app.palette())
    if current_dark == dark:
        return
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
