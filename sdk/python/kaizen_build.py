"""Build helpers for ``kaizen plugins build``: the WIT world a Python tool,
hook or planner plugin is built against, chosen from its ``plugin.toml``, and the directory
of WIT that componentize-py reads.

Why a world of its own: componentize-py keeps every import of the world it
is given, and the host refuses to load a component that imports an
interface its grant does not include. So the world imports exactly what the
manifest requests (and, for session, what the code uses):

========================================  ==========================================
``kinds`` has ``"tool"``                  ``kaizen:plugin/log`` and the ``tools``
                                          export (the contract's ``tool`` world)
``kinds`` has ``"hook"``                  ``kaizen:plugin/log`` and the ``hooks``
                                          export (the contract's ``hook`` world)
``kinds`` has ``"planner"``               ``kaizen:plugin/log`` and the ``planning``
                                          export (the contract's ``planner`` world)
the code mentions ``kaizen_sdk.session``  ``kaizen:plugin/session`` (always granted)
``interaction = true``                    ``kaizen:plugin/interaction``
``process = { ... }``                     ``kaizen:plugin/process``
``agent = true``                          ``kaizen:plugin/agent``
``llm = true``                            ``kaizen:plugin/llm``
``parallel = true``                       ``kaizen:plugin/parallel``
``http = [...]`` (not empty)              ``wasi:http/outgoing-handler`` (the kit's version)
========================================  ==========================================

The WIT directory it lays out::

    <dir>/world.wit                 package kaizen-kit:python; world python-plugin
    <dir>/deps/kaizen-plugin/*.wit  the contract (WIT, e.g. wit/v0.1.4)
    <dir>/deps/*.wit                the kit's WASI WIT (wasi:http and what it uses)

``session`` is always granted, yet imported only when the plugin's code
uses it (a source file mentions ``kaizen_sdk.session`` or imports
``session`` from ``kaizen_sdk``), as Rust's toolchain drops imports the code
never calls: a world without it is the smallest.

Usage: ``python3 kaizen_build.py prepare MANIFEST CONTRACT_WIT KIT_WIT SRC_DIR OUT_DIR``
prints the world's name (SRC_DIR: the plugin's own Python sources);
``python3 kaizen_build.py world MANIFEST VERSION [SRC_DIR]`` prints the
world file.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

#: The world's package and name in the generated world.wit.
PACKAGE = "kaizen-kit:python"
WORLD = "python-plugin"
#: The kinds the kit builds, in the order the world includes them.
KINDS = ("tool", "hook", "planner")
#: Where the kit's WASI WIT lives, relative to its wit directory: single-file
#: packages (http.wit, io.wit, ...), which the kaizen build embeds from the
#: `wasip2` crate it depends on.
WASI_DEPS = "deps"

#: Manifest capabilities that add a kaizen:plugin import, in WIT order.
_FLAG_IMPORTS = (
    ("interaction", "interaction"),
    ("process", "process"),
    ("agent", "agent"),
    ("llm", "llm"),
    ("parallel", "parallel"),
)


class BuildError(Exception):
    """A manifest or WIT the kit cannot build from; the message names the fix."""


def load_manifest(path: Path) -> dict[str, Any]:
    """``plugin.toml`` parsed (Python 3.11's tomllib)."""
    try:
        import tomllib
    except ModuleNotFoundError:
        raise BuildError("building a Python plugin needs Python 3.11 or later (for tomllib)") from None
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise BuildError(f"{path} does not exist; a plugin directory needs a plugin.toml") from None
    except tomllib.TOMLDecodeError as err:
        raise BuildError(f"{path} is not valid TOML: {err}") from None


def contract_version(wit_dir: Path) -> str:
    """The ``kaizen:plugin`` version declared in ``wit_dir``."""
    for wit in sorted(wit_dir.glob("*.wit")):
        match = re.search(r"^\s*package\s+kaizen:plugin@([0-9][^;\s]*)\s*;", wit.read_text(), re.M)
        if match:
            return match.group(1)
    raise BuildError(f"{wit_dir} holds no `package kaizen:plugin@...;` declaration; point WIT at the contract's wit/vX.Y.Z directory")


# `kaizen_sdk.session`, `from kaizen_sdk import (..., session)`,
# `from kaizen_sdk.session import ...`.
_USES_SESSION = re.compile(
    r"\bkaizen_sdk\.session\b|\bfrom\s+kaizen_sdk\s+import\s+(?:\([^)]*|[^\n]*)\bsession\b"
)


def uses_session(sources: Path | None) -> bool:
    """True when a ``.py`` file under ``sources`` (the plugin's own code)
    uses ``kaizen_sdk.session``."""
    if sources is None:
        return False
    for path in sorted(sources.rglob("*.py")):
        if "kaizen_sdk" in path.relative_to(sources).parts:
            continue
        if _USES_SESSION.search(path.read_text(encoding="utf-8", errors="replace")):
            return True
    return False


def kinds_of(manifest: dict[str, Any]) -> list[str]:
    """The manifest's kinds the world includes (of ``tool``, ``hook`` and
    ``planner``, in that order); anything else is refused."""
    kinds = manifest.get("plugin", {}).get("kinds", [])
    if (
        not isinstance(kinds, list)
        or not kinds
        or len(set(kinds)) != len(kinds)
        or any(kind not in KINDS for kind in kinds)
    ):
        raise BuildError(
            f'plugin.toml says kinds = {kinds!r}; the Python kit builds tool, hook and planner plugins: '
            f'kinds lists one or more of "tool", "hook" and "planner", each once'
        )
    return [kind for kind in KINDS if kind in kinds]


def imports_for(manifest: dict[str, Any], session: bool = False) -> list[str]:
    """The interfaces the world imports beyond its kinds' worlds', without
    versions: ``session`` when the code uses it, then one per requested
    capability, then ``wasi:http``."""
    kinds_of(manifest)
    caps = manifest.get("capabilities", {})
    found = ["session"] if session else []
    for key, interface in _FLAG_IMPORTS:
        value = caps.get(key)
        if key == "process":
            if value is not None:
                found.append(interface)
        elif value is True:
            found.append(interface)
    if caps.get("http"):
        found.append("wasi:http")
    return found


def wasi_http_version(kit_wit: Path) -> str:
    """The version of the kit's wasi:http package (``package wasi:http@X;``)."""
    http = kit_wit / WASI_DEPS / "http.wit"
    try:
        text = http.read_text()
    except OSError as err:
        raise BuildError(f"the kit has no wasi:http WIT ({http}: {err}); reinstall kaizen") from err
    found = re.search(r"^package wasi:http@([0-9][^;\s]*);", text, re.MULTILINE)
    if not found:
        raise BuildError(f"{http} does not declare package wasi:http@VERSION")
    return found.group(1)


def world_wit(
    manifest: dict[str, Any], version: str, session: bool = False, wasi_http: str | None = None
) -> str:
    """The text of world.wit for ``manifest`` against ``kaizen:plugin@version``."""
    manifest_contract = manifest.get("plugin", {}).get("contract")
    # The field is an optional note (the host reads the version from the
    # component); a note that disagrees with the build is still a mistake.
    if manifest_contract is not None and manifest_contract != version:
        raise BuildError(
            f"plugin.toml says contract = {manifest_contract!r} but the WIT is kaizen:plugin@{version}; "
            f'set contract = "{version}" in plugin.toml'
        )
    lines = [
        "// Generated by the Kaizen Python kit (sdk/python/kaizen_build.py) from",
        "// plugin.toml and the plugin's code: it imports only what they ask for.",
        f"package {PACKAGE};",
        "",
        f"world {WORLD} {{",
    ]
    lines += [f"    include kaizen:plugin/{kind}@{version};" for kind in kinds_of(manifest)]
    for interface in imports_for(manifest, session):
        if interface == "wasi:http":
            if wasi_http is None:
                raise BuildError("plugin.toml requests http, and no wasi:http WIT was given")
            lines.append(f"    import wasi:http/outgoing-handler@{wasi_http};")
        else:
            lines.append(f"    import kaizen:plugin/{interface}@{version};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def prepare(manifest_path: Path, contract_wit: Path, kit_wit: Path, sources: Path, out: Path) -> str:
    """Lays out the WIT directory ``out`` (see the module's docstring);
    returns the world's name."""
    manifest = load_manifest(manifest_path)
    version = contract_version(contract_wit)
    http = "wasi:http" in imports_for(manifest)
    text = world_wit(
        manifest, version, uses_session(sources), wasi_http_version(kit_wit) if http else None
    )
    if out.exists():
        shutil.rmtree(out)
    deps = out / "deps"
    (deps / "kaizen-plugin").mkdir(parents=True)
    for wit in sorted(contract_wit.glob("*.wit")):
        shutil.copy(wit, deps / "kaizen-plugin" / wit.name)
    if http:
        for package in sorted((kit_wit / WASI_DEPS).glob("*.wit")):
            shutil.copy(package, deps / package.name)
    (out / "world.wit").write_text(text)
    return WORLD


def main(argv: list[str]) -> int:
    try:
        if len(argv) == 6 and argv[0] == "prepare":
            print(prepare(Path(argv[1]), Path(argv[2]), Path(argv[3]), Path(argv[4]), Path(argv[5])))
            return 0
        if len(argv) in (3, 4) and argv[0] == "world":
            session = uses_session(Path(argv[3])) if len(argv) == 4 else False
            print(world_wit(load_manifest(Path(argv[1])), argv[2], session), end="")
            return 0
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(__doc__.split("Usage: ", 1)[1].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
