"""Load a script of ``scripts/`` as a module, for tests of its functions."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from vision.data import REPO_ROOT


def load_script(stem: str, name: str | None = None) -> ModuleType:
    """Import ``scripts/<stem>.py`` as module ``name`` (default ``stem``).

    The module is registered in ``sys.modules`` before it runs: dataclasses look their module
    up there.
    """
    name = name or stem
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "scripts" / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
