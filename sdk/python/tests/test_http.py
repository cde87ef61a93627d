"""The HTTP client's plain parts: URLs, error codes, responses, and how a
request is put together (with send replaced by a fake)."""

import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kaizen_sdk import ErrorKind, HostUnavailable, http  # noqa: E402
from kaizen_sdk.http import HttpError, HttpErrorKind, Response  # noqa: E402


class Urls(unittest.TestCase):
    def test_urls_split_into_scheme_authority_and_path(self):
        self.assertEqual(
            http.split_url("https://Example.com:8443/a/b?q=1#frag"), ("https", "Example.com:8443", "/a/b?q=1")
        )
        self.assertEqual(http.split_url("http://x.org?q"), ("http", "x.org", "?q"))
        self.assertEqual(http.split_url("HTTP://x.org"), ("http", "x.org", "/"))

    def test_other_urls_are_invalid_requests(self):
        for bad in ("x.org/a", "ftp://x.org/", "http:///path"):
            with self.assertRaises(HttpError) as caught:
                http.split_url(bad)
            self.assertEqual(caught.exception.kind, HttpErrorKind.INVALID_REQUEST)
            self.assertIn("not an absolute http:// or https:// URL", str(caught.exception))


def code(name, value=None):
    """A stand-in for a generated `ErrorCode_<name>` value."""
    cls = type(f"ErrorCode_{name}", (), {})
    obj = cls()
    if value is not None:
        obj.value = value
    return obj


class ErrorCodes(unittest.TestCase):
    def test_codes_map_to_kinds_and_tool_error_kinds(self):
        cases = [
            ("HttpRequestDenied", HttpErrorKind.REFUSED, ErrorKind.PERMISSION_DENIED),
            ("DestinationIpProhibited", HttpErrorKind.ADDRESS_PROHIBITED, ErrorKind.PERMISSION_DENIED),
            ("DnsError", HttpErrorKind.DNS_FAILED, ErrorKind.NOT_FOUND),
            ("ConnectionRefused", HttpErrorKind.CONNECTION_FAILED, ErrorKind.FAILED),
            ("ConnectionReadTimeout", HttpErrorKind.TIMEOUT, ErrorKind.TIMEOUT),
            ("TlsCertificateError", HttpErrorKind.TLS, ErrorKind.FAILED),
            ("HttpRequestUriInvalid", HttpErrorKind.INVALID_REQUEST, ErrorKind.INVALID_INPUT),
            ("LoopDetected", HttpErrorKind.OTHER, ErrorKind.FAILED),
        ]
        for name, kind, tool_kind in cases:
            err = http.error_of(code(name), "http://x/")
            self.assertEqual((err.kind, err.tool_error_kind()), (kind, tool_kind), name)
            self.assertTrue(str(err).startswith("HTTP request to http://x/ failed: "), str(err))

    def test_a_refusal_names_the_grant(self):
        with mock.patch.dict("os.environ", {http.ALLOW_ENV: "api.example.com *.github.com"}):
            self.assertEqual(http.allowed(), ["api.example.com", "*.github.com"])
            err = http.error_of(code("HttpRequestDenied"))
        self.assertIn("not in the plugin's http grant (granted: api.example.com *.github.com)", err.message)

    def test_payloads_are_shown(self):
        self.assertIn("InternalError: boom", http.error_of(code("InternalError", "boom")).message)


class Responses(unittest.TestCase):
    def test_headers_text_and_json(self):
        r = Response(
            200, [("content-type", "application/json; charset=latin-1")], '{"a": "\xe9"}'.encode("latin-1")
        )
        self.assertTrue(r.ok)
        self.assertEqual(r.header("Content-Type"), "application/json; charset=latin-1")
        self.assertIsNone(r.header("location"))
        self.assertEqual(r.text, '{"a": "\xe9"}')
        self.assertEqual(r.json(), {"a": "\xe9"})

    def test_bad_bodies_and_statuses_are_bad_responses(self):
        with self.assertRaisesRegex(HttpError, "is not JSON") as caught:
            Response(200, [], b"<html>", url="http://x/").json()
        self.assertEqual(caught.exception.kind, HttpErrorKind.BAD_RESPONSE)
        with self.assertRaisesRegex(HttpError, "cut at the size limit"):
            Response(200, [], b"[1", truncated=True).json()
        with self.assertRaises(HttpError) as caught:
            Response(404, [], b"no such page", url="http://x/a").raise_for_status()
        self.assertEqual(
            str(caught.exception), "HTTP request to http://x/a failed: the server answered 404: no such page"
        )
        self.assertEqual(caught.exception.tool_error_kind(), ErrorKind.NOT_FOUND)
        ok = Response(204, [], b"")
        self.assertIs(ok.raise_for_status(), ok)


class Requests(unittest.TestCase):
    def test_requests_carry_headers_bodies_and_limits(self):
        sent = []

        def fake(req):
            sent.append(req)
            return Response(201, [], b"{}")

        with mock.patch("kaizen_sdk.http.send", fake):
            http.post("http://x/items", "hi", headers={"X-A": "1"}, timeout=5)
            http.request("put", "http://x/j", json={"a": 1}, max_body=10)
            http.get("http://x/")
        post, put, get = sent
        self.assertEqual((post.method, post.body, post.timeout), ("POST", b"hi", 5))
        self.assertEqual(post.headers, [("X-A", "1"), ("content-length", "2")])
        self.assertEqual((put.method, put.body, put.max_body), ("PUT", b'{"a": 1}', 10))
        self.assertIn(("content-type", "application/json"), put.headers)
        self.assertEqual((get.method, get.body, get.headers), ("GET", None, []))

    def test_body_and_json_together_are_refused(self):
        with self.assertRaisesRegex(ValueError, "body or json"):
            http.post("http://x/", "a", json=1)

    def test_natively_sending_says_how_to_test(self):
        with self.assertRaisesRegex(HostUnavailable, r'mock.patch\("kaizen_sdk.http.send"'):
            http.get("http://127.0.0.1:9/")


if __name__ == "__main__":
    unittest.main()
