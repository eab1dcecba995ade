"""Configuration: precedence, validation, the project tightening rule, the digest, `config show`."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentwatch import config
from agentwatch.cli import app
from agentwatch.errors import EXIT_USAGE
from agentwatch.record import redact


@pytest.fixture
def user_file(isolated_env):
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "agentwatch" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "repo"
    (root / "src" / "deep").mkdir(parents=True)
    return root


def test_defaults_follow_xdg(isolated_env):
    cfg = config.load(project=False)
    data = Path(os.environ["XDG_DATA_HOME"]) / "agentwatch"
    assert cfg.store == data / "store.db"
    assert cfg.spool == data / "spool"
    assert cfg.socket == Path(os.environ["XDG_RUNTIME_DIR"]) / "agentwatch" / "agentwatch.sock"
    assert cfg["redaction.salt_file"] == data / "redaction.salt"
    assert cfg.privacy == "redacted" and cfg["durability"] == "full"
    assert cfg["serve.batch_max"] == 1000 and cfg["serve.attest_interval_s"] == 60.0
    assert set(cfg.sources.values()) == {"default"} and cfg.files == ()


def test_precedence_flags_over_env_over_file_over_defaults(user_file, monkeypatch, tmp_path):
    user_file.write_text(
        'store = "/from/file.db"\nsocket = "/from/file.sock"\nprivacy = "hashed"\n'
        "[serve]\nbatch_max = 10\nattest_interval_s = 99\n"
    )
    monkeypatch.setenv("AGENTWATCH_SOCKET", "/from/env.sock")
    monkeypatch.setenv("AGENTWATCH_SERVE_BATCH_MAX", "20")
    cfg = config.load({"socket": None, "serve.batch_max": 30}, cwd=tmp_path)
    assert cfg.store == Path("/from/file.db") and cfg.sources["store"] == f"file:{user_file}"
    assert cfg.socket == Path("/from/env.sock") and cfg.sources["socket"] == "env:AGENTWATCH_SOCKET"
    assert cfg["serve.batch_max"] == 30 and cfg.sources["serve.batch_max"] == "flag:--batch-max"
    assert cfg["serve.attest_interval_s"] == 99 and cfg.privacy == "hashed"
    assert cfg.files == (str(user_file),)


def test_agentwatch_config_names_the_file_and_it_must_exist(monkeypatch, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text('privacy = "metadata-only"\n')
    monkeypatch.setenv("AGENTWATCH_CONFIG", str(other))
    assert config.load(cwd=tmp_path).privacy == "metadata-only"
    monkeypatch.setenv("AGENTWATCH_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(config.ConfigError, match="missing.toml: config file does not exist"):
        config.load(cwd=tmp_path)


@pytest.mark.parametrize("text,message", [
    ('stor = "/x"\n', "unknown key 'stor'"),
    ('[serve]\nbatchmax = 3\n', "unknown key 'serve.batchmax'"),
    ('[unknown]\nx = 1\n', "unknown key 'unknown'"),
    ('privacy = "paranoid"\n', "key 'privacy': must be one of"),
    ('durability = "normal"\n', "key 'durability': only 'full' is supported"),
    ('store = "relative/store.db"\n', "key 'store': must be an absolute path"),
    ('store = 5\n', "key 'store': must be a non-empty string"),
    ('[serve]\nbatch_max = 0\n', "key 'serve.batch_max': must be between 1 and 100000"),
    ('[serve]\nbatch_max = true\n', "key 'serve.batch_max': must be an integer"),
    ('[serve]\nattest_interval_s = "60"\n', "key 'serve.attest_interval_s': must be a number"),
    ('[serve]\nbatch_max = 1.5\n', "key 'serve.batch_max': must be an integer"),
    ('[redaction]\nextra_patterns = ["("]\n', "key 'redaction.extra_patterns': pattern 1"),
    ('[redaction]\nextra_patterns = ["a*"]\n', "matches the empty string"),
    ('[redaction]\nextra_patterns = "x+"\n', "must be a list"),
    ("privacy = \n", "not valid TOML"),
])
def test_bad_files_are_refused_naming_file_and_key(user_file, tmp_path, text, message):
    user_file.write_text(text)
    with pytest.raises(config.ConfigError) as info:
        config.load(cwd=tmp_path)
    assert str(user_file) in str(info.value) and message in str(info.value)
    assert info.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize("var,value,message", [
    ("AGENTWATCH_PRIVACY", "open", "environment variable AGENTWATCH_PRIVACY: key 'privacy'"),
    ("AGENTWATCH_SERVE_BATCH_MAX", "lots", "environment variable AGENTWATCH_SERVE_BATCH_MAX: key 'serve.batch_max'"),
    ("AGENTWATCH_REDACTION_EXTRA_PATTERNS", "[1]", "AGENTWATCH_REDACTION_EXTRA_PATTERNS: key 'redaction.extra_patterns'"),
])
def test_bad_environment_is_refused_naming_the_variable(monkeypatch, tmp_path, var, value, message):
    monkeypatch.setenv(var, value)
    with pytest.raises(config.ConfigError, match=message):
        config.load(cwd=tmp_path)


def test_environment_values_are_parsed(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTWATCH_REDACTION_EXTRA_PATTERNS", '["ACME-[0-9]+"]')
    monkeypatch.setenv("AGENTWATCH_SERVE_ATTEST_INTERVAL_S", "2.5")
    cfg = config.load(cwd=tmp_path)
    assert cfg["redaction.extra_patterns"] == ("ACME-[0-9]+",) and cfg["serve.attest_interval_s"] == 2.5


# --- project files -------------------------------------------------------------------------------


def test_project_file_in_a_parent_tightens(user_file, project):
    user_file.write_text('privacy = "redacted"\n[redaction]\nextra_patterns = ["USER-[0-9]+"]\n')
    (project / ".agentwatch.toml").write_text('privacy = "hashed"\n[redaction]\nextra_patterns = ["PROJ-[0-9]+"]\n')
    cfg = config.load(cwd=project / "src" / "deep")
    pfile = project / ".agentwatch.toml"
    assert cfg.privacy == "hashed" and cfg.sources["privacy"] == f"project:{pfile}"
    assert cfg["redaction.extra_patterns"] == ("USER-[0-9]+", "PROJ-[0-9]+")
    assert cfg.sources["redaction.extra_patterns"] == f"file:{user_file}+project:{pfile}"
    assert cfg.files == (str(user_file), str(pfile))


def test_project_file_raises_the_floor_over_env_and_flags(monkeypatch, project):
    monkeypatch.setenv("AGENTWATCH_PRIVACY", "full")
    (project / ".agentwatch.toml").write_text('privacy = "metadata-only"\ndurability = "full"\n')
    assert config.load(cwd=project).privacy == "metadata-only"


@pytest.mark.parametrize("effective,attempt", [
    ("redacted", "full"), ("hashed", "redacted"), ("metadata-only", "hashed"), ("metadata-only", "full"),
])
def test_project_file_may_never_weaken_privacy(user_file, project, effective, attempt):
    user_file.write_text(f'privacy = "{effective}"\n')
    (project / ".agentwatch.toml").write_text(f'privacy = "{attempt}"\n')
    with pytest.raises(config.ConfigError) as info:
        config.load(cwd=project)
    text = str(info.value)
    assert str(project / ".agentwatch.toml") in text and "key 'privacy'" in text and "only tighten" in text


@pytest.mark.parametrize("line", [
    'store = "/tmp/elsewhere.db"', 'socket = "/tmp/evil.sock"', 'spool = "/tmp/spool"',
    '[redaction]\nsalt_file = "/tmp/known-salt"', '[serve]\nbatch_max = 1', '[serve]\nattest_interval_s = 1',
])
def test_project_file_may_not_redirect_or_tune_the_recorder(project, line):
    (project / ".agentwatch.toml").write_text(line + "\n")
    with pytest.raises(config.ConfigError, match="cannot be set in a project file"):
        config.load(cwd=project)


def test_project_file_may_not_weaken_durability(project):
    (project / ".agentwatch.toml").write_text('durability = "off"\n')
    with pytest.raises(config.ConfigError, match="key 'durability'"):
        config.load(cwd=project)


def test_privacy_order_matches_redaction_modes():
    assert [m for m, _ in sorted(redact.STRICTNESS.items(), key=lambda kv: kv[1])] == [
        "full", "redacted", "hashed", "metadata-only"]


# --- digest and policy ------------------------------------------------------------------------------


def test_digest_is_stable_and_tracks_every_value(monkeypatch, tmp_path):
    first = config.load(cwd=tmp_path)
    assert first.digest() == config.load(cwd=tmp_path).digest()
    assert first.digest().startswith("sha256:") and len(first.digest()) == 71
    monkeypatch.setenv("AGENTWATCH_SERVE_BATCH_MAX", "999")
    assert config.load(cwd=tmp_path).digest() != first.digest()


def test_digest_ignores_where_a_value_came_from(user_file, monkeypatch, tmp_path):
    user_file.write_text('privacy = "hashed"\n')
    from_file = config.load(cwd=tmp_path)
    user_file.unlink()
    monkeypatch.setenv("AGENTWATCH_PRIVACY", "hashed")
    assert config.load(cwd=tmp_path).digest() == from_file.digest()


def test_one_digest_for_config_show_and_the_daemon(user_file, tmp_path):
    from agentwatch.daemon.settings import ServeConfig

    user_file.write_text(f'privacy = "hashed"\nstore = "{tmp_path}/s.db"\n[serve]\nbatch_max = 7\n'
                         '[checkpoint]\ninterval_s = 3\nwitness_dirs = []\n')
    cfg = config.load(cwd=tmp_path)
    serve = ServeConfig.from_config(cfg)
    assert serve.digest() == cfg.digest()
    assert (serve.batch_max, serve.checkpoint_interval, serve.witness_dirs) == (7, 3, ())
    # A field changed after building is what the digest then covers.
    assert ServeConfig.from_config(cfg, max_inflight=1).digest() == cfg.digest()  # internal bounds are no setting
    assert replace(serve, batch_max=8).digest() == config.load({"serve.batch_max": 8}, cwd=tmp_path).digest()


def test_a_serve_config_built_directly_has_the_configured_defaults(tmp_path):
    from agentwatch.daemon.settings import FIELD_KEYS, ServeConfig

    paths = {"store": tmp_path / "s.db", "socket": tmp_path / "s.sock", "spool": tmp_path / "spool"}
    direct = ServeConfig(**paths)
    configured = ServeConfig.from_config(config.load(paths, cwd=tmp_path))
    assert {name: getattr(direct, name) for name in FIELD_KEYS} == {name: getattr(configured, name) for name in FIELD_KEYS}
    assert direct.witness_dirs == (str(Path(os.environ["XDG_STATE_HOME"]) / "agentwatch" / "witness"),)
    assert direct.digest() == configured.digest() == config.load(paths, cwd=tmp_path).digest()


def test_config_show_health_and_attestations_carry_one_digest(user_file, tmp_path):
    """A daemon started from the config file: `config show`, `health` and its start row agree."""
    from support.daemon import Daemon

    d = Daemon(tmp_path / "d")
    user_file.write_text(f'store = "{d.store}"\nsocket = "{d.socket}"\nspool = "{d.spool}"\nprivacy = "hashed"\n'
                         f'[serve]\nattest_interval_s = 0\nidle_timeout_s = 30\nverify_interval_s = 5\n')
    user_file.chmod(0o600)
    shown = json.loads(runner.invoke(app, ["config", "show", "--json"]).stdout)["digest"]
    d.start()
    try:
        health = json.loads(runner.invoke(app, ["health", "--json"]).stdout)
        (start,) = [row for row in d.rows("attestation") if row["payload"]["type"] == "start"]
    finally:
        assert d.stop() == 0, d.output()
    assert health["status"] == "recording"
    assert health["config_digest"] == start["payload"]["config_digest"] == shown


def test_policy_uses_mode_salt_and_patterns(user_file, tmp_path):
    salt_file = tmp_path / "salt"
    user_file.write_text(f'privacy = "hashed"\n[redaction]\nsalt_file = "{salt_file}"\nextra_patterns = ["ACME-[0-9]+"]\n')
    policy = config.load(cwd=tmp_path).policy()
    assert policy.mode == "hashed" and policy.extra_patterns == ("ACME-[0-9]+",)
    assert policy.salt == redact.load_salt(salt_file) and oct(salt_file.stat().st_mode & 0o777) == "0o600"


# --- the command ----------------------------------------------------------------------------------------

runner = CliRunner()


def test_config_show_json_lists_values_sources_and_digest(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTWATCH_PRIVACY", "hashed")
    result = runner.invoke(app, ["config", "show", "--json", "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["config"]["store"] == str(tmp_path / "s.db") and doc["sources"]["store"] == "flag:--store"
    assert doc["config"]["privacy"] == "hashed" and doc["sources"]["privacy"] == "env:AGENTWATCH_PRIVACY"
    assert doc["digest"] == config.load({"store": tmp_path / "s.db"}).digest()
    assert set(doc["config"]) == set(config.KEYS)


def test_config_show_text_and_bad_config_exit_2(user_file, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["config", "show"])
    assert result.exit_code == 0 and "privacy" in result.stdout and "(default)" in result.stdout
    user_file.write_text('privacy = "none"\n')
    result = runner.invoke(app, ["config", "show"])
    assert result.exit_code == 2 and str(user_file) in result.stderr and "key 'privacy'" in result.stderr


def test_checkpoint_dir_is_a_deprecated_name_of_state_dir_that_still_works_and_warns(tmp_path, caplog):
    """`checkpoint.dir` named the one state directory under a second name; it still works from
    the file and the environment, says it is deprecated, and loses to `state_dir` itself."""
    home = tmp_path / "home"
    (home / ".config" / "agentwatch").mkdir(parents=True, mode=0o700)
    path = home / ".config" / "agentwatch" / "config.toml"
    path.write_text(f'[checkpoint]\ndir = "{tmp_path / "old"}"\n')
    path.chmod(0o600)
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    with caplog.at_level("WARNING", logger="agentwatch.config"):
        cfg = config.load(env=env, project=False)
    assert (cfg["state_dir"], cfg["checkpoint.dir"]) == (tmp_path / "old", tmp_path / "old")
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: 'checkpoint.dir' is deprecated; it is now 'state_dir' (it still works, for now)"]
    assert "checkpoint.dir" not in cfg.as_dict()
    caplog.clear()
    with caplog.at_level("WARNING", logger="agentwatch.config"):
        cfg = config.load(env={**env, "AGENTWATCH_CHECKPOINT_DIR": str(tmp_path / "env")}, project=False)
    assert cfg["state_dir"] == tmp_path / "env" and cfg.sources["state_dir"] == "env:AGENTWATCH_CHECKPOINT_DIR"
    assert len(caplog.records) == 2  # the file's name and the variable's
    cfg = config.load(env={**env, "AGENTWATCH_CHECKPOINT_DIR": str(tmp_path / "env"),
                           "AGENTWATCH_STATE_DIR": str(tmp_path / "new")}, project=False)
    assert cfg["state_dir"] == tmp_path / "new"
    assert config.load({"checkpoint.dir": tmp_path / "flag"}, env=env, project=False)["state_dir"] == tmp_path / "flag"
