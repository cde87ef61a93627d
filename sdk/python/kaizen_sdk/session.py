"""The session's shared notes: what its tools read or wrote, and its todo
list. The host keeps them in the session's state (so they survive
checkpoints and reach every plugin of the session); the interface is
always granted, and the build imports it when the plugin's code mentions
``kaizen_sdk.session``.

Every plugin that notes files should fingerprint them with
:func:`fingerprint`, so that a file noted by one plugin (the built-in
``Read``) compares equal in another::

    from kaizen_sdk import session

    seen = session.fingerprint(path)
    session.note_file(path, seen)
    # ... later, maybe in another plugin:
    note = session.file_note(path)
    unchanged = note is not None and note.same_content(session.fingerprint(path))

:class:`FileRecord` and :func:`fingerprint` are plain Python and work
natively; the other functions call the host and raise
:class:`~kaizen_sdk.HostUnavailable` outside a component.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional

from . import _bindings
from ._blake3 import Hasher, blake3_hex
from .errors import HostUnavailable

_READ = 64 << 10


@dataclass(frozen=True)
class FileRecord:
    """What a tool saw of a file when it read or wrote it."""

    #: BLAKE3 of the content, in lowercase hex.
    hash: str
    #: Modification time in milliseconds since the Unix epoch (0 if unknown).
    mtime_ms: int

    @classmethod
    def of_bytes(cls, content: bytes, mtime_ms: int = 0) -> "FileRecord":
        """The record of ``content`` with modification time ``mtime_ms``."""
        return cls(blake3_hex(content), mtime_ms)

    def same_content(self, other: "FileRecord") -> bool:
        """Whether both saw the same content; the modification time alone
        does not count (a touched but unchanged file still holds what the
        tool saw)."""
        return self.hash == other.hash


def fingerprint(path: str) -> FileRecord:
    """Hashes the file at ``path`` (streamed) and reads its modification
    time; raises OSError (which a tool may let through: it becomes a
    not-found or permission-denied ToolError)."""
    hasher = Hasher()
    with open(path, "rb") as f:
        stat = os.fstat(f.fileno())
        while chunk := f.read(_READ):
            hasher.update(chunk)
    return FileRecord(hasher.hexdigest(), mtime_ms(stat))


def mtime_ms(stat: os.stat_result) -> int:
    """The modification time in ``stat``, in milliseconds (0 before the
    epoch)."""
    return max(0, stat.st_mtime_ns // 1_000_000)


def _host() -> ModuleType:
    module = _bindings.imported("session")
    if module is not None:
        return module
    if _bindings.in_component():
        raise HostUnavailable(
            "this plugin was built without kaizen:plugin/session; the build imports it when the code "
            "mentions `kaizen_sdk.session` (e.g. `from kaizen_sdk import session`), so import it that way "
            "and rebuild"
        )
    raise HostUnavailable(
        "kaizen_sdk.session keeps notes in the host, which exists only inside the component; in unit tests, "
        'replace the function called (unittest.mock.patch("kaizen_sdk.session.note_file", ...))'
    )


def note_file(path: str, record: FileRecord) -> None:
    """Records what this tool saw of the file at ``path`` (absolute),
    replacing any earlier note."""
    host = _host()
    host.note_file(str(path), host.FileRecord(hash=record.hash, mtime_ms=record.mtime_ms))


def file_note(path: str) -> Optional[FileRecord]:
    """The session's last note for the file at ``path`` (absolute), if any
    of its tools read or wrote it."""
    found = _host().file_note(str(path))
    return None if found is None else FileRecord(found.hash, found.mtime_ms)


def todos() -> list[Any]:
    """The session's todo list, one JSON value per item (empty when there
    is none)."""
    try:
        items = json.loads(_host().todos())
    except ValueError:
        return []
    return items if isinstance(items, list) else []


def set_todos(items: list[Any]) -> None:
    """Replaces the session's todo list."""
    _host().set_todos(json.dumps(list(items)))


class NotKept(Exception):
    """:func:`will_change` could not keep the file's content for rewind; the
    message says why. The change itself may still go ahead."""


def will_change(path: str) -> None:
    """Tells the host that this tool is about to change or create the file
    at ``path`` (absolute), so that it keeps the current content for
    ``kaizen rewind``. Call it right before writing. Raises
    :class:`NotKept` when the content was not kept (e.g. the file is outside
    the plugin's writable directories)."""
    host = _host()
    from componentize_py_types import Err

    try:
        host.will_change(str(path))
    except Err as err:
        raise NotKept(str(err.value)) from None
