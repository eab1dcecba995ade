"""Fixtures for tests/. The autouse isolation of every path lives in the root conftest.py."""

from __future__ import annotations

import pytest


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "store.db"
