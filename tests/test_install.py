"""Install advice names what works without toolsift on a package index: the packages, and the extra for a clone."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from test_one_place import spellings

from toolsift._install import EXTRAS, install_advice

ROOT = Path(__file__).resolve().parent.parent


def test_the_extras_are_pyprojects() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {name: tuple(requirements) for name, requirements in declared.items() if name != "dev"} == EXTRAS


def test_advice_names_the_packages_and_the_clones_extra() -> None:
    assert install_advice("redis") == "pip install 'redis>=5.0' (from a clone of toolsift: pip install -e '.[redis]')"
    assert install_advice("semantic", then="pip install --no-deps m") == (
        "pip install 'tokenizers>=0.15' 'safetensors>=0.4' 'onnxruntime>=1.22' 'onnx>=1.16' && pip install --no-deps m "
        "(from a clone of toolsift: pip install -e '.[semantic]' && pip install --no-deps m)"
    )


@pytest.mark.parametrize("spelling", ["toolsift[", "pip install -e '.["])
def test_no_message_advises_an_install_on_its_own(spelling: str) -> None:
    """``toolsift[extra]`` is not on any index; every message asks :func:`install_advice`."""
    where = sorted({module for module, found in spellings().items() for _, text in found if spelling in text})
    assert where == ([] if spelling == "toolsift[" else ["_install.py"])


def test_the_readme_advises_no_extra_from_an_index() -> None:
    assert "pip install 'toolsift[" not in (ROOT / "README.md").read_text(encoding="utf-8")
