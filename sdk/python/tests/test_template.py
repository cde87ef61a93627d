"""The project template: filled in, its own unit tests pass natively, and
it stays small."""

import os
import subprocess
import sys
import tempfile
import tomllib
import unittest
from pathlib import Path

KIT = Path(__file__).resolve().parents[1]
TEMPLATE = KIT / "template"


def fill(text):
    return (
        text.replace("{{name}}", "my-tool")
        .replace("{{snake_name}}", "my_tool")
        .replace("{{camel_name}}", "MyTool")
    )


class Template(unittest.TestCase):
    def test_the_files_and_the_manifest(self):
        names = sorted(p.name for p in TEMPLATE.iterdir())
        self.assertEqual(names, ["README.md", "app.py", "plugin.toml", "test_app.py"])
        manifest = tomllib.loads(fill((TEMPLATE / "plugin.toml").read_text()))
        self.assertEqual(manifest["plugin"]["name"], "my-tool")
        # `kaizen plugins new` fills in the newest contract it provides.
        self.assertEqual(manifest["plugin"]["contract"], "{{contract}}")
        self.assertEqual(manifest["plugin"]["kinds"], ["tool"])
        self.assertEqual(manifest["plugin"]["component"], "my-tool.wasm")

    def test_the_example_is_short(self):
        self.assertLessEqual(len((TEMPLATE / "app.py").read_text().splitlines()), 30)

    def test_its_unit_tests_pass_natively(self):
        with tempfile.TemporaryDirectory() as tmp:
            for path in TEMPLATE.iterdir():
                Path(tmp, path.name).write_text(fill(path.read_text()))
            env = {**os.environ, "PYTHONPATH": str(KIT), "PYTHONDONTWRITEBYTECODE": "1"}
            done = subprocess.run(
                [sys.executable, "-m", "unittest", "-v"],
                cwd=tmp,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("Ran 3 tests", done.stderr)


if __name__ == "__main__":
    unittest.main()
