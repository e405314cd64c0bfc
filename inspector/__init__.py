"""Crash Inspector: a minidump stackwalker that shows why each frame was found."""

__version__ = "0.1.0"
