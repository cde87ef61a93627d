"""The build's world: chosen from plugin.toml and the plugin's code, laid
out with the contract and the kit's wasi WIT."""

import sys
import tempfile
import unittest
from pathlib import Path

KIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(KIT))

import kaizen_build  # noqa: E402
from shipped_contract import contract_wit  # noqa: E402
from kaizen_build import BuildError, world_wit  # noqa: E402


def manifest(**capabilities):
    return {
        "plugin": {"name": "x", "version": "0.1.0", "contract": "0.1.4", "kinds": ["tool"]},
        "capabilities": capabilities,
    }


def body(text):
    """The world's include/import lines."""
    return [line.strip() for line in text.splitlines() if line.startswith("    ")]


class Worlds(unittest.TestCase):
    def test_a_plain_tool_imports_only_log(self):
        self.assertEqual(body(world_wit(manifest(), "0.1.4")), ["include kaizen:plugin/tool@0.1.4;"])

    def test_each_capability_adds_its_import(self):
        m = manifest(
            interaction=True,
            process={"programs": ["git"]},
            agent=True,
            llm=True,
            parallel=True,
            http=["api.example.com"],
            filesystem=[{"path": "$WORKSPACE", "access": "read-only"}],
            env=["LANG"],
        )
        self.assertEqual(
            body(world_wit(m, "0.1.4", session=True, wasi_http="0.2.12")),
            [
                "include kaizen:plugin/tool@0.1.4;",
                "import kaizen:plugin/session@0.1.4;",
                "import kaizen:plugin/interaction@0.1.4;",
                "import kaizen:plugin/process@0.1.4;",
                "import kaizen:plugin/agent@0.1.4;",
                "import kaizen:plugin/llm@0.1.4;",
                "import kaizen:plugin/parallel@0.1.4;",
                "import wasi:http/outgoing-handler@0.2.12;",
            ],
        )

    def test_false_flags_and_empty_http_add_nothing(self):
        m = manifest(interaction=False, agent=False, http=[])
        self.assertEqual(body(world_wit(m, "0.1.4")), ["include kaizen:plugin/tool@0.1.4;"])

    def test_the_contract_must_match_the_wit(self):
        with self.assertRaisesRegex(BuildError, 'set contract = "0.1.4" in plugin.toml'):
            world_wit({**manifest(), "plugin": {"contract": "0.1.0", "kinds": ["tool"]}}, "0.1.4")

    def test_the_contract_may_be_left_out(self):
        m = manifest()
        del m["plugin"]["contract"]
        self.assertEqual(body(world_wit(m, "0.1.4")), ["include kaizen:plugin/tool@0.1.4;"])

    def test_any_of_the_three_kinds(self):
        for kinds, includes in [
            (["hook"], ["hook"]),
            (["tool"], ["tool"]),
            (["hook", "tool"], ["tool", "hook"]),
            (["planner"], ["planner"]),
            (["planner", "tool"], ["tool", "planner"]),
        ]:
            m = manifest(agent=True)
            m["plugin"]["kinds"] = kinds
            self.assertEqual(
                body(world_wit(m, "0.1.4")),
                [f"include kaizen:plugin/{kind}@0.1.4;" for kind in includes]
                + ["import kaizen:plugin/agent@0.1.4;"],
                kinds,
            )

    def test_odd_kinds_are_refused(self):
        for kinds in ([], ["hook", "hook"], "hook", ["widget"], ["planner", "mcp"]):
            m = manifest()
            m["plugin"]["kinds"] = kinds
            with self.assertRaisesRegex(BuildError, "builds tool, hook and planner plugins", msg=kinds):
                world_wit(m, "0.1.4")


class SessionUse(unittest.TestCase):
    def uses(self, source):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "app.py").write_text(source)
            return kaizen_build.uses_session(Path(tmp))

    def test_the_session_import_follows_the_code(self):
        self.assertTrue(self.uses("from kaizen_sdk import session\n"))
        self.assertTrue(self.uses("from kaizen_sdk import (\n    tool,\n    session,\n)\n"))
        self.assertTrue(self.uses("import kaizen_sdk.session\n"))
        self.assertTrue(self.uses("from kaizen_sdk.session import fingerprint\n"))
        self.assertTrue(self.uses("import kaizen_sdk\nkaizen_sdk.session.todos()\n"))
        self.assertFalse(self.uses("from kaizen_sdk import tool\nsession = 1\n"))

    def test_the_kit_itself_does_not_count(self):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "kaizen_sdk").mkdir()
            Path(tmp, "kaizen_sdk", "x.py").write_text("from kaizen_sdk import session\n")
            Path(tmp, "app.py").write_text("from kaizen_sdk import tool\n")
            self.assertFalse(kaizen_build.uses_session(Path(tmp)))


class Layout(unittest.TestCase):
    def test_prepare_lays_out_the_world_and_its_deps(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "src").mkdir()
            (tmp / "src" / "app.py").write_text("from kaizen_sdk import tool, session\n")
            (tmp / "plugin.toml").write_text(
                '[plugin]\nname = "x"\nversion = "0.1.0"\ncontract = "0.1.4"\nkinds = ["tool"]\n'
                '[capabilities]\nhttp = ["api.example.com"]\n'
            )
            kit_wit = tmp / "kit-wit"
            (kit_wit / "deps").mkdir(parents=True)
            (kit_wit / "deps" / "http.wit").write_text("package wasi:http@0.2.12;\n")
            (kit_wit / "deps" / "io.wit").write_text("package wasi:io@0.2.12;\n")
            world = kaizen_build.prepare(
                tmp / "plugin.toml", contract_wit(), kit_wit, tmp / "src", tmp / "wit"
            )
            self.assertEqual(world, "python-plugin")
            text = (tmp / "wit" / "world.wit").read_text()
            self.assertIn("import kaizen:plugin/session@0.1.4;", text)
            self.assertIn("import wasi:http/outgoing-handler@0.2.12;", text)
            deps = sorted(p.name for p in (tmp / "wit" / "deps").iterdir())
            self.assertEqual(deps, ["http.wit", "io.wit", "kaizen-plugin"])
            self.assertTrue((tmp / "wit" / "deps" / "kaizen-plugin" / "worlds.wit").is_file())

    def test_without_http_no_wasi_deps(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "src").mkdir()
            (tmp / "plugin.toml").write_text(
                '[plugin]\nname = "x"\nversion = "0.1.0"\ncontract = "0.1.4"\nkinds = ["tool"]\n'
            )
            kaizen_build.prepare(
                tmp / "plugin.toml", contract_wit(), KIT / "wit", tmp / "src", tmp / "wit"
            )
            self.assertEqual([p.name for p in (tmp / "wit" / "deps").iterdir()], ["kaizen-plugin"])

    def test_the_contract_version_is_read_from_the_wit(self):
        self.assertEqual(kaizen_build.contract_version(contract_wit()), contract_wit().name[1:])
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(BuildError, "no `package kaizen:plugin@"):
                kaizen_build.contract_version(Path(tmp))


if __name__ == "__main__":
    unittest.main()
