"""Outbound HTTP through ``wasi:http``, blocking and bounded.

::

    from kaizen_sdk import http

    response = http.get("https://api.example.com/v1/items", headers={"accept": "application/json"})
    items = response.json()

Every request passes the host's allow-list: the manifest requests hosts
(``http = ["api.example.com"]`` under ``[capabilities]``), the operator
grants them, and a request outside the effective grant fails with
:attr:`HttpErrorKind.REFUSED` before any connection is made. The build
imports ``wasi:http`` only when the manifest requests ``http``; without it
a request raises :class:`~kaizen_sdk.HostUnavailable` naming the fix.

Bodies are read up to ``max_body`` bytes (default :data:`DEFAULT_MAX_BODY`);
a longer one is cut there and :attr:`Response.truncated` says so. Timeouts
are in seconds: ``connect_timeout`` for the connection, ``timeout`` for
the first byte of the response and between two reads; the host's limit
on the whole call applies as well.

An :class:`HttpError` a tool does not catch reaches the model as a
ToolError of the matching kind (refused -> permission-denied, timeout ->
timeout, ...).

In unit tests (no component), replace :func:`send` with a fake:
``unittest.mock.patch("kaizen_sdk.http.send", fake)``.
"""

from __future__ import annotations

import enum
import json as _json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

from . import _bindings
from .errors import ErrorKind, HostUnavailable

#: The variable in which the host lists the plugin's effective HTTP grant:
#: patterns (``host``, ``*.domain``, ``*``, each with an optional
#: ``scheme://`` and ``:port``) separated by spaces; unset without a grant.
ALLOW_ENV = "KAIZEN_HTTP_ALLOW"

#: Bytes read from a response body unless ``max_body`` says otherwise.
DEFAULT_MAX_BODY = 10 << 20

#: The size of one read from the body stream, and of one write.
_CHUNK = 64 << 10
_WRITE_CHUNK = 4096

Headers = Union[Mapping[str, str], Sequence[tuple[str, str]], None]


class HttpErrorKind(str, enum.Enum):
    """What kind of failure an :class:`HttpError` is."""

    #: The URL or a header could not be used.
    INVALID_REQUEST = "invalid-request"
    #: The host's allow-list refused the request (not in the plugin's grant).
    REFUSED = "refused"
    #: The name resolved to a loopback or private address, which only a
    #: grant naming the host exactly opens.
    ADDRESS_PROHIBITED = "address-prohibited"
    #: The name could not be resolved.
    DNS_FAILED = "dns-failed"
    #: No connection could be made, or it broke.
    CONNECTION_FAILED = "connection-failed"
    #: The server took too long.
    TIMEOUT = "timeout"
    #: TLS failed (certificate, protocol).
    TLS = "tls"
    #: A response came but cannot be used as asked: an error status
    #: (:meth:`Response.raise_for_status`), a body that is not JSON or was
    #: cut (:meth:`Response.json`).
    BAD_RESPONSE = "bad-response"
    #: Anything else the HTTP layer reported.
    OTHER = "other"


_TOOL_KINDS = {
    HttpErrorKind.INVALID_REQUEST: ErrorKind.INVALID_INPUT,
    HttpErrorKind.REFUSED: ErrorKind.PERMISSION_DENIED,
    HttpErrorKind.ADDRESS_PROHIBITED: ErrorKind.PERMISSION_DENIED,
    HttpErrorKind.DNS_FAILED: ErrorKind.NOT_FOUND,
    HttpErrorKind.TIMEOUT: ErrorKind.TIMEOUT,
}


class HttpError(Exception):
    """A request that got no (usable) response."""

    def __init__(
        self, kind: HttpErrorKind, message: str, url: str = "", status: Optional[int] = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.url = url
        #: The response's status, for BAD_RESPONSE.
        self.status = status

    def __str__(self) -> str:
        return f"HTTP request to {self.url} failed: {self.message}" if self.url else self.message

    def tool_error_kind(self) -> ErrorKind:
        """The ToolError kind this failure maps to (an error status by its
        meaning: 404 -> not-found, 401/403 -> permission-denied, ...)."""
        if self.kind is HttpErrorKind.BAD_RESPONSE and self.status is not None:
            return _STATUS_KINDS.get(self.status, ErrorKind.FAILED)
        return _TOOL_KINDS.get(self.kind, ErrorKind.FAILED)


_STATUS_KINDS = {
    401: ErrorKind.PERMISSION_DENIED,
    403: ErrorKind.PERMISSION_DENIED,
    404: ErrorKind.NOT_FOUND,
    408: ErrorKind.TIMEOUT,
    409: ErrorKind.CONFLICT,
    410: ErrorKind.NOT_FOUND,
    412: ErrorKind.CONFLICT,
    504: ErrorKind.TIMEOUT,
}


@dataclass
class Request:
    """One outgoing request; :func:`request` builds and sends one."""

    method: str
    url: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: Optional[bytes] = None
    max_body: int = DEFAULT_MAX_BODY
    #: Seconds to wait for the connection.
    connect_timeout: float = 10.0
    #: Seconds to wait for the first byte of the response, and between reads.
    timeout: float = 30.0


@dataclass
class Response:
    """A response, its body read up to the request's ``max_body``."""

    status: int
    #: Names lower-cased, in the order received.
    headers: list[tuple[str, str]]
    body: bytes
    #: True when the body went on past the limit and was cut.
    truncated: bool = False
    #: The URL it answers.
    url: str = ""

    def header(self, name: str) -> Optional[str]:
        """The first value of header ``name`` (case-insensitive)."""
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        """The body as text: the charset of ``content-type``, else UTF-8;
        undecodable bytes become U+FFFD."""
        charset = "utf-8"
        for part in (self.header("content-type") or "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body (decoded as :attr:`text`) parsed as JSON; raises :class:`HttpError`
        (``BAD_RESPONSE``) when it is not JSON or was cut."""
        if self.truncated:
            raise HttpError(
                HttpErrorKind.BAD_RESPONSE,
                f"the response (status {self.status}) was cut at the size limit ({len(self.body)} bytes) "
                f"before it could be parsed as JSON; pass a larger max_body",
                self.url,
            )
        try:
            return _json.loads(self.text)
        except ValueError as err:
            kind = self.header("content-type") or "no content-type"
            raise HttpError(
                HttpErrorKind.BAD_RESPONSE,
                f"the response (status {self.status}, {kind}) is not JSON: {err}",
                self.url,
            ) from None

    def raise_for_status(self) -> "Response":
        """Raises :class:`HttpError` (``BAD_RESPONSE``, with the status and
        the start of the body) unless the status is 2xx; returns the
        response, so it chains."""
        if self.ok:
            return self
        start = self.text[:300].strip()
        raise HttpError(
            HttpErrorKind.BAD_RESPONSE,
            f"the server answered {self.status}" + (f": {start}" if start else ""),
            self.url,
            self.status,
        )


def allowed() -> list[str]:
    """The plugin's effective HTTP grant (from :data:`ALLOW_ENV`), so a
    tool can explain a refusal before trying; empty without a grant."""
    return os.environ.get(ALLOW_ENV, "").split()


def request(
    method: str,
    url: str,
    *,
    headers: Headers = None,
    body: Union[bytes, str, None] = None,
    json: Any = None,
    max_body: int = DEFAULT_MAX_BODY,
    timeout: float = 30.0,
    connect_timeout: float = 10.0,
) -> Response:
    """Sends a request and reads the response; blocks until it is in.

    ``body`` (bytes, or str sent as UTF-8) or ``json`` (a value sent as JSON
    with ``content-type: application/json``) is the request body. Raises
    :class:`HttpError` when no response came; a response with an error
    status is returned, not raised (check :attr:`Response.ok`).
    """
    pairs = _header_pairs(headers)
    if json is not None:
        if body is not None:
            raise ValueError("pass body or json, not both")
        body = _json.dumps(json).encode()
        if not any(k.lower() == "content-type" for k, _ in pairs):
            pairs.append(("content-type", "application/json"))
    if isinstance(body, str):
        body = body.encode()
    if body is not None and not any(k.lower() == "content-length" for k, _ in pairs):
        # Without it the body goes out chunked, which many servers refuse.
        pairs.append(("content-length", str(len(body))))
    return send(
        Request(
            method=method.upper(),
            url=url,
            headers=pairs,
            body=body,
            max_body=max_body,
            connect_timeout=connect_timeout,
            timeout=timeout,
        )
    )


def get(url: str, **kwargs: Any) -> Response:
    """A GET request; see :func:`request`."""
    return request("GET", url, **kwargs)


def post(url: str, body: Union[bytes, str, None] = None, **kwargs: Any) -> Response:
    """A POST request; see :func:`request`."""
    return request("POST", url, body=body, **kwargs)


def _header_pairs(headers: Headers) -> list[tuple[str, str]]:
    if headers is None:
        return []
    items = headers.items() if isinstance(headers, Mapping) else headers
    return [(str(k), str(v)) for k, v in items]


def split_url(url: str) -> tuple[str, str, str]:
    """``(scheme, authority, path-with-query)`` of an absolute http(s) URL;
    the fragment is dropped."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise HttpError(HttpErrorKind.INVALID_REQUEST, f"`{url}` is not an absolute http:// or https:// URL")
    rest = rest.split("#", 1)[0]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, path = rest[:cut], rest[cut:]
    if not authority:
        raise HttpError(HttpErrorKind.INVALID_REQUEST, f"`{url}` is not an absolute http:// or https:// URL")
    return scheme, authority, path or "/"


# The wasi:http error codes (the generated classes' names, after
# `ErrorCode_`), by the kind they map to.
_CODE_KINDS: dict[str, HttpErrorKind] = {
    "HttpRequestDenied": HttpErrorKind.REFUSED,
    "DestinationIpProhibited": HttpErrorKind.ADDRESS_PROHIBITED,
    "DnsTimeout": HttpErrorKind.DNS_FAILED,
    "DnsError": HttpErrorKind.DNS_FAILED,
    "DestinationNotFound": HttpErrorKind.DNS_FAILED,
    "DestinationUnavailable": HttpErrorKind.CONNECTION_FAILED,
    "DestinationIpUnroutable": HttpErrorKind.CONNECTION_FAILED,
    "ConnectionRefused": HttpErrorKind.CONNECTION_FAILED,
    "ConnectionTerminated": HttpErrorKind.CONNECTION_FAILED,
    "ConnectionLimitReached": HttpErrorKind.CONNECTION_FAILED,
    "ConnectionTimeout": HttpErrorKind.TIMEOUT,
    "ConnectionReadTimeout": HttpErrorKind.TIMEOUT,
    "ConnectionWriteTimeout": HttpErrorKind.TIMEOUT,
    "HttpResponseTimeout": HttpErrorKind.TIMEOUT,
    "TlsProtocolError": HttpErrorKind.TLS,
    "TlsCertificateError": HttpErrorKind.TLS,
    "TlsAlertReceived": HttpErrorKind.TLS,
    "HttpRequestUriInvalid": HttpErrorKind.INVALID_REQUEST,
    "HttpRequestMethodInvalid": HttpErrorKind.INVALID_REQUEST,
}


def error_of(code: Any, url: str = "") -> HttpError:
    """The :class:`HttpError` for a ``wasi:http`` ``error-code`` value."""
    name = type(code).__name__.removeprefix("ErrorCode_")
    kind = _CODE_KINDS.get(name, HttpErrorKind.OTHER)
    payload = getattr(code, "value", None)
    detail = name if payload is None else f"{name}: {payload}"
    if kind is HttpErrorKind.REFUSED:
        message = "the host refused the request: this host is not in the plugin's http grant"
        granted = allowed()
        message += f" (granted: {' '.join(granted)})" if granted else " (it has none)"
    elif kind is HttpErrorKind.ADDRESS_PROHIBITED:
        message = (
            "the host refused the request: the name resolves to a loopback or private address, which the "
            "plugin may reach only when its grant names the host exactly"
        )
    elif kind is HttpErrorKind.DNS_FAILED:
        message = f"the host name could not be resolved ({detail})"
    elif kind is HttpErrorKind.CONNECTION_FAILED:
        message = f"the connection failed ({detail})"
    elif kind is HttpErrorKind.TIMEOUT:
        message = f"the server did not answer in time ({detail})"
    elif kind is HttpErrorKind.TLS:
        message = f"TLS failed ({detail})"
    elif kind is HttpErrorKind.INVALID_REQUEST:
        message = f"the request is invalid ({detail})"
    else:
        message = f"the HTTP request failed ({detail})"
    return HttpError(kind, message, url)


def _wasi() -> tuple[Any, Any, Any, Any]:
    """The generated wasi:http modules, or HostUnavailable naming the fix."""
    handler = _bindings.imported("outgoing_handler")
    types = _bindings.wasi_http_types()
    streams = _bindings.imported("streams")
    if handler is None or types is None or streams is None:
        if _bindings.in_component():
            raise HostUnavailable(
                "this plugin was built without wasi:http, so it cannot make HTTP requests: request hosts "
                'under [capabilities] in plugin.toml (e.g. http = ["api.example.com"]) and rebuild; the '
                "build then imports wasi:http"
            )
        raise HostUnavailable(
            "kaizen_sdk.http sends requests only inside the component (wasi:http); in unit tests, replace "
            'kaizen_sdk.http.send with a fake (unittest.mock.patch("kaizen_sdk.http.send", ...))'
        )
    from componentize_py_types import Err

    return handler, types, streams, Err


def send(req: Request) -> Response:
    """Sends ``req`` through ``wasi:http`` and reads the response."""
    handler, types, streams, Err = _wasi()
    url = req.url
    scheme, authority, path = split_url(url)

    def invalid(what: str) -> HttpError:
        return HttpError(HttpErrorKind.INVALID_REQUEST, f"invalid {what}", url)

    fields = types.Fields()
    for name, value in req.headers:
        try:
            fields.append(name.lower(), value.encode())
        except Err:
            raise invalid(f"header `{name}`") from None
    # Resources are dropped explicitly (`with`, `__exit__`), children before
    # parents: the host traps when a parent goes first. One passed by value
    # (`fields` here, `outgoing` to handle()) is the callee's, not ours.
    outgoing = types.OutgoingRequest(fields)
    try:
        for setter, value, what in (
            (outgoing.set_method, _method(types, req.method), f"method `{req.method}`"),
            (
                outgoing.set_scheme,
                types.Scheme_Https() if scheme == "https" else types.Scheme_Http(),
                "scheme",
            ),
            (outgoing.set_authority, authority, f"host `{authority}`"),
            (outgoing.set_path_with_query, path, f"path `{path}`"),
        ):
            try:
                setter(value)
            except Err:
                raise invalid(what) from None
        body = outgoing.body()
    except BaseException:
        outgoing.__exit__(None, None, None)
        raise
    options = types.RequestOptions()
    for setter, seconds in (
        (options.set_connect_timeout, req.connect_timeout),
        (options.set_first_byte_timeout, req.timeout),
        (options.set_between_bytes_timeout, req.timeout),
    ):
        try:
            setter(max(0, int(seconds * 1_000_000_000)))
        except Err:
            pass  # a host without this timeout keeps its own
    try:
        pending = handler.handle(outgoing, options)
    except Err as err:
        body.__exit__(None, None, None)
        raise error_of(err.value, url) from None
    with pending:
        _write_body(types, body, req.body or b"", url, Err)
        with pending.subscribe() as ready:
            ready.block()
        # option<result<result<incoming-response, error-code>>>, the results
        # as Ok/Err values.
        result = pending.get()
    if result is None or isinstance(result, Err):
        raise HttpError(HttpErrorKind.OTHER, "the host gave no response", url)
    inner = result.value
    if isinstance(inner, Err):
        raise error_of(inner.value, url)
    incoming = inner.value
    with incoming:
        status = incoming.status()
        with incoming.headers() as received:
            headers = [(k.lower(), v.decode("utf-8", errors="replace")) for k, v in received.entries()]
        try:
            incoming_body = incoming.consume()
        except Err:
            raise HttpError(HttpErrorKind.OTHER, "the response body was taken", url) from None
    data, truncated = _read_body(types, streams, incoming_body, req.max_body, url, Err)
    return Response(status=status, headers=headers, body=data, truncated=truncated, url=url)


def _method(types: Any, name: str) -> Any:
    known = {
        "GET": "Method_Get",
        "HEAD": "Method_Head",
        "POST": "Method_Post",
        "PUT": "Method_Put",
        "DELETE": "Method_Delete",
        "CONNECT": "Method_Connect",
        "OPTIONS": "Method_Options",
        "TRACE": "Method_Trace",
        "PATCH": "Method_Patch",
    }
    if name in known:
        return getattr(types, known[name])()
    return types.Method_Other(name)


def _write_body(types: Any, body: Any, data: bytes, url: str, Err: type) -> None:
    try:
        with body.write() as stream:
            for start in range(0, len(data), _WRITE_CHUNK):
                stream.blocking_write_and_flush(data[start : start + _WRITE_CHUNK])
    except Err as err:
        body.__exit__(None, None, None)
        raise HttpError(
            HttpErrorKind.CONNECTION_FAILED, f"sending the request body failed ({err.value})", url
        ) from None
    try:
        types.OutgoingBody.finish(body, None)
    except Err as err:
        raise error_of(err.value, url) from None


def _read_body(types: Any, streams: Any, body: Any, limit: int, url: str, Err: type) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    truncated = False
    try:
        with body.stream() as stream:
            while True:
                # One byte past the limit tells a cut body from one that fits.
                want = min(limit + 1 - size, _CHUNK)
                try:
                    chunk = stream.blocking_read(want)
                except Err as err:
                    if isinstance(err.value, streams.StreamError_Closed):
                        break
                    code = types.http_error_code(err.value.value)
                    if code is not None:
                        raise error_of(code, url) from None
                    raise HttpError(
                        HttpErrorKind.CONNECTION_FAILED,
                        f"reading the response failed: {err.value.value.to_debug_string()}",
                        url,
                    ) from None
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    truncated = True
                    break
    except Err:
        body.__exit__(None, None, None)
        raise HttpError(HttpErrorKind.OTHER, "the response had no body stream", url) from None
    data = b"".join(chunks)
    if truncated:
        # Finishing a body that was cut would wait for the rest of it.
        body.__exit__(None, None, None)
        return data[:limit], True
    types.IncomingBody.finish(body).__exit__(None, None, None)
    return data, False
