"""The component's generated bindings (``wit_world``), looked up lazily.

componentize-py generates ``wit_world`` when it builds the component, from
the world the build chose; natively (unit tests) it does not exist. Which
host interfaces are there depends on that world, so every lookup may come
back empty and the caller says what to do about it.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Optional

_cache: dict[str, Optional[ModuleType]] = {}


def imported(name: str) -> Optional[ModuleType]:
    """The generated module ``wit_world.imports.<name>``, or None when the
    component does not import that interface (or there is no component)."""
    if name not in _cache:
        try:
            _cache[name] = importlib.import_module(f"wit_world.imports.{name}")
        except ModuleNotFoundError as err:
            if err.name not in ("wit_world", "wit_world.imports", f"wit_world.imports.{name}"):
                raise
            _cache[name] = None
    return _cache[name]


def in_component() -> bool:
    """True inside a component built by componentize-py."""
    return imported("log") is not None


def kaizen_types() -> ModuleType:
    """``kaizen:plugin/types``: named ``types`` unless another imported
    interface is called ``types`` too (wasi:http's), when componentize-py
    qualifies both names."""
    for name in ("types", "kaizen_plugin_types"):
        module = imported(name)
        if module is not None and hasattr(module, "CallContext"):
            return module
    raise ModuleNotFoundError("the component's bindings have no kaizen:plugin/types module")


def wasi_http_types() -> Optional[ModuleType]:
    """``wasi:http/types`` (always qualified: kaizen:plugin/types is there
    too), or None."""
    return imported("wasi_http_types")


def where_am_i() -> str:
    """For error messages: in a component, or natively under CPython."""
    return "in this component" if in_component() else f"natively ({sys.implementation.name})"
