"""Shared setup for the package's tests: the repository root ($VRAMFIT_SOURCE_DIR, else two
folders up), for the README and the doctor corpus. The command is $VRAMFIT_BIN."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(os.environ.get("VRAMFIT_SOURCE_DIR",
                                   pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT
