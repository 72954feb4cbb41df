"""The package's metadata agrees with itself: license, citation, version, typing marker, data files."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

import tt_env

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def test_the_license_is_an_spdx_expression_with_its_file():
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")], \
        "setuptools refuses license classifiers next to an SPDX expression"
    assert any(r.startswith("setuptools>=77") for r in PYPROJECT["build-system"]["requires"])


def test_the_citation_file_and_the_versions_agree():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"
    assert citation["title"] and citation["message"] and citation["authors"]
    assert str(citation["version"]) == PROJECT["version"] == tt_env.__version__
    assert citation["license"] == PROJECT["license"]


def test_the_packages_are_marked_typed_and_ship_their_data():
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    for package in ("tt_env", "models", "training"):
        assert (ROOT / package / "py.typed").is_file() and "py.typed" in data[package]
    assert {"checkpoints/*.pt", "checkpoints/*.json"} <= set(data["models"])
    assert "Typing :: Typed" in PROJECT["classifiers"]


def test_the_sdist_carries_what_the_wheel_is_built_from():
    manifest = (ROOT / "MANIFEST.in").read_text()
    assert "recursive-include configs *.yaml" in manifest and "include tt_env/engine/*.h" in manifest
    assert "setuptools>=77" in " ".join(PROJECT["optional-dependencies"]["dev"])  # the wheel test builds with it
