"""The vramfit pytest plugin (entry point pytest11, loaded once the package is installed):
`--vramfit-bin PATH` (or the ini key vramfit_bin) names the vramfit command for the session,
and the `assert_fits` fixture is vramfit.assert_fits bound to it."""

from __future__ import annotations

import functools
import os

import pytest

import vramfit
from vramfit._run import ENV_BINARY


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vramfit")
    group.addoption("--vramfit-bin", default=None,
                    help=f"the vramfit command (default: ${ENV_BINARY}, else PATH)")
    parser.addini("vramfit_bin", "the vramfit command (default: $VRAMFIT_BIN, else PATH)",
                  default=None)


def pytest_configure(config: pytest.Config) -> None:
    binary = config.getoption("--vramfit-bin") or config.getini("vramfit_bin")
    if binary:
        os.environ[ENV_BINARY] = os.path.abspath(binary) if os.sep in binary else binary


@pytest.fixture
def assert_fits():
    """vramfit.assert_fits: fails the test with the plan's stage table unless it fits."""
    return functools.partial(vramfit.assert_fits)
