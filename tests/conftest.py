"""Fixtures for tests/. The autouse isolation of every path lives in the root conftest.py."""

from __future__ import annotations

import pytest


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "store.db"


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL server for the whole run, from the machine's server binaries.

    Under CI, missing binaries or driver fail the fleet tests; elsewhere they skip and say why.
    """
    from support import postgres

    server = postgres.Server(postgres.require_binaries())
    yield server
    server.destroy()


@pytest.fixture
def fleet(pg_server, tmp_path, monkeypatch):
    """A fleet database of this test's own, initialised, with a shipping and a reading login."""
    from support import postgres

    return postgres.Fleet.create(pg_server, tmp_path, monkeypatch)
