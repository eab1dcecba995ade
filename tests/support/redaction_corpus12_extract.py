"""Build the twelfth held-out redaction corpus (tests/fixtures/redaction/corpus12.json.gz).

The first eleven corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec,
talisman, awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger and
newrelic/rusty-hog (Skyscanner/whispers and Plazmaz/leaky-repo set aside). This one comes
from three other projects, none of them read by an earlier corpus, each labelled by its
upstream:

- stelligent/cfn_nag: the specs of its hard-coded password, token and private key rules
  (`spec/custom_rules/*{Password,Secret,Token,PrivateKey,TokenKey}*Rule_spec.rb`; the rule
  of a user name and the ones of KMS key ids and password resets are not about a secret and
  are not read) name, per CloudFormation test template, the logical resource ids the rule
  must report: an empty list is a pass, a non-empty one a fail. The specs written with
  `spec/password_rule_spec_helper.rb` name their templates through that helper's
  `password_rule_test_sets` (a description and `pass`/`fail`) and its file-name rule; the
  others name each template with `read_test_template(...)` followed by
  `expected_logical_resource_ids = %w[...]`. A failing template is a positive whole; its
  secret is the literal it gives a secret-named property (`...Password`, `...Secret`,
  `...Token`, `...PrivateKey`, `...TokenKey`; not a `!Ref`, an intrinsic function or a
  `{{resolve:...}}` reference) or the `Default` of a secret-named parameter; the line that
  holds it is a positive too. A failing template with no such literal (a parameter without
  `NoEcho`, a plain Systems Manager reference: upstream fails how the value arrives, not a
  value it holds) is left out. A passing template is a negative whole, and each of its lines
  that gives a secret-named property or parameter a value a negative.
- aquasecurity/tfsec: the check pages of its secret checks (`docs/checks/.../index.md`,
  generated from each check's bad and good examples, which the check's own tests run):
  the code of "Insecure Example" ("will fail the ... check") is a positive, its secret the
  value the check reads, which `TFSEC_CHECKS` names per check (an environment variable's
  value in user data, a container definition's `DATABASE_PASSWORD` value, a
  `plaintext_value`, an `admin_pass`, a sensitive variable's `default`, a disk's
  customer-supplied `raw_key`); the code of
  "Secure Example" is a negative.
- goodwithtech/dockle: `TestSensitiveVars` in `pkg/assessor/manifest/manifest_test.go`
  gives image history commands and whether `sensitiveVars` must flag them: a flagged one is a
  positive, its secret the value given to the secret-named variable (`PASS`, `password`,
  `SECRET...`); one it must not flag is a negative.
- Benign: ordinary files of the same repositories outside their tests (CI workflows, build
  and tool configuration, Dockerfiles, scripts), each whole (up to 200 lines) and each line
  that names a password, secret, token, key, credential or auth, and the output of
  `git log --format='%H %an %s' -n 15` at each pinned commit.

The sources give fewer positives than earlier corpora (cfn_nag writes the same few values in
every template, and the fixture keeps a text once per set). Upstream's placeholders (`admin`,
`foo`, a `${NAME}` reference) are not secrets by this project's threat model and are left
out. A secret is kept only where the scoring can judge it
(tests/support/redaction_corpus6_extract.py `scorable`, the sixth corpus's rule). Samples
are labelled with the format of their text; the scorer (tests/support/redaction_corpus12.py)
stores each in the four carriers an agent produces. Sources read `owner/repo@commit:path`
(and `#line-n`, `#insecure`, `#secure`, `#TestSensitiveVars-name`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus12_extract.py --cfn-nag DIR --tfsec DIR --dockle DIR

where each DIR is a git clone or bare mirror (its HEAD is the commit the fixture names).
Standard library only.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import format_of, path_for  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402

OUT = HERE / "corpus12.json.gz"
SESSION = "corpus12"
_NAMES = {"stelligent/cfn_nag": "cfn-nag", "aquasecurity/tfsec": "tfsec", "goodwithtech/dockle": "dockle"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=11)


# -- cfn_nag ----------------------------------------------------------------------------------------------------

CFN_RULES = "spec/custom_rules/"
CFN_HELPER = "spec/password_rule_spec_helper.rb"
_CFN_SECRET_RULE = re.compile(r"(Password|Secret|Token|PrivateKey|TokenKey|Credentials)\w*Rule_spec\.rb$")
_CFN_NOT_SECRET_RULE = re.compile(r"Username|PasswordReset|Kms|KMS")
_CFN_READ = re.compile(r"read_test_template\(\s*((?:'[^']*'\s*\\?\s*)+)\)")
_CFN_EXPECTED = re.compile(r"expected_logical_resource_ids\s*=\s*%w\[([^\]]*)\]")
_CFN_SETTING = re.compile(r"^(resource_type|password_property|sub_property_name|test_template_type)\s*=\s*"
                          r"(?:'([^']*)'|nil)\s*$", re.M)
_CFN_SETS = re.compile(r"def password_rule_test_sets\s*\{(.*?)\}", re.S)
_CFN_SECRET_KEY = r"\w*?(?:Password|Secret|Token|PrivateKey|TokenKey)"
# `Key: value` / `"Key": "value",` (a list item's dash allowed): a property or parameter name and its value
_CFN_PAIR = re.compile(r"^\s*(?:-\s+)?([\"']?)(\w+)\1\s*:\s*(.*?)\s*,?\s*$")
_CFN_PARAM = re.compile(r"^  ([\"']?)(\w+)\1\s*:\s*\{?\s*$")


def _snake(name: str) -> str:
    """The helper's file-name rule: `MasterUserPassword` -> `master_user_password`."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()


def _cfn_helper_templates(spec: str, sets: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(template path, pass/fail) of a spec written with the password rule helper."""
    got = {m.group(1): m.group(2) for m in _CFN_SETTING.finditer(spec)}
    resource = got["resource_type"].replace("AWS::", "").replace("::", "_").lower()
    kind = got["test_template_type"]
    prop = _snake(got["password_property"]) + ("_" + _snake(got["sub_property_name"])
                                               if got.get("sub_property_name") else "")
    return [(f"spec/test_templates/{kind}/{resource}/{resource}_{prop}_{desc.replace(' ', '_').lower()}.{kind}",
             result) for desc, result in sets]


def _cfn_value(value: str) -> str:
    """A literal value, quotes taken off; '' for a reference, a function, a map or a list."""
    if not value or value[0] in "!{[&*|>" or "{{resolve" in value or value.startswith(("Ref", "Fn::")):
        return ""
    if value[0] in "\"'" and value[-1:] == value[0] and len(value) > 1:
        value = value[1:-1]
    return "" if "{{resolve" in value or not value.strip() else value


def _cfn_pairs(text: str, references: bool = False) -> list[tuple[int, str, str]]:
    """(line number, name, literal) of each secret-named property, and of the `Default` of each
    secret-named parameter; with `references`, the ones given a reference or function as well."""
    found = []
    in_parameters = False
    param = ""
    for i, line in enumerate(text.split("\n"), 1):
        if re.match(r"^[\"']?Parameters[\"']?\s*:", line.strip()) and line[:1] in "\"'P ":
            in_parameters = line[:1] != " " or line.startswith('  "Parameters"')
        elif re.match(r"^[\"']?(Resources|Outputs|Conditions|Mappings)[\"']?\s*:", line.strip()):
            in_parameters = False
        if in_parameters and (m := _CFN_PARAM.match(line) or re.match(r'^    "(\w+)"\s*:\s*\{\s*$', line)):
            param = m.group(m.lastindex)
        m = _CFN_PAIR.match(line)
        if not m:
            continue
        name, value = m.group(2), _cfn_value(m.group(3))
        if references and not value and m.group(3).strip("{[ ") and not m.group(3).lstrip().startswith("|"):
            value = m.group(3)
        if not value:
            continue
        if re.fullmatch(_CFN_SECRET_KEY, name) or (
                in_parameters and name == "Default" and re.fullmatch(_CFN_SECRET_KEY, param)):
            found.append((i, name, value))
    return found


def cfn_nag(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"stelligent/cfn_nag@{head}"
    present = set(tree_files(repo, head))
    sets = [(desc, result) for desc, result in re.findall(r"'([^']+)':\s*'(pass|fail)'",
                                                          _CFN_SETS.search(show(repo, head, CFN_HELPER)).group(1))]
    named: dict[str, str] = {}
    for spec_path in sorted(p for p in present if p.startswith(CFN_RULES) and _CFN_SECRET_RULE.search(p)):
        if _CFN_NOT_SECRET_RULE.search(spec_path.rsplit("/", 1)[1]):
            continue
        spec = show(repo, head, spec_path)
        if "password_rule_test_sets" in spec:
            templates = _cfn_helper_templates(spec, sets)
        else:
            templates = []
            for m in _CFN_READ.finditer(spec):
                path = "spec/test_templates/" + "".join(re.findall(r"'([^']*)'", m.group(1)))
                expected = _CFN_EXPECTED.search(spec, m.end())
                templates.append((path, "fail" if expected and expected.group(1).split() else "pass"))
        for path, result in templates:
            if path not in present:
                left_out["a cfn_nag template a spec names that is not in the tree"] += 1
                continue
            if named.get(path, result) != result:
                raise SystemExit(f"cfn_nag: {path} both passes and fails")
            named[path] = result
    samples = []
    for path in sorted(named):
        text = show(repo, head, path).rstrip("\n")
        file_name = path.rsplit("/", 1)[1]
        fmt = format_of(path, text)
        lines = text.split("\n")
        pairs = _cfn_pairs(text)
        if named[path] == "pass":
            samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}", file_name, text, fmt=fmt))
            for i, _, _ in _cfn_pairs(text, references=True):
                samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}#line-{i}", file_name,
                                             lines[i - 1].strip().rstrip(","), fmt=fmt))
            continue
        secrets = [v for _, _, v in pairs if not placeholder(v)]
        left_out["a cfn_nag literal that is a placeholder"] += len(pairs) - len(secrets)
        if not secrets:
            left_out["a failing cfn_nag template with no literal secret (a parameter without NoEcho, an SSM reference)"] += 1
            continue
        for i, _, v in pairs:
            if v in secrets:
                samples += CORPUS.positive(f"{upstream}:{path}#line-{i}", file_name, lines[i - 1].strip().rstrip(","),
                                           [v], left_out, fmt=fmt)
        samples += CORPUS.positive(f"{upstream}:{path}", file_name, text, secrets, left_out, fmt=fmt)
    return samples


# -- tfsec ------------------------------------------------------------------------------------------------------

TFSEC_DOCS = "docs/checks/"
# per secret check, the value it reads in its insecure example: (check page, a pattern whose group 1 is the value)
TFSEC_CHECKS = {
    "aws/autoscaling/no-secrets-in-user-data": r"AWS_SECRET_ACCESS_KEY=(\S+)",
    "aws/ec2/no-secrets-in-launch-template-user-data": r"AWS_SECRET_ACCESS_KEY=(\S+)",
    "aws/ec2/no-secrets-in-user-data": r"AWS_SECRET_ACCESS_KEY=(\S+)",
    "aws/autoscaling/no-sensitive-info": r"DATABASE_PASSWORD=\\?\"([^\"\\]+)\\?\"",
    "aws/ec2/no-sensitive-info": r"DATABASE_PASSWORD=\\?\"([^\"\\]+)\\?\"",
    "azure/compute/no-secrets-in-custom-data": r"DATABASE_PASSWORD=\\?\"([^\"\\]+)\\?\"",
    "cloudstack/compute/no-sensitive-info": r"DATABASE_PASSWORD=\\?\"([^\"\\]+)\\?\"",
    "aws/ecs/no-plaintext-secrets": r"\"name\":\s*\"DATABASE_PASSWORD\",\s*\"value\":\s*\"([^\"]+)\"",
    "github/actions/no-plain-text-action-secrets": r"plaintext_value\s*=\s*\"([^\"]+)\"",
    "openstack/compute/no-plaintext-password": r"admin_pass\s*=\s*\"([^\"]+)\"",
    "general/secrets/no-plaintext-exposure": r"default\s*=\s*\"([^\"]+)\"",
    "google/compute/disk-encryption-no-plaintext-key": r"raw_key\s*=\s*\"([^\"]+)\"",
}
_TFSEC_EXAMPLE = re.compile(r"### (Insecure|Secure) Example\n\nThe following example will (fail|pass) the ([\w-]+) "
                            r"check\.\n```terraform\n(.*?)\n```", re.S)


def _dedent(code: str) -> str:
    lines = [ln.rstrip() for ln in code.strip("\n").split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    indent = min((len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()), default=0)
    return "\n".join(ln[indent:] if ln[:indent].strip() == "" else ln for ln in lines)


def tfsec(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"aquasecurity/tfsec@{head}"
    samples = []
    for check, pattern in sorted(TFSEC_CHECKS.items()):
        path = f"{TFSEC_DOCS}{check}/index.md"
        page = show(repo, head, path)
        examples = _TFSEC_EXAMPLE.findall(page)
        if [(kind, verdict) for kind, verdict, _, _ in examples] != [("Insecure", "fail"), ("Secure", "pass")]:
            raise SystemExit(f"tfsec: {path} has not one insecure and one secure example")
        for kind, _, _, code in examples:
            code = _dedent(code)
            if kind == "Secure":
                samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}#secure", "main.tf", code,
                                             fmt="hcl"))
                continue
            secrets = re.findall(pattern, code)
            if not secrets:
                raise SystemExit(f"tfsec: no value in the insecure example of {check}")
            samples += CORPUS.positive(f"{upstream}:{path}#insecure", "main.tf", code, secrets, left_out, fmt="hcl")
    return samples


# -- dockle -----------------------------------------------------------------------------------------------------

DOCKLE_TEST = "pkg/assessor/manifest/manifest_test.go"
_DOCKLE_CASE = re.compile(r"^\s*\"([^\"]+)\":\s*\{cmd:\s*(\"(?:[^\"\\]|\\.)*\"|`[^`]*`),\s*expected:\s*(true|false)\}",
                          re.M)
_DOCKLE_VALUE = re.compile(r"(?i)\b\w*(?:pass|secret)\w*=(\"[^\"]*\"|[^\s\"]+)")


def dockle(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"goodwithtech/dockle@{head}"
    src = show(repo, head, DOCKLE_TEST)
    body = src[src.index("func TestSensitiveVars("):]
    body = body[:body.index("\nfunc ")]
    samples = []
    for name, literal, verdict in _DOCKLE_CASE.findall(body):
        cmd = literal[1:-1] if literal.startswith("`") else ast.literal_eval(literal)
        source = f"{upstream}:{DOCKLE_TEST}#TestSensitiveVars-{name.replace(' ', '-')}"
        fmt = "shell"
        if verdict == "false":
            samples.append(CORPUS.sample("upstream-negative", source, path_for(fmt), cmd, fmt=fmt))
            continue
        values = [v.strip('"') for v in _DOCKLE_VALUE.findall(cmd)]
        secrets = [v for v in values if v and not placeholder(v)]
        left_out["a dockle value that is a placeholder"] += len(values) - len(secrets)
        if not secrets:
            left_out["a flagged dockle command with no secret left (its value a placeholder)"] += 1
            continue
        samples += CORPUS.positive(source, path_for(fmt), cmd, secrets, left_out, fmt=fmt)
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "cfn-nag": (".devcontainer/Dockerfile", ".devcontainer/devcontainer.json", ".github/release-drafter.yml",
                ".github/workflows/codeql-analysis.yml", ".github/workflows/gempush.yml",
                ".github/workflows/github-action.yml", ".github/workflows/tests-linting.yml",
                ".pre-commit-hooks.yaml", ".rubocop.yml", "Dockerfile", "Gemfile", "Rakefile", "action.yml",
                "cfn-nag.gemspec", "github-action/entrypoint.sh", "scripts/deploy_local.sh", "scripts/publish.sh",
                "scripts/rspec.sh", "scripts/setup_and_run_end_to_end_tests.sh"),
    "tfsec": (".github/dependabot.yml", ".github/labeler.yml", ".github/workflows/gh_release.yml",
              ".github/workflows/golangci-lint.yml", ".github/workflows/release.yml", ".github/workflows/test.yml",
              ".golangci.yml", ".goreleaser.yml", ".pre-commit-hooks.yaml", "Dockerfile", "Dockerfile.ci",
              "Makefile", "mkdocs.yml", "scripts/build.sh", "scripts/install.sh", "scripts/publish-docs.sh",
              "scripts/update-wiki.sh"),
    "dockle": (".deepsource.toml", ".dockleignore", ".github/dependabot.yml", ".github/workflows/build-scan-on-push.yml",
               ".github/workflows/govulncheck.yml", ".github/workflows/releasebuild.yml", "Dockerfile",
               "Dockerfile.releaser", "config/config.go", "goreleaser.yaml"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    samples = cfn_nag(repos["cfn-nag"], left_out)
    samples += tfsec(repos["tfsec"], left_out)
    return samples + dockle(repos["dockle"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
