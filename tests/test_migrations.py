import sqlite3
from pathlib import Path

import apsw
import pytest

from agentwatch.errors import SchemaError, StoreUnreachable
from agentwatch.store import db, migrations
from agentwatch.store.append import Append, Store


def test_fresh_store_is_stamped_and_booked(store_path):
    Store(store_path).close()
    conn = sqlite3.connect(store_path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == migrations.APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == migrations.latest_version()
    booked = conn.execute("SELECT number, name, digest FROM _agentwatch_migrations ORDER BY number").fetchall()
    shipped = migrations.load()
    assert booked == [(m.number, m.name, m.digest) for m in shipped]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reopening_applies_nothing(store_path):
    Store(store_path).close()
    conn = db.open_writer(store_path)
    assert migrations.migrate(conn) == []
    assert migrations.pending(conn, migrations.load()) == []


def _write(directory: Path, name: str, sql: str) -> None:
    (directory / name).write_text(sql)


def test_duplicate_migration_numbers_refused(tmp_path):
    _write(tmp_path, "0001_a.sql", "CREATE TABLE a (x);")
    _write(tmp_path, "0001_b.sql", "CREATE TABLE b (x);")
    with pytest.raises(SchemaError, match="used twice"):
        migrations.load(tmp_path)


def test_gap_in_migration_numbers_refused(tmp_path):
    _write(tmp_path, "0001_a.sql", "CREATE TABLE a (x);")
    _write(tmp_path, "0003_c.sql", "CREATE TABLE c (x);")
    with pytest.raises(SchemaError, match="without gaps"):
        migrations.load(tmp_path)


def test_badly_named_migration_refused(tmp_path):
    _write(tmp_path, "1_a.sql", "CREATE TABLE a (x);")
    with pytest.raises(SchemaError, match="0001_name.sql"):
        migrations.load(tmp_path)


def test_failed_migration_leaves_no_trace(tmp_path):
    _write(tmp_path, "0001_a.sql", "CREATE TABLE a (x);")
    _write(tmp_path, "0002_b.sql", "CREATE TABLE b (x); THIS IS NOT SQL;")
    conn = apsw.Connection(str(tmp_path / "s.db"))
    with pytest.raises(apsw.SQLError):
        migrations.migrate(conn, migrations.load(tmp_path))
    # 0001 committed with its bookkeeping; 0002 rolled back whole, bookkeeping included.
    assert conn.pragma("user_version") == 1
    assert conn.execute("SELECT name FROM _agentwatch_migrations").fetchall() == [("0001_a",)]
    assert conn.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'b'").fetchone()[0] == 0


def test_edited_migration_refused(tmp_path):
    _write(tmp_path, "0001_a.sql", "CREATE TABLE a (x);")
    conn = apsw.Connection(str(tmp_path / "s.db"))
    migrations.migrate(conn, migrations.load(tmp_path))
    _write(tmp_path, "0001_a.sql", "CREATE TABLE a (x, y);")
    with pytest.raises(SchemaError, match="never be edited"):
        migrations.migrate(conn, migrations.load(tmp_path))


def test_newer_schema_refused_by_writer_and_reader(store_path):
    Store(store_path).close()
    conn = sqlite3.connect(store_path)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError, match="newer than this agentwatch"):
        Store(store_path)
    with pytest.raises(SchemaError, match="newer than this agentwatch"):
        db.open_reader(store_path)


def test_reader_never_migrates_an_older_store(store_path):
    Store(store_path).close()
    conn = sqlite3.connect(store_path)
    conn.execute("PRAGMA user_version = 0")
    conn.commit()
    conn.close()
    before = store_path.read_bytes()
    with pytest.raises(SchemaError, match="readers never do"):
        db.open_reader(store_path)
    assert store_path.read_bytes() == before
    assert sqlite3.connect(store_path).execute("PRAGMA user_version").fetchone()[0] == 0


def test_reader_does_not_create_a_store(store_path):
    with pytest.raises(StoreUnreachable, match="does not exist"):
        db.open_reader(store_path)
    assert not store_path.exists()


def test_foreign_sqlite_database_refused(store_path):
    conn = sqlite3.connect(store_path)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError, match="not an agentwatch store"):
        Store(store_path)
    with pytest.raises(SchemaError, match="not an agentwatch store"):
        db.open_reader(store_path)


def test_non_sqlite_file_refused(store_path):
    store_path.write_bytes(b"this is not a database, just some text " * 200)
    with pytest.raises(SchemaError, match="not a SQLite database"):
        Store(store_path)
    with pytest.raises(SchemaError, match="not a SQLite database"):
        db.open_reader(store_path)


def test_symlinked_store_path_refused(tmp_path, store_path):
    Store(store_path).close()
    link = tmp_path / "link.db"
    link.symlink_to(store_path)
    with pytest.raises(StoreUnreachable, match="symlink"):
        Store(link)
    with pytest.raises(StoreUnreachable, match="symlink"):
        db.open_reader(link)


def test_store_files_are_private(store_path):
    with Store(store_path) as store:
        store.append([Append("r1", "event", b"{}")])
        for suffix in ("", "-wal", "-shm"):
            mode = Path(f"{store_path}{suffix}").stat().st_mode & 0o777
            assert mode == 0o600, suffix
