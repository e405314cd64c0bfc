"""The engine: pure Python, never imports Qt, pyqtgraph or inspector.gui."""
