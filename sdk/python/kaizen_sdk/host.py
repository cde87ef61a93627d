"""The other host interfaces of ``kaizen:plugin``, as componentize-py
generates them, like the Rust kit's ``kaizen_sdk::host``::

    from kaizen_sdk import host

    out = host.process.run(host.process.Command(
        program="git", args=["status"], cwd=None, env=[], stdin=None, timeout_ms=10_000))

=================  =====================================  ===========================
module             manifest ``[capabilities]``             what it does
=================  =====================================  ===========================
``interaction``    ``interaction = true``                  ask the user, report progress
``process``        ``process = { programs = [...] }``      run programs in the sandbox
``agent``          ``agent = true``                        run a sub-agent
``parallel``       ``parallel = true``                     fan calls out to own tools
``llm``            ``llm = true``                          a completion from the session's model
=================  =====================================  ===========================

The build imports a module's interface only when the manifest requests its
capability (the host refuses components that import more than they were
granted). Functions whose WIT result has an error raise
``componentize_py_types.Err`` with the error variant as ``.value``; an
uncaught one reaches the model as an internal error, so catch it where the
error means something (``interaction.InteractionError_NoUser``, ...).
Outside a component, or without the capability, using a module raises
:class:`~kaizen_sdk.HostUnavailable` naming the fix; unit tests put a fake
in its place with ``mock.patch("kaizen_sdk.host.process", fake,
create=True)``.
"""

from __future__ import annotations

from types import ModuleType

from . import _bindings
from .errors import HostUnavailable

#: Each module and the manifest line that makes the build import it.
CAPABILITIES = {
    "interaction": "interaction = true",
    "process": 'process = { programs = ["git"] }',
    "agent": "agent = true",
    "parallel": "parallel = true",
    "llm": "llm = true",
}


def interface(name: str) -> ModuleType:
    """The generated module of host interface ``name`` (one of
    :data:`CAPABILITIES`)."""
    if name not in CAPABILITIES:
        raise AttributeError(
            f"kaizen_sdk.host has no `{name}`; it has {', '.join(CAPABILITIES)} (log, session and http are "
            f"kaizen_sdk.log, kaizen_sdk.session and kaizen_sdk.http)"
        )
    module = _bindings.imported(name)
    if module is not None:
        return module
    if _bindings.in_component():
        raise HostUnavailable(
            f"this plugin was built without kaizen:plugin/{name}: request it under [capabilities] in "
            f"plugin.toml ({CAPABILITIES[name]}) and rebuild; the build then imports it"
        )
    raise _NotInComponent(
        f"kaizen_sdk.host.{name} exists only inside the component; in unit tests, put a fake in its place: "
        f'unittest.mock.patch("kaizen_sdk.host.{name}", fake, create=True)'
    )


class _NotInComponent(HostUnavailable, AttributeError):
    """Also an AttributeError, so that ``mock.patch(..., create=True)`` can
    put a fake in place of a module that does not exist natively."""


def __getattr__(name: str) -> ModuleType:
    if name.startswith("__"):
        raise AttributeError(name)
    return interface(name)
