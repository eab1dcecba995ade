"""`tail` for a person (issue 31, item 8): one line per record at the terminal's width (tmux at 80 and
120 columns, golden screens), and the recorder's own attestation rows left out unless --all (a
consumer, --kind and --json still get every row they ask for)."""

from __future__ import annotations

import json
import re
import types

import pytest
from support import sessions as fixture_sessions
from support import tmux
from test_views_tmux import WIDTHS, agentwatch, terminal_env
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.store import append as store_append
from agentwatch.store.append import Append, Store

ATTESTATIONS = 12  # more than tail's last 10: an idle spell after the session


@pytest.fixture(scope="module")
def idle_store(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tailview")
    path = directory / "store.db"
    with pytest.MonkeyPatch.context() as mp:
        fixture_sessions.build(path, mp, harnesses=["claude-code"])
        at = fixture_sessions.T0_NS + 3_600_000_000_000
        with Store(path) as store:
            for i in range(ATTESTATIONS):
                mp.setattr(store_append, "time", types.SimpleNamespace(time_ns=lambda i=i: at + i * 60_000_000_000))
                store.append([Append(f"attest-idle-{i}", "attestation", b'{"type":"heartbeat"}')])
    return directory


def tail(store, *args):
    result = CliRunner().invoke(app, ["tail", "--store", str(store / "store.db"), "--socket", str(store / "no.sock"), *args])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


@pytest.mark.parametrize("width", WIDTHS)
def test_one_line_per_record_at_the_terminals_width(idle_store, tmp_path, width):
    with tmux.Terminal(tmp_path, width=width, height=30, env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} tail --store store.db --socket no.sock", cwd=idle_store, exit_code=0)
    # A row's hash covers the store's random id (its genesis): the golden file holds its place only.
    tmux.check_golden(f"tail-{width}.txt", re.sub(r"(?m) [0-9a-f]{12}$", " <hash>", screen))
    lines = screen.splitlines()
    assert len(lines) == 10 and max(map(len, lines)) <= width
    assert "attestation" not in screen


def test_the_recorders_rows_are_hidden_unless_asked_for(idle_store):
    events = tail(idle_store)
    assert len(events) == 10 and all("attestation" not in line for line in events)
    everything = tail(idle_store, "--all")
    assert len(everything) == 10 and all(" attestation " in line for line in everything)
    assert len(tail(idle_store, "--kind", "attestation")) == 10
    as_json = [json.loads(line)["kind"] for line in tail(idle_store, "--json")]
    assert as_json == ["attestation"] * 10  # a script gets every row
    assert tail(idle_store, "--from", "1", "--kind", "event") == tail(idle_store, "--from", "1")


def test_all_and_kind_exclude_each_other(idle_store):
    result = CliRunner().invoke(app, ["tail", "--store", str(idle_store / "store.db"), "--all", "--kind", "event"])
    assert (result.exit_code, result.stderr) == (2, "agentwatch: choose one of --all and --kind\n")
