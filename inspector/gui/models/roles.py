"""Custom item data roles shared by every model and view."""

from __future__ import annotations

from PySide6.QtCore import Qt

_USER = Qt.ItemDataRole.UserRole.value

#: The backing object of a row (a `ThreadView`, a `Module`, a core `Problem`, …).
ItemRole = _USER
#: A natural, comparable value for sorting through a `QSortFilterProxyModel`.
SortRole = _USER + 1
#: The address (int) a cell stands for, when it stands for one.
AddressRole = _USER + 2
#: The row's index in the document (thread index, module index) whatever the proxy order.
IndexRole = _USER + 3
