"""`agentwatch ui`: the review page, read-only and local, checked over HTTP and in a real browser.

The store holds the fixture sessions (tests/support/sessions.py: payloads from each harness's
published hook documentation). HTTP checks go through urllib against the running server; the
page as a person sees it goes through Debian's headless Chromium (tests/support/browser.py):
the DOM after the page ran, and screenshots at 1280x800 kept under test-artifacts/ui/.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import pytest
from support import browser
from support import sessions as fixture_sessions
from support.sessions import T0_NS, append_at, envelope

from agentwatch.evidence import bundle, checkpoints
from agentwatch.store.append import Store
from agentwatch.ui import timeline
from agentwatch.ui.server import HEADERS, Settings, UIServer

CLAUDE = "8a1c2f0e-5b7d-4c3e-9f10-2d4e6a8b0c1e"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("ui")
    store = root / "store.db"
    fixture_sessions.build(store, mp)
    mp.undo()
    state = root / "state"
    checkpoints.sign_store(store, state_dir=state)
    return store, state


@pytest.fixture(scope="module")
def server(built):
    store, state = built
    srv = UIServer(Settings(store=store, state_dir=state, witness_dirs=[], socket=state / "no-daemon.sock"))
    srv.start_background()
    yield srv
    srv.close()


def get(url: str, *, host: str | None = None, method: str = "GET") -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, method=method)
    if host is not None:
        request.add_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def test_every_page_needs_the_token(server):
    base = f"http://127.0.0.1:{server.port}"
    for path in ("/", "/session?id=8a1c2f0e", "/record/3", "/store", "/sql?q=select+1", "/static/app.css",
                 f"/{server.token[:-1]}/", f"/{server.token}x/"):
        status, _, body = get(base + path)
        assert (path, status, body) == (path, 404, "not found")
    assert get(server.url)[0] == 200


def test_only_the_loopback_host_names_are_answered(server):
    assert get(server.url, host=f"evil.example:{server.port}")[0] == 421  # DNS rebinding
    assert get(server.url, host="127.0.0.1")[0] == 421  # no port: not this server's origin
    assert get(server.url, host=f"localhost:{server.port}")[0] == 200


def test_it_listens_on_loopback_only(server):
    assert server.httpd.server_address[0] == "127.0.0.1"
    with socket.socket() as s:  # the same port on another loopback address is not served
        s.settimeout(2)
        assert s.connect_ex(("127.0.0.2", server.port)) != 0


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_nothing_but_reading_is_allowed(server, method):
    status, headers, body = get(server.url + "sql?q=select+1", method=method)
    assert (status, body, headers.get("Allow")) == (405, "read-only", "GET, HEAD")


def test_every_answer_carries_the_protective_headers(server):
    for path in ("", "store", "sql", "record/3", "static/app.css", "nope"):
        _, headers, _ = get(server.url + path)
        for name, value in HEADERS.items():
            assert headers.get(name) == value, (path, name)
        assert not [h for h in headers if h.lower().startswith("access-control-")]
    assert "script-src" not in HEADERS["Content-Security-Policy"]  # default-src 'none' forbids every script


def test_sessions_page_lists_filters_sorts_and_pages(server):
    status, _, body = get(server.url)
    assert status == 200
    assert body.count('<tr class="session">') == len(fixture_sessions.SESSIONS)
    _, _, only = get(server.url + "?harness=codex")
    assert only.count('<tr class="session">') == 1 and ">codex<" in only
    _, _, failed = get(server.url + "?outcome=failed&sort=started&order=asc")
    # the fixture sessions with a failed call (tests/test_sessions_show.py EXPECTED)
    assert re.findall(r'<tr class="session"><td>([^<]+)</td>', failed) == ["claude-code", "gemini-cli", "cursor", "cline"]
    _, _, denied = get(server.url + "?outcome=denied")
    assert re.findall(r'<tr class="session"><td>([^<]+)</td>', denied) == ["copilot"]
    _, _, asc = get(server.url + "?sort=started&order=asc")
    order = re.findall(r'<tr class="session"><td>([^<]+)</td>', asc)
    assert order == list(fixture_sessions.SESSIONS)  # the fixture sessions were recorded in this order
    _, _, recent = get(server.url + "?since=1d")
    assert recent.count('<tr class="session">') == 0  # the fixtures are a year old


def test_a_session_page_has_one_bar_per_call_with_its_outcome(server):
    status, _, body = get(server.url + "session?harness=claude-code&id=8a1c2f0e")
    assert status == 200
    bars = re.findall(r'<rect class="bar ([a-z]+)[^"]*" data-seq="(\d+)" data-outcome="([a-z]+)"', body)
    assert [(seq, outcome) for _, seq, outcome in bars] == [("3", "ok"), ("6", "error"), ("7", "open")]
    assert body.count('class="mark prompt"') == 1


def test_a_record_page_and_its_proof(server, built):
    store, state = built
    _, _, body = get(server.url + "record/3")
    assert "toolu_01Hx3kP9" in body and "sha256:" in body
    status, headers, proof = get(server.url + "record/3/proof.json")
    assert status == 200 and headers["Content-Disposition"] == 'attachment; filename="agentwatch-proof-3.json"'
    doc = json.loads(proof)
    verifier = checkpoints.read_verifier(bytes.fromhex(doc["store_id"]), state)
    result = bundle.verify_bundle(doc, verifier)  # what `agentwatch verify-bundle` checks
    assert (doc["record"]["seq"], result.ok) == (3, True)
    assert get(server.url + "record/99999")[0] == 404


def test_the_store_page_shows_verify_checkpoint_and_daemon(server):
    status, _, body = get(server.url + "store")
    assert status == 200
    assert '<p class="verdict ok">ok</p>' in body
    assert '<p class="verdict stopped">stopped</p>' in body  # no daemon at the configured socket


def test_the_sql_page_reads_and_refuses_writes(server):
    _, _, body = get(server.url + "sql?q=" + quote("SELECT count(*) AS n FROM records"))
    assert "<th>n</th>" in body and '<td class="mono">57</td>' in body
    status, _, refused = get(server.url + "sql?q=" + quote("DELETE FROM records"))
    assert status == 400 and "only reading is allowed" in refused
    status, _, two = get(server.url + "sql?q=" + quote("SELECT 1; SELECT 2"))
    assert status == 400 and "one statement per query" in two


def test_a_store_whose_schema_changed_is_refused(tmp_path):
    import apsw

    store = tmp_path / "s.db"
    mp = pytest.MonkeyPatch()
    fixture_sessions.build(store, mp, harnesses=["codex"])
    mp.undo()
    conn = apsw.Connection(str(store))
    conn.execute("DROP VIEW events; CREATE VIEW events AS SELECT * FROM records WHERE 0")
    conn.close()
    srv = UIServer(Settings(store=store))
    srv.start_background()
    try:
        status, _, body = get(srv.url)
        assert status == 503 and "schema differs" in body
    finally:
        srv.close()


# -- recorded content is hostile ---------------------------------------------------------

class _Listener(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802
        _Listener.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def exfil_port():
    _Listener.hits = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def hostile_inputs(port: int) -> list[dict]:
    leak = f"http://127.0.0.1:{port}/leak"
    return [
        {"command": "<script>document.documentElement.setAttribute('data-pwned','script')</script>"},
        {"command": "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"},
        {"command": f"\"><svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\"><img src='{leak}/img'>"},
        {"command": f"<style>body{{background:url({leak}/css)}} input[value^=a]{{background:url({leak}/attr)}}</style>"},
        {"command": f"</pre></details><link rel=stylesheet href={leak}/link><iframe src={leak}/frame></iframe>"},
        {"command": "</title></textarea><script>document.title='pwned'</script>"},
        {"command": "echo \x1b]0;owned\x07\x1b[2J \u202etxt.exe done"},
        {"command": f"<meta http-equiv=refresh content=\"0;url={leak}/refresh\">"},
    ]


def _hostile_store(tmp_path, port: int):
    store = tmp_path / "hostile.db"
    envs = []
    for i, tool_input in enumerate(hostile_inputs(port)):
        payload = {"session_id": "hostile-<b>1</b>", "cwd": "/home/dev/<i>x</i>", "hook_event_name": "PreToolUse",
                   "tool_name": "Bash<script>x</script>", "tool_input": tool_input, "tool_use_id": f"toolu_{i}"}
        envs.append((envelope("claude-code", "PreToolUse", i, T0_NS + i * 1000, payload=payload), T0_NS + i * 1000))
    mp = pytest.MonkeyPatch()
    with Store(store) as s:
        append_at(s, envs, mp)
    mp.undo()
    return store


def test_hostile_content_is_escaped_in_the_html(tmp_path, exfil_port):
    srv = UIServer(Settings(store=_hostile_store(tmp_path, exfil_port)))
    srv.start_background()
    try:
        for page in ("", "session?id=" + quote("hostile-<b>1</b>"), "record/1", "record/6",
                     "sql?q=" + quote("SELECT payload FROM records")):
            status, _, body = get(srv.url + page)
            assert status == 200, (page, body[:500])
            assert "<script>" not in body and "<img" not in body and "<style>" not in body and "<iframe" not in body
            assert "<meta http-equiv" not in body and "<link rel=stylesheet" not in body
            assert "\x1b" not in body and "\x07" not in body
        assert "&lt;script&gt;" in get(srv.url + "record/1")[2]
    finally:
        srv.close()


def test_hostile_content_does_not_run_in_a_real_browser(tmp_path, exfil_port):
    srv = UIServer(Settings(store=_hostile_store(tmp_path, exfil_port)))
    srv.start_background()
    try:
        for page in ("", "session?id=" + quote("hostile-<b>1</b>"), "record/1", "record/4", "record/5",
                     "sql?q=" + quote("SELECT payload FROM records")):
            dom = browser.dump_dom(srv.url + page)
            assert "data-pwned" not in dom.split("<body", 1)[0] + dom.split("<body", 1)[1].split(">", 1)[0], page
            assert not re.search(r"<html[^>]*data-pwned", dom), page
            assert "<title>pwned</title>" not in dom, page
            assert "<script" not in dom, page
        browser.screenshot(srv.url + "session?id=" + quote("hostile-<b>1</b>"), "hostile-session")
        assert _Listener.hits == []  # no request left the page for the attacker's address
    finally:
        srv.close()


# -- the page as a person sees it -----------------------------------------------------------

def test_the_browser_draws_one_bar_per_call_and_the_screenshots_are_kept(server):
    dom = browser.dump_dom(server.url + "session?harness=claude-code&id=8a1c2f0e")
    bars = re.findall(r'<rect class="bar [^"]*" data-seq="(\d+)" data-outcome="([a-z]+)"', dom)
    assert bars == [("3", "ok"), ("6", "error"), ("7", "open")]
    for name, page in (("sessions", ""), ("session-claude-code", "session?harness=claude-code&id=8a1c2f0e"),
                       ("record", "record/3"), ("store", "store"),
                       ("sql", "sql?q=" + quote("SELECT seq, kind, harness, event_name FROM records LIMIT 20"))):
        shot = browser.screenshot(server.url + page, name)
        assert browser.png_size(shot) == (1280, 800)


@pytest.mark.parametrize("harness", list(fixture_sessions.SESSIONS))
def test_every_harness_session_draws_its_calls(server, built, harness):
    from agentwatch.readers import sessions

    store, _ = built
    summary = sessions.list_sessions(store, harness=harness)[0]
    _, _, _, items = sessions.timeline(store, summary.session_id)
    _, _, body = get(server.url + "session?" + f"harness={harness}&id={quote(summary.session_id)}")
    drawn = re.findall(r'data-seq="(\d+)" data-outcome="([a-z]+)"', body)
    assert drawn == [(str(i.seq), i.outcome) for i in items if i.kind == "tool"]


def test_the_layout_puts_each_call_where_it_ran():
    from agentwatch.readers.sessions import Item

    items = [Item("prompt", 1, 0, "h"), Item("tool", 2, 1_000_000_000, "h", name="a", outcome="ok", duration_ms=1000.0),
             Item("tool", 3, 3_000_000_000, "h", name="b", outcome="open")]
    bars, marks, t0, t1 = timeline.layout(items, end_ns=4_000_000_000)
    span = timeline.WIDTH - timeline.LABEL_W - 10
    assert (t0, t1) == (0, 4_000_000_000)
    assert [(round(b.x - timeline.LABEL_W), round(b.width), b.open) for b in bars] == [
        (round(span / 4), round(span / 4), False), (round(span * 3 / 4), round(span / 4), True)]
    assert [m[1].seq for m in marks] == [1]


def test_the_command_prints_its_url_and_serves_until_interrupted(built):
    store, _ = built
    with subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "ui", "--store", str(store)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            url = proc.stdout.readline().strip()
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{32}/", url)
            assert get(url)[0] == 200
        finally:
            proc.send_signal(2)
            _, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert url not in err  # the token is printed once, on stdout
    port = int(url.split(":")[2].split("/")[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/")
        except OSError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the server still answers after Ctrl-C")


def test_coverage_shows_on_the_sessions_and_session_pages(tmp_path):
    """A coverage row (what the harness's transcript holds that the record lacks) is shown and filtered on."""
    from agentwatch.store.append import Append as Row

    store = tmp_path / "store.db"
    mp = pytest.MonkeyPatch()
    fixture_sessions.build(store, mp, harnesses=["claude-code", "codex"])
    mp.undo()
    body = {"harness": "claude-code", "session_id": CLAUDE, "status": "missing", "summary": "3/4 · 1 missing",
            "counts": {"transcript": 4, "recorded": 3, "both": 3, "missing": 1, "extra": 0},
            "missing": [{"kind": "missing", "call_id": "toolu_<b>dropped</b>", "tool": "Write",
                         "file": "/home/dev/.claude/projects/p/8a1c2f0e.jsonl", "line": 17}],
            "findings": [{"kind": "extra", "detail": "recorded, not in the transcript", "call_id": "x", "seq": 7,
                          "source": "transcript"}]}
    from agentwatch.store.chain import canonical_json

    with Store(store) as s:
        s.append([Row("attest-coverage-test", "attestation",
                      canonical_json({"schema": 1, "type": "coverage", "coverage": body}))])
    srv = UIServer(Settings(store=store))
    srv.start_background()
    try:
        _, _, listing = get(srv.url + "?coverage=missing")
        assert re.findall(r'<tr class="session"><td>([^<]+)</td>', listing) == ["claude-code"]
        assert '<td class="coverage missing">3/4 · 1 missing</td>' in listing
        _, _, unchecked = get(srv.url + "?coverage=unchecked")
        assert re.findall(r'<tr class="session"><td>([^<]+)</td>', unchecked) == ["codex"]
        _, _, page = get(srv.url + "session?harness=claude-code&id=8a1c2f0e")
        rows = re.findall(r'<tr class="missing-call"><td class="mono">([^<]*)</td><td>([^<]*)</td>'
                          r'<td class="mono">([^<]*)</td></tr>', page)
        assert rows == [("toolu_&lt;b&gt;dropped&lt;/b&gt;", "Write", "/home/dev/.claude/projects/p/8a1c2f0e.jsonl:17")]
        # the recorded call the transcript lacks (seq 7, the open Grep) is drawn as named by a finding
        assert re.findall(r'<rect class="bar [a-z]+( open)? finding" data-seq="(\d+)"', page) == [(" open", "7")]
        _, _, store_page = get(srv.url + "store")
        assert '&quot;sessions_missing_calls&quot;: 1' in store_page
    finally:
        srv.close()


def test_the_newest_first_view_pages_back_from_the_head(tmp_path):
    """60 sessions: the default view shows the 50 newest, its `older` link the other 10 (read back
    from the head, a page at a time); the full-sort path pages the same 60 in 50s."""
    from support.sessions import policy

    from agentwatch.record import normalize

    store = tmp_path / "store.db"
    with Store(store) as s:
        for i in range(60):
            s.append([normalize.to_append(
                {"record_id": f"r{i}", "harness": "claude-code", "ts_observed_ns": 10**18 + i, "pid": 1, "ppid": 2,
                 "delivery": "socket",
                 "payload": {"hook_event_name": "UserPromptSubmit", "session_id": f"s{i:03d}", "prompt": "go"}},
                policy=policy())])
    srv = UIServer(Settings(store=store))
    srv.start_background()
    try:
        _, _, first = get(srv.url)
        ids = re.findall(r'id=(s\d{3})"', first)
        assert ids == [f"s{i:03d}" for i in range(59, 9, -1)]
        older = re.search(r'<a rel="next" href="([^"]+)">older</a>', first).group(1).replace("&amp;", "&")
        _, _, second = get(f"http://127.0.0.1:{srv.port}{older}")
        assert re.findall(r'id=(s\d{3})"', second) == [f"s{i:03d}" for i in range(9, -1, -1)]
        assert 'rel="next"' not in second
        _, _, sorted_page = get(srv.url + "?sort=started&order=asc&page=2")
        assert re.findall(r'id=(s\d{3})"', sorted_page) == [f"s{i:03d}" for i in range(50, 60)]
    finally:
        srv.close()
