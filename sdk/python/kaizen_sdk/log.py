"""Writes to the host's log, attributed to the plugin. Always granted.

``kaizen_sdk.log.info("fetched 3 pages")``; the host shows the lines with
``KAIZEN_LOG=debug``. Outside a component (unit tests) the lines go to the
standard ``logging`` logger ``kaizen_sdk.plugin`` instead, so tests can
capture them with ``assertLogs``.

To route the standard ``logging`` module to the host, add
:class:`Handler`: ``logging.getLogger().addHandler(kaizen_sdk.log.Handler())``.
"""

from __future__ import annotations

import logging

from . import _bindings

_LEVELS = ("trace", "debug", "info", "warn", "error")
_PY_LEVELS = {
    "trace": 5,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}
_fallback = logging.getLogger("kaizen_sdk.plugin")


def log(level: str, message: object) -> None:
    """Logs ``message`` at ``level``: trace, debug, info, warn or error."""
    level = "warn" if level == "warning" else level
    if level not in _LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(_LEVELS)}")
    host = _bindings.imported("log")
    if host is None:
        _fallback.log(_PY_LEVELS[level], "%s", message)
        return
    types = _bindings.kaizen_types()
    host.log(types.LogLevel[level.upper()], str(message))


def trace(message: object) -> None:
    """Logs at trace level."""
    log("trace", message)


def debug(message: object) -> None:
    """Logs at debug level."""
    log("debug", message)


def info(message: object) -> None:
    """Logs at info level."""
    log("info", message)


def warn(message: object) -> None:
    """Logs at warn level."""
    log("warn", message)


warning = warn


def error(message: object) -> None:
    """Logs at error level."""
    log("error", message)


class Handler(logging.Handler):
    """A ``logging`` handler that writes records to the host's log (or,
    natively, to the ``kaizen_sdk.plugin`` logger, unless that is where the
    record came from)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("kaizen_sdk.plugin"):
            return
        try:
            message = self.format(record)
            if record.levelno >= logging.ERROR:
                level = "error"
            elif record.levelno >= logging.WARNING:
                level = "warn"
            elif record.levelno >= logging.INFO:
                level = "info"
            elif record.levelno >= logging.DEBUG:
                level = "debug"
            else:
                level = "trace"
            log(level, message)
        except Exception:  # noqa: BLE001 -- logging must not fail the tool
            self.handleError(record)
