"""A throwaway PostgreSQL server for tests: the machine's own server binaries, a temp dir.

`find_binaries()` looks for initdb, pg_ctl and postgres on PATH, in /usr/local/bin and in
/usr/lib/postgresql/<version>/bin (the newest version first). `Server` runs initdb into a
fresh directory under /tmp and starts the server on a free loopback port:

- initdb refuses to run as root, so under root the server runs as an unprivileged user:
  `postgres` when the machine has one (the Debian package creates it), else
  `agentwatch-pgtest`, created with useradd;
- local connections (its Unix socket, in the same directory) trust the admin role;
  TCP connections on 127.0.0.1 need a password (scram-sha-256), so the shipping and
  reading roles of a test log in the way a remote machine would, through libpq's own
  password sources;
- the server log is also written as JSON lines (jsonlog), which is where
  `agentwatch.collect_denials()` finds refused direct writes;
- a test's server does not fsync (initdb --no-sync, `fsync = off`): its files go away with the
  test, and what the tests do to it (a crash of a client, `pg_ctl stop -m immediate`, a restart)
  loses nothing the kernel already has; only a machine crash would. The benchmarks ask for a
  `durable` server, configured as a deployment is.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ADMIN = "agentwatch_admin"
FALLBACK_USER = "agentwatch-pgtest"


def find_binaries() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres, or None."""
    candidates = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    candidates.append(Path("/usr/local/bin"))
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    candidates.extend(Path(v) for v in versions)
    for directory in candidates:
        if all((directory / name).exists() for name in ("initdb", "pg_ctl", "postgres")):
            return directory
    return None


def require_binaries() -> Path:
    """The server binaries' directory, or the test's end: under CI a failure, elsewhere a skip saying why."""
    import pytest

    bindir = find_binaries()
    problem = None
    if bindir is None:
        problem = ("no PostgreSQL server binaries (initdb, pg_ctl, postgres) on PATH, in /usr/local/bin "
                   "or /usr/lib/postgresql/*/bin")
    else:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            problem = "psycopg is not installed (pip install -e '.[test]')"
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{problem}; CI runs the fleet tests (`make test` installs postgresql when it is missing)")
        pytest.skip(f"{problem}: the fleet tests need a real PostgreSQL (install postgresql)")
    return bindir


def _version_key(path: str) -> tuple:
    part = Path(path).parent.name
    return tuple(int(x) for x in part.split(".") if x.isdigit())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_user() -> str | None:
    """Who runs the server: None for the current user, or an unprivileged account under root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", FALLBACK_USER):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", FALLBACK_USER],
                   check=True, capture_output=True)
    return FALLBACK_USER


@dataclass
class Role:
    name: str
    password: str


class Server:
    def __init__(self, bindir: Path, *, nice: int = 0, durable: bool = False):
        self.bindir = bindir
        self.nice = nice  # the server's CPU priority (benchmarks: a stand-in for another machine)
        self.user = _server_user()
        self.dir = Path(tempfile.mkdtemp(prefix="agentwatch-pg-"))
        self.data = self.dir / "data"
        self.logfile = self.dir / "server.log"
        self.port = _free_port()
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", ADMIN, "-E", "UTF8", "--no-locale",
                  "--auth-local=trust", "--auth-host=scram-sha-256", *(() if durable else ("--no-sync",)))
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.dir}'\n"
                "logging_collector = on\nlog_destination = 'stderr,jsonlog'\nlog_directory = 'log'\n"
                "max_connections = 50\nshared_buffers = 64MB\n"
                "wal_recycle = off\n"  # erased payloads leave with the WAL segments that held them (docs/fleet.md)
                + ("" if durable else "fsync = off\n")
            )
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if self.nice and tool == "pg_ctl":
            command = ["nice", "-n", str(self.nice), *command]
        result = subprocess.run(command, user=self.user, cwd=self.dir, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{tool} failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.logfile), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- connecting -------------------------------------------------------------------

    def admin_dsn(self, dbname: str = "postgres") -> str:
        """The superuser over the Unix socket (trusted): for set-up only."""
        return f"host={self.dir} port={self.port} user={ADMIN} dbname={dbname}"

    def url(self, user: str, dbname: str) -> str:
        """How a machine would name the server: TCP, no password in the URL."""
        return f"postgresql://{user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        import psycopg

        name = "fleet_" + secrets.token_hex(4)
        with psycopg.connect(self.admin_dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def create_role(self, member_of: str, prefix: str = "machine") -> Role:
        import psycopg
        from psycopg import sql

        role = Role(f"{prefix}_{secrets.token_hex(4)}", secrets.token_urlsafe(18))
        with psycopg.connect(self.admin_dsn(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                sql.Identifier(role.name), sql.Literal(role.password), sql.Identifier(member_of)))
        return role

    def passfile(self, path: Path, *roles: Role) -> Path:
        """A libpq password file (0600) for `roles`: host:port:database:user:password."""
        path.write_text("".join(f"127.0.0.1:{self.port}:*:{r.name}:{r.password}\n" for r in roles), encoding="utf-8")
        path.chmod(0o600)
        return path


def wait_for(condition, timeout: float = 60.0, interval: float = 0.05):
    """Poll `condition()` until it returns a true value; that value, or None at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


@dataclass
class Fleet:
    """One test's fleet database on the session's server: initialised, with a shipping and a reading login."""

    server: Server
    dbname: str
    admin_url: str
    ship: Role
    read: Role
    passfile: Path

    @classmethod
    def create(cls, server: Server, tmp_path: Path, monkeypatch) -> "Fleet":
        from agentwatch.fleet import schema

        for var in [v for v in os.environ if v.startswith("PG")]:
            monkeypatch.delenv(var, raising=False)  # only what the test sets reaches libpq
        dbname = server.create_database()
        admin_url = f"postgresql://{ADMIN}@/{dbname}?host={server.dir}&port={server.port}"
        schema.init(admin_url)
        ship = server.create_role("agentwatch_ship", "ship")
        read = server.create_role("agentwatch_read", "read")
        passfile = server.passfile(tmp_path / "pgpass", ship, read)
        monkeypatch.setenv("PGPASSFILE", str(passfile))
        return cls(server, dbname, admin_url, ship, read, passfile)

    @property
    def ship_url(self) -> str:
        return self.server.url(self.ship.name, self.dbname)

    @property
    def read_url(self) -> str:
        return self.server.url(self.read.name, self.dbname)

    def another_shipper(self, tmp_path: Path) -> Role:
        """A second machine's login, added to the password file."""
        role = self.server.create_role("agentwatch_ship", "ship")
        with open(self.passfile, "a", encoding="utf-8") as f:
            f.write(f"127.0.0.1:{self.server.port}:*:{role.name}:{role.password}\n")
        return role

    def admin(self):
        import psycopg

        return psycopg.connect(self.admin_url, autocommit=True)

    def reader(self):
        import psycopg

        return psycopg.connect(self.read_url, autocommit=True)

    def shipper(self, role: Role | None = None):
        import psycopg

        return psycopg.connect(self.server.url((role or self.ship).name, self.dbname), autocommit=True)
