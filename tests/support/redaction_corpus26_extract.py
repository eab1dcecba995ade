"""Build the twenty-sixth held-out redaction corpus (tests/fixtures/redaction/corpus26.json.gz).

The first twenty-five corpora came from the projects tests/support/redaction_corpus25_extract.py
names and the ones it read before. This one reads a project none of them read:
1Password/shell-plugins, whose plugins hand a CLI its credential from 1Password and import one
found on the machine. Each plugin declares its credential's fields, marking those that are
secret (`Secret: true`), and tests both ways with table-driven Go tests.

- 1Password/shell-plugins, every `plugins/*/*_test.go`: the cases of `plugintest.TestImporter`
  (the environment variables and files a credential is imported from, and the candidates the
  importer must find) and of `plugintest.TestProvisioner` (a credential's fields, and the
  environment, files and command-line arguments the provisioner must write). An importer case
  that expects candidates gives a positive for its environment (`NAME=value`, a line each) and
  one for each of its files, whose secrets are the values of the candidates' secret fields
  that text holds; a provisioner case gives a positive for each text of its expected output
  (the environment, each file, the arguments as a shell would read them) whose secrets are the
  values of the item's secret fields that text holds. An importer case that expects no
  candidate is an upstream negative, each of its texts. A field is secret where the plugin's
  credential schema marks it so (`SECRET_FIELDS` are read from the plugin's other Go files).
  Strings are written out as Go does it, with the evaluator of
  tests/support/redaction_corpus25_extract.py; `plugintest.LoadFixture` reads the plugin's
  `test-fixtures` file. Left out: a case built another way, an empty text, a text of a
  positive case holding none of its secrets, the fields that are not secret (a host, a region,
  a user name, an organization).
- Benign: ordinary files of the repository outside its plugins, SDK and code (the CI
  workflows, the issue and pull-request templates, the Dependabot, lint and ignore
  configuration, the contributing guide, the Makefile, the Go module file and the Nix files),
  each whole (up to 200 lines) and each line that names a password, secret, token, key,
  credential or auth, and `git log --format='%H %an %s' -n 15` at the pinned commit. The README
  is not: it lists the plugins and what they hold. Chosen before scoring, by the fourteenth
  corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule). A text or secret any of the first twenty-five corpora
holds is left out (counted). An environment is carried as `example.txt` and the arguments as
`args.txt`, labelled with the format their text shows (`sniff`); a file keeps the path the test
gives it (without `~/` or the leading `/`) and the format of that path. The scorer
(tests/support/redaction_corpus26.py) stores each sample in the four carriers an agent
produces. Sources read `owner/repo@commit:path#TestFunc/case/environment`, `…#TestFunc/case/FILE`
or `…#TestFunc/case/arguments`, or a benign `…:path` and `…:path#line-n`.

Usage (not part of the test suite, which reads the built file):

    .venv/bin/python tests/support/redaction_corpus26_extract.py --plugins DIR

where DIR is a clone (or bare mirror) of 1Password/shell-plugins at the commit the fixture names.
"""

from __future__ import annotations

import shlex
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import format_of, sniff  # noqa: E402
from redaction_corpus25_extract import Evaluator, Package, Unknown, _close, _fields, _split, tokens  # noqa: E402

OUT = HERE / "corpus26.json.gz"
SESSION = "corpus26"
_PLUGINS = "1Password/shell-plugins"
CORPUS = Corpus({_PLUGINS: "plugins"}, session=SESSION, earlier=25)

Toks = list[tuple[str, str]]


class _Eval(Evaluator):
    """The corpus-25 evaluator, with `plugintest.LoadFixture(t, NAME)` read from the plugin's
    `test-fixtures` folder (substituted beforehand as a `val` token)."""

    def _primary(self, toks, i):
        if toks[i][0] == "val":
            return toks[i][1], i + 1
        return super()._primary(toks, i)


def _fixtures(toks: Toks, read) -> Toks:
    """The tokens with each `plugintest.LoadFixture(t, "name")` replaced by the fixture's text."""
    out: Toks = []
    i = 0
    while i < len(toks):
        if ([t[1] for t in toks[i:i + 5]] == ["plugintest", ".", "LoadFixture", "(", "t"]
                and toks[i + 5] == ("op", ",") and toks[i + 6][0] == "str" and toks[i + 7] == ("op", ")")):
            out.append(("val", read(toks[i + 6][1][1:-1])))
            i += 8
            continue
        out.append(toks[i])
        i += 1
    return out


def _key(toks: Toks) -> str:
    """A field name as written: `fieldname.Token` -> `Token`; else the tokens joined."""
    text = "".join(t[1] for t in toks)
    return text.split(".", 1)[1] if text.startswith("fieldname.") else text


def _entries(toks: Toks) -> list[tuple[Toks, Toks]]:
    """The `key: value` entries of a composite literal's body (keys of any form)."""
    out = []
    for part in _split(toks):
        depth = 0
        for k, t in enumerate(part):
            if t[0] == "op" and t[1] in "([{":
                depth += 1
            elif t[0] == "op" and t[1] in ")]}":
                depth -= 1
            elif depth == 0 and t == ("op", ":"):
                out.append((part[:k], part[k + 1:]))
                break
    return out


def _body(toks: Toks) -> Toks | None:
    """The body of a composite literal `Type{...}` or `{...}` (None for `nil` and the like)."""
    if "{" not in [t[1] for t in toks]:
        return None
    start = [t[1] for t in toks].index("{")
    return toks[start + 1:_close(toks, start)]


def secret_fields(repo: str, head: str, paths: list[str]) -> set[str]:
    """The field names a plugin's credential schemas mark `Secret: true`."""
    found = set()
    for path in paths:
        toks = tokens(show(repo, head, path))
        for i, t in enumerate(toks):
            if t != ("op", "{"):
                continue
            fields = _fields(toks[i + 1:_close(toks, i)])
            if fields and "Name" in fields and [x[1] for x in fields.get("Secret", [])] == ["true"]:
                found.add(_key(fields["Name"]))
    return found


def _string_map(ev: Evaluator, toks: Toks | None) -> list[tuple[str, str]]:
    body = _body(toks) if toks else None
    if body is None:
        return []
    return [(str(ev.value(k)), ev.value(v)) for k, v in _entries(body)]


def _field_map(ev: Evaluator, toks: Toks) -> list[tuple[str, str]]:
    body = _body(toks)
    return [] if body is None else [(_key(k), ev.value(v)) for k, v in _entries(body)]


def _candidates(ev: Evaluator, toks: Toks | None) -> list[list[tuple[str, str]]] | None:
    """The `Fields` of each expected candidate (None where none is expected)."""
    body = _body(toks) if toks else None
    if not body:
        return None
    out = []
    for part in _split(body):
        fields = dict((_key(k), v) for k, v in _entries(_body(part) or []))
        out.append(_field_map(ev, fields["Fields"]) if "Fields" in fields else [])
    return out


def _env_text(env: list[tuple[str, str]]) -> str:
    return "\n".join(f"{k}={v}" for k, v in env)


def _file_path(path: str) -> str:
    return path.removeprefix("~/").lstrip("/")


def cases(path: str, toks: Toks, package: Package, secret: set[str], left_out: Counter):
    """(case, text's name, path, text, secrets or None for an upstream negative) for every case."""
    out = []
    func = ""
    for i, t in enumerate(toks):
        if t == ("ident", "func") and toks[i + 1][0] == "ident":
            func = toks[i + 1][1]
        if t[1] not in ("TestImporter", "TestProvisioner") or toks[i - 2][1] != "plugintest":
            continue
        end = _close(toks, i + 1)
        args = _split(toks[i + 2:end])
        table = _body(args[-1])
        ev = _Eval(package, (path, func))
        for key, value in _entries(table or []):
            try:
                name = ev.value(key)
                fields = dict((_key(k), v) for k, v in _entries(_body(value) or []))
                texts: list[tuple[str, str, str]] = []  # (name, path, text)
                if t[1] == "TestImporter":
                    env = _string_map(ev, fields.get("Environment"))
                    files = _string_map(ev, fields.get("Files"))
                    wanted = _candidates(ev, fields.get("ExpectedCandidates"))
                    secrets = None if wanted is None else [v for c in wanted for k, v in c if k in secret and v]
                    left_out["a field that is not secret (a host, a region, a user name, an organization)"] += sum(
                        1 for c in wanted or [] for k, v in c if k not in secret)
                else:
                    items = _field_map(ev, fields["ItemFields"])
                    secrets = [v for k, v in items if k in secret and v]
                    left_out["a field that is not secret (a host, a region, a user name, an organization)"] += sum(
                        1 for k, v in items if k not in secret)
                    output = dict((_key(k), v) for k, v in _entries(_body(fields["ExpectedOutput"]) or []))
                    env = _string_map(ev, output.get("Environment"))
                    files = [(p, ev.value(dict((_key(k), v) for k, v in _entries(_body(c) or []))["Contents"]))
                             for p, c in ((str(ev.value(k)), v) for k, v in _entries(_body(output["Files"]) or []))
                             ] if "Files" in output else []
                    argv = ev.value(output["CommandLine"]) if "CommandLine" in output else []
                    if argv:
                        texts.append(("arguments", "args.txt", shlex.join(argv)))
            except (Unknown, KeyError, ValueError, IndexError):
                left_out["a case built another way (a helper of the test, a value computed at run time)"] += 1
                continue
            if env:
                texts.insert(0, ("environment", "example.txt", _env_text(env)))
            texts[1 if env else 0:1 if env else 0] = [(p, _file_path(p), c) for p, c in files]
            for what, where, text in texts:
                out.append((f"{func}/{name}/{what}", where, text, secrets))
    return out


def plugins(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"{_PLUGINS}@{head}"
    tree = tree_files(repo, head)
    samples: list[dict] = []
    for directory in sorted({p.rsplit("/", 1)[0] for p in tree if p.startswith("plugins/") and p.endswith("_test.go")}):
        code = [p for p in tree if p.rsplit("/", 1)[0] == directory and p.endswith(".go")]
        secret = secret_fields(repo, head, [p for p in code if not p.endswith("_test.go")])

        def read(name: str, directory: str = directory) -> str:
            return show(repo, head, f"{directory}/test-fixtures/{name}")

        toks = {p: _fixtures(tokens(show(repo, head, p)), read) for p in code if p.endswith("_test.go")}
        package = Package(toks)
        for path in sorted(toks):
            for case, where, text, secrets in cases(path, toks[path], package, secret, left_out):
                source = f"{upstream}:{path}#{case}"
                if not text.strip():
                    left_out["an empty text"] += 1
                    continue
                fmt = sniff(text) if where in ("example.txt", "args.txt") else format_of(where, text)
                if secrets is None:
                    samples.append(CORPUS.sample("upstream-negative", source, where, text, fmt=fmt))
                    continue
                present = [s for s in dict.fromkeys(secrets) if s in text]
                if not present:
                    left_out["a text of a positive case holding none of its secrets"] += 1
                    continue
                samples += CORPUS.positive(source, where, text, present, left_out, fmt=fmt)
    return samples


BENIGN_FILES = {
    "plugins": (
        ".github/ISSUE_TEMPLATE/1-new-plugin-request.yml", ".github/ISSUE_TEMPLATE/2-issue-op-cli.yml",
        ".github/ISSUE_TEMPLATE/3-issue-existing-plugin.yml", ".github/ISSUE_TEMPLATE/4-issue-contributing.yml",
        ".github/ISSUE_TEMPLATE/config.yml", ".github/dependabot.yml", ".github/pull_request_template.md",
        ".github/workflows/check-flake.yml", ".github/workflows/pr-check-signed-commits.yml",
        ".github/workflows/test.yaml", ".github/workflows/update-flake-dependencies.yml", ".gitignore",
        ".golangci.yml", "CONTRIBUTING.md", "Makefile", "go.mod", "flake.nix", "nix/home-manager.nix",
        "nix/nixos.nix", "nix/shell-plugins.nix"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return plugins(repos["plugins"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
