"""What a tool returns on failure, and how other exceptions map onto it.

The contract (`kaizen:plugin/tools.error-kind`) has six kinds; the model
reads the kind and the message, so a message should say what went wrong
and what to do next.
"""

from __future__ import annotations

import enum
import traceback


class ErrorKind(str, enum.Enum):
    """Why a call failed, in a form the model can act on.

    The values are the contract's names, so ``ErrorKind("not-found")`` works.
    """

    #: The input was wrong (bad value, missing file named in it, ...).
    INVALID_INPUT = "invalid-input"
    #: Something the input named does not exist.
    NOT_FOUND = "not-found"
    #: The plugin was not allowed to do what the input asked.
    PERMISSION_DENIED = "permission-denied"
    #: The state changed under the tool (e.g. a file edited since read).
    CONFLICT = "conflict"
    #: The work took too long.
    TIMEOUT = "timeout"
    #: Anything else.
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value


class ToolError(Exception):
    """A failed call: ``raise ToolError(ErrorKind.NOT_FOUND, "no such user")``.

    ``kind`` is an :class:`ErrorKind` or its contract name (``"not-found"``).
    The message is shown to the model: say what went wrong and what to do
    next. The class methods (``ToolError.not_found(msg)``, ...) are
    shorthands.
    """

    def __init__(self, kind: ErrorKind | str, message: str) -> None:
        try:
            kind = ErrorKind(kind)
        except ValueError:
            known = ", ".join(k.value for k in ErrorKind)
            raise ValueError(
                f"ToolError kind {kind!r} is not one of the contract's kinds ({known}); "
                f"use kaizen_sdk.ErrorKind"
            ) from None
        super().__init__(str(message))
        self.kind: ErrorKind = kind
        self.message: str = str(message)

    def __repr__(self) -> str:
        return f"ToolError({self.kind.value!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolError):
            return NotImplemented
        return (self.kind, self.message) == (other.kind, other.message)

    def __hash__(self) -> int:
        return hash((self.kind, self.message))

    def context(self, prefix: object) -> "ToolError":
        """Prefixes the message with ``prefix`` (e.g. the path an I/O error
        is about): ``"<prefix>: <message>"``. Returns ``self``."""
        self.message = f"{prefix}: {self.message}"
        self.args = (self.message,)
        return self

    @classmethod
    def invalid_input(cls, message: str) -> "ToolError":
        """The input was wrong."""
        return cls(ErrorKind.INVALID_INPUT, message)

    @classmethod
    def not_found(cls, message: str) -> "ToolError":
        """Something the input named does not exist."""
        return cls(ErrorKind.NOT_FOUND, message)

    @classmethod
    def permission_denied(cls, message: str) -> "ToolError":
        """The plugin was not allowed to do what the input asked."""
        return cls(ErrorKind.PERMISSION_DENIED, message)

    @classmethod
    def conflict(cls, message: str) -> "ToolError":
        """The state changed under the tool."""
        return cls(ErrorKind.CONFLICT, message)

    @classmethod
    def timeout(cls, message: str) -> "ToolError":
        """The work took too long."""
        return cls(ErrorKind.TIMEOUT, message)

    @classmethod
    def failed(cls, message: str) -> "ToolError":
        """Any other failure."""
        return cls(ErrorKind.FAILED, message)


class HostUnavailable(RuntimeError):
    """A host interface the code called is not there: the component was
    built without it (its manifest does not request the capability), or
    the code runs natively (unit tests), where no host exists. The message
    names the fix."""


# OSError subclasses, most specific first, and the kind each maps to; the
# same choice the Rust kit makes for std::io::ErrorKind.
_OS_ERROR_KINDS: tuple[tuple[type[OSError], ErrorKind], ...] = (
    (FileNotFoundError, ErrorKind.NOT_FOUND),
    (ProcessLookupError, ErrorKind.NOT_FOUND),
    (PermissionError, ErrorKind.PERMISSION_DENIED),
    (FileExistsError, ErrorKind.CONFLICT),
    (BlockingIOError, ErrorKind.CONFLICT),
    (TimeoutError, ErrorKind.TIMEOUT),
    (IsADirectoryError, ErrorKind.INVALID_INPUT),
    (NotADirectoryError, ErrorKind.INVALID_INPUT),
)


def to_tool_error(exc: BaseException, tool: str) -> ToolError:
    """The :class:`ToolError` the model sees for ``exc``, raised by tool
    ``tool``.

    - a ToolError stays as it is;
    - an OSError maps by its type (``FileNotFoundError`` -> not-found, ...),
      its message naming the file;
    - an HTTP error from :mod:`kaizen_sdk.http` maps by its kind;
    - a :class:`HostUnavailable` is ``failed`` with its message, which names
      the fix;
    - anything else is a bug in the plugin: ``failed``, naming the exception
      and where it was raised, so that the model does not retry the same
      input hoping for another result.
    """
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, HostUnavailable):
        return ToolError(ErrorKind.FAILED, str(exc))
    # Found by name: http imports this module.
    if type(exc).__name__ == "HttpError" and hasattr(exc, "tool_error_kind"):
        return ToolError(exc.tool_error_kind(), str(exc))
    if isinstance(exc, OSError):
        for cls, kind in _OS_ERROR_KINDS:
            if isinstance(exc, cls):
                return ToolError(kind, _os_message(exc))
        return ToolError(ErrorKind.FAILED, _os_message(exc))
    if isinstance(exc, SystemExit):
        return ToolError(
            ErrorKind.FAILED,
            f"internal error in tool `{tool}`: it called sys.exit({exc.code!r}); "
            f"a tool must return or raise kaizen_sdk.ToolError instead",
        )
    where = _where(exc)
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, ImportError):
        detail += (
            " (in a component, only modules imported at build time exist: import it at the top of "
            "app.py, not inside a function)"
        )
    return ToolError(
        ErrorKind.FAILED,
        f"internal error in tool `{tool}`: {detail}{where}. This is a bug in the plugin, "
        f"not a problem with the input; retrying the same call will fail the same way",
    )


def _os_message(exc: OSError) -> str:
    """``strerror: filename`` when the OSError has them (Python's own text
    adds an ``[Errno N]`` prefix the model has no use for)."""
    if exc.strerror and exc.filename is not None:
        if exc.filename2 is not None:
            return f"{exc.strerror}: {exc.filename} -> {exc.filename2}"
        return f"{exc.strerror}: {exc.filename}"
    return str(exc) or type(exc).__name__


def _where(exc: BaseException) -> str:
    """`` (at app.py:12 in count)``: the innermost frame of the traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    name = last.filename.replace("\\", "/").rsplit("/", 1)[-1]
    return f" (at {name}:{last.lineno} in {last.name})"
