"""Build the seventh held-out redaction corpus (tests/fixtures/redaction/corpus7.json.gz).

The first six corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, secretlint, GitGuardian/sample_secrets,
checkov, SonarSource sonar-text and sonar-iac, gosec, bandit, horusec and talisman
(Skyscanner/whispers and Plazmaz/leaky-repo set aside). This one comes from four other
projects, none of them read by an earlier corpus, each labelled by its upstream:

- GitGuardian/ggshield, `tests/unit/conftest.py`: its module-level patch and file texts
  (read with `ast`, f-strings filled in from the module's own constants) are positives
  whose secrets are the `match` values of the scan results the module declares (a
  `host`, `port`, `username` or `client_id` match is not a secret: the same threat model
  as the earlier corpora), plus `GG_TEST_TOKEN`; `_NO_SECRET_PATCH` is a negative.
  Its recorded API exchanges (`tests/unit/cassettes/*.yaml`, read with PyYAML): each
  document a scan sent is a positive whose secrets are the matches the recorded answer
  names (the same types set aside), or a negative where the answer names none; each
  honeytoken the API created is a positive (the JSON answer, as `curl` prints it; its
  secret the `secret_key`).
- awslabs/git-secrets, `test/git-secrets.bats`: the test that scans an INI file of AWS
  credentials writes it with five `echo '...' >> test.ini` lines and greps each value
  back; each line (its text, and the `echo` command line that writes it) and the whole
  file are positives, the value after `=` the secret.
- nickdeis/eslint-plugin-no-secrets, `tests/lib/rules/no-secrets.ts` and `staging/`: the
  code of each `invalid` case is a positive (its secret the quoted literal the rule
  reports), the code of each `valid` case a negative, except those valid only because an
  option (`ignoreIdentifiers`, `ignoreModules`) switches the rule off, which are left out;
  `staging/has-secret.*` are positives, `staging/has-no-secret.*` negatives.
- microsoft/DevSkim, `rules/default/security/privacy/secrets.json`: each rule's
  `must-match` example is a positive (the quoted hex literal its pattern reads), each
  `must-not-match` a negative.
- Benign: ordinary files of the same repositories outside their tests (CI workflows,
  build and tool configuration, Dockerfiles, scripts), each whole (up to 200 lines) and
  each line that names a password, secret, token, key, credential or auth, and the output
  of `git log --format='%H %an %s' -n 15` at each pinned commit.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule). Samples are labelled with the format of their text;
a unified diff is `diff`. The scorer (tests/support/redaction_corpus7.py) stores each in
the four carriers an agent produces. Sources read `owner/repo@commit:path` (and
`#NAME`, `#line-n`, `#rule/must-match-n`).

Usage (not part of the test suite, which reads the built file):

    python tests/support/redaction_corpus7_extract.py --ggshield DIR --git-secrets DIR \\
        --no-secrets DIR --devskim DIR

where each DIR is a git clone or bare mirror (at the commit the fixture names).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, git, head_commit, show  # noqa: E402
from redaction_corpus6_extract import sniff  # noqa: E402

OUT = HERE / "corpus7.json.gz"
GGSHIELD_CONFTEST = "tests/unit/conftest.py"
GGSHIELD_CASSETTES = "tests/unit/cassettes"
GIT_SECRETS_TEST = "test/git-secrets.bats"
NO_SECRETS_TEST = "tests/lib/rules/no-secrets.ts"
DEVSKIM_RULES = "rules/default/security/privacy/secrets.json"
_NAMES = {"GitGuardian/ggshield": "ggshield", "awslabs/git-secrets": "git-secrets",
          "nickdeis/eslint-plugin-no-secrets": "no-secrets", "microsoft/DevSkim": "devskim"}
CORPUS = Corpus(_NAMES, session="corpus7", earlier=6, commit_chars=12)
# ggshield match types that name where or who, not a secret (the earlier corpora's threat model).
GG_NOT_SECRET_TYPES = {"host", "port", "username", "client_id"}


def _positive(source: str, path: str, text: str, secrets: list[str], left_out: Counter,
              fmt: str | None = None) -> list[dict]:
    # A short secret must stand as a word once in its text, however often upstream names it.
    return CORPUS.positive(source, path, text, secrets, left_out, Counter(set(secrets)), fmt)


# -- ggshield ---------------------------------------------------------------------------------------------

def _eval(node: ast.AST, env: dict):
    """A module-level constant: a string, an f-string of names, a concatenation, a `.replace` call."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_eval(v, env) if not isinstance(v, ast.FormattedValue) else str(_eval(v.value, env))
                       for v in node.values)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _eval(node.left, env) + _eval(node.right, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace":
        return _eval(node.func.value, env).replace(*(_eval(a, env) for a in node.args))
    raise ValueError(ast.dump(node)[:80])


def _gg_matches(tree: ast.Module, env: dict) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
            if "match" in keys and "type" in keys:
                kind = _eval(node.values[keys.index("type")], env)
                if kind not in GG_NOT_SECRET_TYPES:
                    out.add(_eval(node.values[keys.index("match")], env))
    return out


def _pem_bodies(text: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"-----BEGIN [A-Z ]+-----\n(.*?)\n\+?-----END", text, re.S)]


def ggshield(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"GitGuardian/ggshield@{head[:12]}"
    tree = ast.parse(show(repo, head, GGSHIELD_CONFTEST))
    env: dict = {}
    texts: list[tuple[str, str]] = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        try:
            value = _eval(node.value, env)
        except (ValueError, KeyError):
            continue
        if isinstance(value, str):
            env[node.targets[0].id] = value
            if re.search(r"_PATCH(_CONTENT)?$|_FILE$|^GG_TEST_TOKEN$", node.targets[0].id):
                texts.append((node.targets[0].id, value))
    secrets = _gg_matches(tree, env) | {env["GG_TEST_TOKEN"]}
    samples = []
    for name, value in texts:
        text = value.replace("\0", "\\0").strip("\n")
        fmt = "diff" if re.match(r"(commit [0-9a-f]{40}|@@ )", text.lstrip()) else sniff(text)
        path = "change.diff" if fmt == "diff" else "secret.txt"
        source = f"{upstream}:{GGSHIELD_CONFTEST}#{name}"
        found = [x for x in secrets if "-----BEGIN" not in x and x in text] + _pem_bodies(text)
        if name.startswith("_NO_SECRET"):
            samples.append(CORPUS.sample("upstream-negative", source, path, text, fmt=fmt))
        elif found:
            samples += _positive(source, path, text, found, left_out, fmt)
        else:
            left_out["ggshield text that holds no secret its scan results name"] += 1
    return samples


def ggshield_cassettes(repo: str, left_out: Counter) -> list[dict]:
    """The recorded API exchanges: each document a scan sent, with the matches the recorded
    answer names (no break: a negative), and the honeytoken an API call created (the JSON an
    agent's `curl` prints; its secret the `secret_key`)."""
    import yaml

    head = head_commit(repo)
    upstream = f"GitGuardian/ggshield@{head[:12]}"
    samples = []
    for path in sorted(git(repo, "ls-tree", "--name-only", head, GGSHIELD_CASSETTES + "/").split()):
        for n, turn in enumerate(yaml.safe_load(show(repo, head, path))["interactions"], 1):
            uri, body = turn["request"]["uri"], turn["request"]["body"]
            answer = (turn["response"]["body"] or {}).get("string") or ""
            source = f"{upstream}:{path}#interaction-{n}"
            if "/honeytokens" in uri and '"secret_key"' in answer:
                token = json.loads(answer)["token"]
                samples += _positive(source, "honeytoken.json", answer.strip(), [token["secret_key"]], left_out,
                                     "json")
            elif "scan" in uri and body and answer.startswith("["):
                for k, (doc, result) in enumerate(zip(json.loads(body), json.loads(answer)), 1):
                    text = doc["document"].strip("\n")
                    fmt = "diff" if re.match(r"(commit [0-9a-f]{40}|@@ )", text.lstrip()) else sniff(text)
                    where = "change.diff" if fmt == "diff" else doc["filename"].rsplit("/", 1)[-1]
                    found = [m["match"] for pb in result.get("policy_breaks", []) for m in pb["matches"]
                             if m["type"] not in GG_NOT_SECRET_TYPES]
                    if not found:
                        samples.append(CORPUS.sample("upstream-negative", f"{source}/document-{k}", where, text,
                                                     fmt=fmt))
                        continue
                    secrets = [x for x in found if "-----BEGIN" not in x and x in text] + _pem_bodies(text)
                    samples += _positive(f"{source}/document-{k}", where, text, secrets, left_out, fmt)
    return samples


# -- git-secrets ------------------------------------------------------------------------------------------

def git_secrets(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"awslabs/git-secrets@{head[:12]}"
    lines = show(repo, head, GIT_SECRETS_TEST).splitlines()
    source = f"{upstream}:{GIT_SECRETS_TEST}"
    samples = []
    ini: list[tuple[str, str]] = []
    for n, line in enumerate(lines, 1):
        m = re.match(r"\s*echo '(aws_\w+\s*=\s*(.+?))' >>? \$BATS_TMPDIR/test\.ini$", line)
        if not m:
            continue
        secret = m.group(2).strip().strip('"')
        ini.append((m.group(1), secret))
        samples += _positive(f"{source}#line-{n}", "test.ini", m.group(1), [secret], left_out, "ini")
        command = line.strip().replace("$BATS_TMPDIR", "/tmp")
        samples += _positive(f"{source}#line-{n}/command", "test.sh", command, [secret], left_out, "shell")
    samples += _positive(f"{source}#test.ini", "test.ini", "\n".join(t for t, _ in ini), [s for _, s in ini],
                         left_out, "ini")
    return samples


# -- eslint-plugin-no-secrets -------------------------------------------------------------------------------

_TS_CONST = re.compile(r"^const (\w+) =\s*\n?\s*(`[^`]*`|\"(?:[^\"\\]|\\.)*\");", re.M)
_TS_CASE = re.compile(r"\{\s*(?://\w+\s*)?code: (\w+|`[^`]*`),(.*?)\n      \}", re.S)
_LITERAL = re.compile(r"\"([^\"\s]{16,})\"")


def no_secrets(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"nickdeis/eslint-plugin-no-secrets@{head[:12]}"
    src = show(repo, head, NO_SECRETS_TEST)
    consts = {name: (json.loads(v) if v.startswith('"') else v[1:-1]) for name, v in _TS_CONST.findall(src)}
    body = src[src.index("export function createTests"):]
    invalid_at = body.index("invalid: [")
    samples = []
    seen: set[str] = set()
    for n, m in enumerate(_TS_CASE.finditer(body), 1):
        ref, options = m.groups()
        name = ref if not ref.startswith("`") else f"case-{n}"
        if name in seen:
            continue
        seen.add(name)
        text = (consts[ref] if not ref.startswith("`") else ref[1:-1]).strip("\n")
        source = f"{upstream}:{NO_SECRETS_TEST}#{name}"
        if m.start() < invalid_at:
            if re.search(r"ignoreIdentifiers|ignoreModules", options):
                left_out["no-secrets valid case only because an option switches the rule off"] += 1
            elif text.strip():
                samples.append(CORPUS.sample("upstream-negative", source, "index.js", text, fmt="javascript"))
            continue
        samples += _positive(source, "index.js", text, _LITERAL.findall(text) or [
            re.search(r"Basic (\S+)\"", text).group(1)], left_out, "javascript")
    for ref in ("IMPORT_TEST_LEGACY", "IMPORT_TEST_FLAT"):  # spread as a name: valid only with ignoreModules
        if ref in body[:invalid_at]:
            left_out["no-secrets valid case only because an option switches the rule off"] += 1
    for path in ("staging/has-secret.js", "staging/has-secret.json", "staging/has-no-secret.js",
                 "staging/has-no-secret.json"):
        text = show(repo, head, path).strip("\n")
        source = f"{upstream}:{path}"
        if "has-secret" in path:
            samples += _positive(source, path, text, _LITERAL.findall(text), left_out)
        else:
            samples.append(CORPUS.sample("upstream-negative", source, path, text))
    return samples


# -- DevSkim ------------------------------------------------------------------------------------------------

def devskim(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"microsoft/DevSkim@{head[:12]}"
    samples = []
    for rule in json.loads(show(repo, head, DEVSKIM_RULES)):
        for n, text in enumerate(rule.get("must-match", []), 1):
            secrets = re.findall(r"[\"']([a-f0-9]{30,})[\"']", text)
            samples += _positive(f"{upstream}:{DEVSKIM_RULES}#{rule['id']}/must-match-{n}", "Program.cs", text,
                                 secrets, left_out, "csharp")
        for n, text in enumerate(rule.get("must-not-match", []), 1):
            samples.append(CORPUS.sample("upstream-negative",
                                         f"{upstream}:{DEVSKIM_RULES}#{rule['id']}/must-not-match-{n}",
                                         "Program.cs", text, fmt="csharp"))
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "ggshield": (".github/workflows/ci.yml", ".github/workflows/build_release_assets.yml",
                 ".github/workflows/tag.yml", ".github/workflows/perfbench.yml", ".github/dependabot.yml",
                 ".pre-commit-config.yaml", ".pre-commit-hooks.yaml", ".gitguardian.example.yml", ".env.example",
                 "Dockerfile", "Makefile", "actions/secret/action.yml", "codecov.yml",
                 "docker/actions-secret-entrypoint.sh", "doc/pre-receive.sample", "rust/Cargo.toml"),
    "git-secrets": (".github/workflows/test.yml", ".pre-commit-hooks.yaml", ".travis.yml", "Makefile",
                    "install.ps1"),
    "no-secrets": (".github/workflows/main.yml", "package.json", "tsconfig.json", "staging/normal.eslintrc.js",
                   "staging/mixed-flat.eslintrc.js", "staging/jsonc.eslintrc.js"),
    "devskim": (".github/dependabot.yml", ".github/workflows/changelog.yml", ".vscode/launch.json",
                ".vscode/tasks.json", "DevSkim-DotNet/Microsoft.DevSkim.CLI/Microsoft.DevSkim.CLI.csproj",
                "DevSkim-DotNet/Microsoft.DevSkim/Microsoft.DevSkim.csproj",
                "DevSkim-DotNet/Microsoft.DevSkim.Tests/Microsoft.DevSkim.Tests.csproj",
                "DevSkim-VSCode-Plugin/client/package.json", "DevSkim-VSCode-Plugin/eslint.config.mjs"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    return (ggshield(repos["ggshield"], left_out) + ggshield_cassettes(repos["ggshield"], left_out)
            + git_secrets(repos["git-secrets"], left_out) + no_secrets(repos["no-secrets"], left_out)
            + devskim(repos["devskim"], left_out))


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
