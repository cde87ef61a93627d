"""Session notes (BLAKE3 fingerprints), logging and the host interfaces
outside a component."""

import logging
import os
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kaizen_sdk import HostUnavailable, host, log, session  # noqa: E402
from kaizen_sdk._blake3 import Hasher, blake3_hex  # noqa: E402

# From BLAKE3's test_vectors/test_vectors.json: input i % 251, by length.
VECTORS = {
    0: "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
    1: "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213",
    64: "4eed7141ea4a5cd4b788606bd23f46e212af9cacebacdc7d1f4c6dc7f2511b98",
    65: "de1e5fa0be70df6d2be8fffd0e99ceaa8eb6e8c93a63f2d8d1c30ecb6b263dee",
    1023: "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11",
    1024: "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7",
    1025: "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444",
    2048: "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a",
    3073: "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3",
    8193: "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b",
    31744: "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47",
}


def data(n):
    return bytes(i % 251 for i in range(n))


class Blake3(unittest.TestCase):
    def test_the_official_vectors(self):
        for n, expected in VECTORS.items():
            self.assertEqual(blake3_hex(data(n)), expected, n)

    def test_incremental_updates_match(self):
        for n in (1025, 8193):
            hasher = Hasher()
            for start in range(0, n, 333):
                hasher.update(data(n)[start : start + 333])
            self.assertEqual(hasher.hexdigest(), VECTORS[n])


class Session(unittest.TestCase):
    def test_fingerprints_hash_content_and_read_mtime(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "a.bin")
            Path(path).write_bytes(data(3073))
            record = session.fingerprint(path)
            self.assertEqual(record.hash, VECTORS[3073])
            self.assertEqual(record.mtime_ms, os.stat(path).st_mtime_ns // 1_000_000)
            self.assertTrue(record.same_content(session.FileRecord.of_bytes(data(3073), 5)))
            self.assertFalse(record.same_content(session.FileRecord.of_bytes(b"other")))

    def test_host_calls_natively_say_how_to_test(self):
        for call in (lambda: session.todos(), lambda: session.file_note("/a"), lambda: session.set_todos([])):
            with self.assertRaisesRegex(HostUnavailable, "exists only inside the component; in unit tests"):
                call()

    def test_host_calls_inside_a_component_without_session_name_the_fix(self):
        with mock.patch("kaizen_sdk._bindings.in_component", return_value=True):
            with self.assertRaisesRegex(HostUnavailable, "built without kaizen:plugin/session"):
                session.todos()


class Logging(unittest.TestCase):
    def test_natively_lines_go_to_the_logging_module(self):
        with self.assertLogs("kaizen_sdk.plugin", "DEBUG") as logs:
            log.info("one")
            log.warn("two")
            log.error("three")
            log.debug("four")
        self.assertEqual(
            logs.output,
            [
                "INFO:kaizen_sdk.plugin:one",
                "WARNING:kaizen_sdk.plugin:two",
                "ERROR:kaizen_sdk.plugin:three",
                "DEBUG:kaizen_sdk.plugin:four",
            ],
        )

    def test_the_handler_routes_standard_logging(self):
        logger = logging.getLogger("kit-test")
        logger.addHandler(log.Handler())
        self.addCleanup(logger.handlers.clear)
        with self.assertLogs("kaizen_sdk.plugin", "INFO") as logs:
            logger.warning("careful")
        self.assertIn("WARNING:kaizen_sdk.plugin:careful", logs.output)

    def test_unknown_levels_are_refused(self):
        with self.assertRaisesRegex(ValueError, "not one of trace, debug"):
            log.log("loud", "x")


class HostInterfaces(unittest.TestCase):
    def test_natively_a_module_is_missing_and_patchable(self):
        with self.assertRaisesRegex(HostUnavailable, r"exists only inside the component.*create=True"):
            _ = host.process
        fake = mock.Mock()
        with mock.patch("kaizen_sdk.host.process", fake, create=True):
            host.process.run("x")
        fake.run.assert_called_once_with("x")

    def test_without_the_capability_the_error_names_the_manifest_line(self):
        with mock.patch("kaizen_sdk._bindings.in_component", return_value=True):
            with self.assertRaisesRegex(
                HostUnavailable, r"built without kaizen:plugin/agent: .*\(agent = true\)"
            ):
                _ = host.agent

    def test_unknown_names_are_attribute_errors(self):
        with self.assertRaisesRegex(AttributeError, "has no `shell`"):
            _ = host.shell


if __name__ == "__main__":
    unittest.main()
