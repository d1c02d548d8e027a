"""The wheel ships every package of the source tree (a plain, non-editable install works)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_vision_package_is_listed_for_the_wheel() -> None:
    # setuptools installs only the packages named in pyproject.toml: a subpackage left out
    # works in the editable install of the quick start and fails in a plain `pip install .`.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "vision").rglob("__init__.py")
    }
    assert found <= listed, f"not in pyproject.toml [tool.setuptools] packages: {found - listed}"
