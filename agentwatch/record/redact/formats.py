"""The format-aware text layer: name/value pairs in the text formats an agent reads or prints.

The rule walk (rules.py) reads a string line by line, as code or prose. A file read
or a command's output is often a configuration format, where `password = letmein`
or `password: letmein` is a value even though, in code, `letmein` would be a
variable. This layer recognises what a text is (by the path it came from when the
record names one, and by sniffing its content), extracts name/value pairs with a
tolerant tokenizer per format, and hands every pair to one policy
(`RuleSet.secret_name` for the name, `secret_value` for the value), wherever the pair
came from. It only ever adds spans to what the line rules mask, so a text no
tokenizer understands is still read by the line rules (it never fails open).

Formats: JSON (parsed with the standard library's `json`, also when it follows a
line of other output), YAML, INI, `.env` and Java properties (one line tokenizer: a
name, `=` or `:`, a value; INI continuation lines; YAML block lists and scalars under
a secret name; YAML `name:`/`value:` siblings), XML and plists, PHP, Python,
JavaScript, Go and shell source (calls and declarations that hold a literal:
`define('DB_PASSWORD', '...')`, `getenv("PASSWORD", "...")`, `$cfg['db_password'] = '...'`,
Go's `const a, b string = "...", "..."`, a fallback after `or`/`||`/`??`), and the
credential files `.htpasswd`, `.pgpass` and Rails' `master.key`. YAML is read with a
tokenizer rather than a YAML library: a text an agent prints is often a fragment,
and the tokenizer keeps the byte offsets the masks need.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from itertools import islice
from typing import Iterator, Protocol

Span = tuple[int, int, str]
KIND = "assignment"


class RuleSet(Protocol):
    """What the layer asks of the rule set (rules.RuleSet): the one judge of names and of code."""

    def secret_name(self, name: str) -> bool: ...

    def placeholder(self, value: str) -> bool: ...

    def code_benign(self, value: str, name: str, quoted: bool, literal: bool = False) -> bool: ...

    def message(self, value: str) -> bool: ...

    def structural(self, value: str) -> bool: ...

    def pair_password(self, name: str, value: str) -> bool: ...

# --- the value policy ---------------------------------------------------------------------------
# References and placeholders stand for a secret kept elsewhere: their bytes name it, not hold it.
_REFERENCE = re.compile(
    r"""\$\{[^}\n]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}\n]*\}\}|\{[A-Za-z_][A-Za-z0-9_.]*\}|%\([A-Za-z_]+\)[sd]"""
    r"""|%[sdrvqx]|\{\d*\}|<[^<>\n]*>|![A-Z][A-Za-z]+\b.*|!!(?:str|null|bool|int)\b.*|%[A-Za-z_][A-Za-z0-9_]*%"""
    r"""|#\{[^}\n]*\}|@[A-Za-z_][A-Za-z0-9_.]*@|\$\([^)\n]*\)|`[^`]*`""",
    re.ASCII,
)
_NOT_VALUES = frozenset({
    "", "null", "none", "nil", "~", "true", "false", "yes", "no", "on", "off", "undefined", "unset", "(unset)", "(none)",
    "required", "optional",
    "changeme", "change_me", "redacted", "secret", "password", "token", "xxx", "todo", "tbd", "n/a", "na", "empty",
    "placeholder", "example", "dummy", "string", "str", "[]", "{}", "''", '""', "|", ">", "|-", ">-",
})
_FILLER = re.compile(r"(?i)^(?:x+|\*+|\.+|-+|_+|#+|\?+|0+|<.*>|your[-_ ].*|.*[-_]here|replace[-_ ]?me.*)$")


# Words a program does use as its key or password (`jwt.sign(p, "secret")`): stand-ins under a
# name, but the secret itself in the argument a call takes its key from.
_WEAK = frozenset({"secret", "password", "token", "changeit", "changeme", "change_me"})


# HTTP authentication schemes (IANA's HTTP Authentication Schemes registry; NTLM and AWS's Signature V4): under
# an auth name, a scheme's name alone is chosen before its credentials (`foo ? 'Bearer' : 'OAuth'`), not one.
AUTH_SCHEMES = frozenset({"basic", "bearer", "concealed", "digest", "dpop", "gnap", "hoba", "mutual", "negotiate", "oauth",
                          "privatetoken", "scram-sha-1", "scram-sha-256", "vapid", "ntlm", "aws4-hmac-sha256"})


def auth_scheme_alone(value: str, name: str) -> bool:
    """A scheme's name alone under an auth name or another scheme's (`foo ? 'Bearer' : 'OAuth'`)."""
    low_name = name.lower()
    return value.strip("\"'`").lower() in AUTH_SCHEMES and ("auth" in low_name or low_name in AUTH_SCHEMES)


ENV_VAR_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # an environment variable's or a constant's name
_NAME_WORD = re.compile(r"[a-z]+")


_DOLLAR_RUN = re.compile(r"\$\{?([A-Za-z][A-Za-z0-9]{15,})\}?")
_LETTER_DIGIT = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")


def key_run_after_dollar(value: str) -> bool:
    """`$A3ae68d9f8cc…`: a value that starts with `$`, not a reference to a variable.

    After the `$` stand sixteen or more letters and digits with no separator, alternating six
    times or more; a variable's name is words (`$DB_PASSWORD`, `${awsSecretKey2}`).
    """
    m = _DOLLAR_RUN.fullmatch(value)
    return m is not None and len(_LETTER_DIGIT.findall(m.group(1))) >= 6


def secret_value(ruleset: RuleSet, value: str, name: str, argument: bool = False, text: str = "") -> bool:
    """Is this value, under a secret name in a configuration format, a secret?

    Everything is, except what cannot hold one: an empty value, a boolean or null, a
    reference or placeholder (`${VAR}`, `{VAR}`, `{{ x }}`, `<your-key>`, `%s`, `!Ref X`,
    `$(cmd)`), filler (`xxxx`, `****`, `YOUR_KEY_HERE`), the name itself, a count under
    a token-count name, and a mask already made.
    """
    v = value.strip()
    if not any(c.isalnum() for c in v):
        return False  # punctuation only
    low = v.lower()
    if argument and low in _WEAK:
        return True  # a call's key argument: the word is the key
    if low in _NOT_VALUES or _FILLER.match(v) or v.startswith("[REDACTED:"):
        return False
    if auth_scheme_alone(v, name) or name == "value" and low in AUTH_SCHEMES:
        return False  # a scheme's name alone, also as a header pair's value (`{"name": "Authorization", "value": "Basic"}`)
    scheme, _, credentials = v.partition(" ")
    if scheme.lower() in AUTH_SCHEMES and credentials.strip():
        v = credentials.strip()  # `Bearer ${TOKEN}`: the credentials decide, not the scheme before them
    if not key_run_after_dollar(v) and (_REFERENCE.fullmatch(v) or v.startswith(
            ("${", "{{", "$(", "<%", "#{", "!Ref", "!Sub", "!GetAtt", "!ImportValue"))):
        return False
    bare = name.rsplit(".", 1)[-1].strip("\"'$[]").lower()
    if low.strip("\"'") in (bare, name.lower()):
        return False  # `password = password`: the name, not a value
    if ENV_VAR_NAME.fullmatch(v) and any(w in low for w in _NAME_WORD.findall(bare) if len(w) >= 4):
        return False  # `server-password: MAVEN_PASSWORD`: the variable that holds it (actions/setup-java's inputs)
    if v.isdigit() and "token" in name.lower() and not re.search(r"(?i)pass|pwd|secret|pin", name):
        return False  # max_tokens: 4096
    if v.isdigit() and text and number_table(text):
        return False  # a column of numbers: what each is for, not a password
    if ruleset.structural(v):
        return False  # an opening bracket, a version range (rules.structural_value)
    if ruleset.message(v):
        return False  # a sentence for a person (a translation, a form's label), as in the line rules
    return not ruleset.placeholder(v)


_PAIR_LINE = re.compile(r"(?m)^[ \t]*(?:- )?[\"']?[A-Za-z_][\w.\-]*[\"']?[ \t]*[:=][ \t]*(?P<v>\S[^\n]*?)[ \t]*$")


@lru_cache(maxsize=16)  # asked once per whole-number value of a text: the text is read once
def number_table(s: str) -> bool:
    """Is s a table of numbers: five or more `name: value` lines, four in five of them a whole number?

    A map of check names to costs, ports or limits (`basic_auth_password: 300000`,
    `session_secret: 600000`) names what each number is for; a password that is all digits
    does not stand in a column of numbers.
    """
    values = [m.group("v") for m in islice(_PAIR_LINE.finditer(s), 4096)]
    return len(values) >= 5 and sum(v.isdigit() for v in values) >= 0.8 * len(values)


# --- recognising a format -----------------------------------------------------------------------
_EXT = {
    "env": "kv", "ini": "kv", "cfg": "kv", "conf": "kv", "cnf": "kv", "properties": "kv", "toml": "kv",
    "yaml": "yaml", "yml": "yaml", "json": "json", "xml": "xml", "plist": "xml", "config": "xml", "csproj": "xml",
    "tf": "kv", "hcl": "kv", "tfvars": "kv", "php": "code", "py": "code", "js": "code", "ts": "code",
    "go": "code", "sh": "kv", "bash": "kv", "zsh": "kv", "rb": "code", "java": "code", "kt": "code", "cs": "code",
    "txt": "text", "text": "text", "log": "text", "md": "text", "markdown": "text", "rst": "text", "out": "text",
}
# Source code whose unquoted words are code (a shell script's are words: `export TOKEN=abc`).
_SOURCE_EXT = frozenset({"py", "js", "jsx", "ts", "tsx", "mjs", "cjs", "java", "kt", "go", "rs", "cs", "rb", "swift",
                         "scala", "c", "h", "cc", "cpp", "hpp", "vb", "dart", "php"})


def source_code(path: str) -> bool:
    """Is the file at path source code in a language where an unquoted word is a name, not a string?"""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[-1].lower() in _SOURCE_EXT and "." in path.rsplit("/", 1)[-1]


# Kinds of file that are not source code: an unquoted value under a secret name in them is a literal.
LITERAL_KINDS = frozenset({"kv", "yaml", "json", "xml", "text"})
_FILES = {".htpasswd": "htpasswd", "htpasswd": "htpasswd", ".pgpass": "pgpass", "master.key": "masterkey",
          ".env": "kv", ".npmrc": "kv", ".pypirc": "kv", ".gitconfig": "kv", ".s3cfg": "kv", "credentials": "kv",
          ".my.cnf": "kv", ".bash_profile": "kv", ".bashrc": "kv", ".profile": "kv", ".zshrc": "kv",
          "dockerfile": "kv"}
PATH_MARKERS = (b".htpasswd", b".pgpass", b"master.key")  # files whose format only their path tells
PATH_MARKER_TEXTS = tuple(m.decode("ascii") for m in PATH_MARKERS)


@lru_cache(maxsize=4096)
def by_path(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    if name in _FILES:
        return _FILES[name]
    if name.startswith(".env"):
        return "kv"
    ext = name.rsplit(".", 1)[-1] if "." in name.lstrip(".") else ""
    return _EXT.get(ext, "")


_YAML_LINE = re.compile(r"^[ \t]*(?:- )?[\"']?[A-Za-z_][\w.\-/ ]*[\"']?:(?:[ \t]|$)", re.M)
# `.npmrc` scopes a setting to a registry: `//registry.example/:_authToken=...` (npm docs, npmrc, "Auth related configuration")
_NPM_SCOPE = r"(?://[^\s=]*:(?=[A-Za-z_]))?"
_KV_LINE = re.compile(r"^[ \t]*(?:export[ \t]+)?" + _NPM_SCOPE + r"[A-Za-z_][\w.\-/]*[ \t]*=", re.M)
_CODE_HINT = re.compile(r"<\?php|^\s*(?:def|class|import|from|package|func|function|const|var|let)\b|define\(|\$\w+\[",
                        re.M)


def sniff(text: str) -> tuple[str, ...]:
    """The formats a text may be, most specific first (several: a fragment can be read more ways than one)."""
    head = text.lstrip()[:1]
    out: list[str] = []
    if head in "{[" and head:
        out.append("json")
    if head == "<" or "</" in text:
        out.append("xml")
    if _CODE_HINT.search(text):
        out.append("code")
    yaml_lines = len(_YAML_LINE.findall(text, 0, 65536))
    kv_lines = len(_KV_LINE.findall(text, 0, 65536))
    if yaml_lines and yaml_lines >= kv_lines:
        out.append("yaml")
    if kv_lines or re.search(r"^\[[^\]\n]+\][ \t]*$", text, re.M):
        out.append("kv")
    if "{" in text and "json" not in out:
        out.append("json-inside")
    return tuple(out)


# --- the layer ------------------------------------------------------------------------------------
MAX_TEXT = 1 << 20  # longer texts are left to the line rules (the per-event bound keeps work linear)
MAX_JSON_TRIES = 64  # places in one text where a JSON value is tried
MAX_CALLS = 256  # calls of one kind whose arguments are read in one text (each read may go 2 KiB far)


PATH_FORMATS = frozenset({"htpasswd", "pgpass", "masterkey"})
PAIR_PASSWORD_NAMES = ("pass", "pwd", "pw")  # names of a password only as a pair's name (rules.pair_password)


def literal_text(s: str, path: str) -> bool:
    """Is s, from this path, a file that is not code (LITERAL_KINDS, and no code by its content)?"""
    return by_path(path) in LITERAL_KINDS and "code" not in sniff(s)


def heredoc_path_spans(s: str) -> list[Span]:
    """`path_spans` of each here-document that writes a credential file (`cat > .pgpass <<EOF`)."""
    out: list[Span] = []
    for m in _HEREDOC.finditer(s):
        base = m.start("body")
        out += [(a + base, b + base, k) for a, b, k in path_spans(m.group("body"), m.group("path").strip("\"'"))]
    return out


def path_spans(s: str, path: str) -> list[Span]:
    """Credential files whose format only their path tells: every secret in them, names or not."""
    kind = by_path(path)
    if kind == "htpasswd":
        return list(_htpasswd(s))
    if kind == "pgpass":
        return list(_pgpass(s))
    if kind == "masterkey":
        m = re.fullmatch(r"\s*([0-9a-f]{32})\s*", s)
        if m:
            return [(m.start(1), m.end(1), "rails_master_key")]
    return []


# A here-document that writes a file names its path: `cat > FILE <<'EOF'` ... `EOF` (also `tee FILE`).
_HEREDOC = re.compile(r"(?:\bcat[ \t]*>>?|\btee(?:[ \t]+-a)?)[ \t]*(?P<path>[^\s<>|;&]+)[ \t]*<<-?[ \t]*(?P<q>['\"]?)"
                      r"(?P<tag>[A-Za-z_][A-Za-z0-9_]*)(?P=q)[^\n]*\n(?P<body>[\s\S]*?)\n[ \t]*(?P=tag)[ \t]*(?:\n|$)")


def spans(ruleset: RuleSet, s: str, path: str = "") -> list[Span]:
    """The value spans of every secret pair this layer finds in s (a text holding a secret name)."""
    if len(s) > MAX_TEXT or len(s) < 5:
        return []
    out: list[Span] = []
    if not path and "<<" in s:
        bodies: list[tuple[int, int]] = []
        for m in _HEREDOC.finditer(s):  # the file a command writes: read its body as that file
            body_path = m.group("path").strip("\"'")
            if by_path(body_path):
                base = m.start("body")
                out += [(a + base, b + base, k) for a, b, k in spans(ruleset, m.group("body"), body_path)]
                bodies.append(m.span("body"))
        for a, b in bodies:  # the rest of the command is read without them: their path told their format
            s = s[:a] + re.sub(r"[^\n]", " ", s[a:b]) + s[b:]
    kind = by_path(path) if path else ""
    formats = sniff(s)
    code = ("code" in formats or kind == "code") and kind not in ("kv", "yaml")
    literal = kind in LITERAL_KINDS and not code
    if code:
        # Source code (by its path or its content): a dict entry or a keyword argument is not a
        # configuration pair; the line rules read its assignments, `_code` its literals.
        formats = tuple(f for f in formats if f not in ("kv", "yaml"))
    if kind in ("kv", "yaml", "json", "xml", "code") and kind not in formats:
        formats = (kind, *formats)
    config = kind in ("kv", "yaml") or _config_like(s)
    out += _code(ruleset, s)  # calls and declarations with literals: specific enough for any text
    if code:
        out += _secret_statements(ruleset, s)
    if "Key " in s and "-----" in s:
        out += _vault_table(ruleset, s)
    if any(bar in s for bar in TABLE_BARS):
        out += _tables(ruleset, s)
    if "(" in s:
        out += _calls(ruleset, s)  # setters named for a secret (the table of calls runs by its own keywords)
    for fmt in formats:
        if fmt == "json":
            out += _json(ruleset, s, whole=True)
        elif fmt == "json-inside":
            out += _json(ruleset, s, whole=False)
        elif fmt == "xml":
            out += _xml(ruleset, s)
        elif fmt == "yaml":
            out += _yaml(ruleset, s, config, literal)
            if "Parameters:" in s:
                out += _cfn_parameters(ruleset, s)
        elif fmt == "kv":
            out += _kv(ruleset, s, config, literal)
    return out


def _config_like(s: str) -> bool:
    """Two or more lines of `name = value` or `name: value`, no code: a configuration text without a path."""
    if s.count("\n") < 1 or _CODE_HINT.search(s):
        return False
    return len(_KV_LINE.findall(s, 0, 65536)) + len(_YAML_LINE.findall(s, 0, 65536)) >= 2


_CODE_VALUE = re.compile(r"[A-Za-z_][\w.]*\(.*|(?:self|this|os|process|env|config|settings|cls|ctx|args|opts|options)\.\S*"
                         r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|.*\s(?:\+|-|\*|/|if|else|and|or|\?|:)\s.*")


def _unquoted_ok(val: str, config: bool, prose_ok: bool = True) -> bool:
    """An unquoted value that is not code (a call, an attribute, an expression) nor, outside config, prose."""
    if _CODE_VALUE.fullmatch(val):
        return False
    return prose_ok or " " not in val.strip()


# -- JSON ------------------------------------------------------------------------------------------
_PAIR_NAMES = frozenset({"name", "key", "parametername", "parameterkey", "variable", "var", "param", "option",
                         "optionname", "setting", "envname", "env", "id"})
_PAIR_VALUES = frozenset({"value", "parametervalue", "default", "defaultvalue", "secretvalue", "val"})


# HTTP's credential headers (RFC 9110, 11.6.2 and 11.7.2) as a pair's name: a HAR file's or an HTTP
# client's header list (`{"name": "Authorization", "value": "Bearer …"}`), a container's environment.
PAIR_HEADER_NAMES = ("authorization", "proxy-authorization")


def pair_name(ruleset: RuleSet, name: str) -> bool:
    """Does a name/value pair's name (`{"key": "PASS", "value": …}`) say its value is a secret?

    As a configuration pair's name, `pass` and `pwd` are a password (`PAIR_PASSWORD_NAMES`), and
    a credential header's name names its credentials (`PAIR_HEADER_NAMES`).
    """
    bare = name.strip().lower()
    return ruleset.secret_name(name) or bare in PAIR_PASSWORD_NAMES or bare in PAIR_HEADER_NAMES


def _json(ruleset: RuleSet, s: str, whole: bool) -> list[Span]:
    docs: list[object] = []
    if whole:
        try:
            docs.append(json.loads(s))
        except (ValueError, RecursionError):  # not JSON, or nested past the parser: the line rules read it
            whole = False
    if not whole:
        decoder = json.JSONDecoder()
        tries = 0
        for m in re.finditer(r"(?m)^[ \t]*[\[{]|(?<=[=:] )[\[{]", s):
            tries += 1
            if tries > MAX_JSON_TRIES or len(docs) >= 16:
                break  # a bound on the work per text: each try may read far
            i = m.end() - 1
            try:
                doc, _ = decoder.raw_decode(s, i)
            except (ValueError, RecursionError):
                continue
            if isinstance(doc, (dict, list)) and doc:
                docs.append(doc)
    values: set[str] = set()
    for doc in docs:
        _json_values(ruleset, doc, False, values, 0)
    out: list[Span] = []
    for v in values:
        enc = json.dumps(v, ensure_ascii=False)[1:-1]
        for token in {enc, json.dumps(v)[1:-1]}:
            i = s.find('"' + token + '"')
            while i >= 0:
                out.append((i + 1, i + 1 + len(token), KIND))
                i = s.find('"' + token + '"', i + 1)
    return out


def _json_values(ruleset: RuleSet, node: object, secret: bool, out: set[str], depth: int) -> None:
    if depth > 64:
        return
    if isinstance(node, str):
        if secret and secret_value(ruleset, node, "value"):
            out.add(node)
        return
    if isinstance(node, list):
        for item in node:
            _json_values(ruleset, item, secret, out, depth + 1)
        return
    if not isinstance(node, dict):
        return
    named = len(node) <= 8 and any(
        isinstance(v, str) and k.lower() in _PAIR_NAMES and pair_name(ruleset, v) for k, v in node.items())
    # A secret bundle (Azure Key Vault's `secret show`: an `id` of .../secrets/<name>/<version> beside its `value`)
    named = named or isinstance(node.get("id"), str) and "/secrets/" in node["id"] and "value" in node
    # A CloudFormation parameter marked NoEcho: its Default is the secret ("Parameters", NoEcho)
    noecho = str(node.get("NoEcho", "")).lower() == "true"
    for k, v in node.items():
        sub = secret or ruleset.secret_name(k) or (named and k.lower() in _PAIR_VALUES) or (noecho and k == "Default") or (
            isinstance(v, str) and ruleset.pair_password(k, v))
        if sub and isinstance(v, (int, float)) and not isinstance(v, bool):
            continue  # numbers are left to the structure walk of the document
        _json_values(ruleset, v, bool(sub), out, depth + 1)


# -- key = value: .env, INI, properties, TOML, HCL, shell --------------------------------------------
_KV = re.compile(
    r"^(?P<ind>[ \t]*)(?:export[ \t]+|set[ \t]+|ENV[ \t]+|ARG[ \t]+)?" + _NPM_SCOPE +
    r"(?P<name>[A-Za-z_][\w.\-/]{0,120})[ \t]*(?:=|:(?!//))[ \t]*"
    r"(?P<val>[^\n]*?)[ \t]*$",
    re.M,
)
# A backslash is an escape's first half, never also a character of its own: the two readings of
# `\n` (a backslash and an n) would be tried against each other on every line a quote opens and does not close.
_QUOTED = re.compile(r"""^(?P<q>["'])(?P<v>(?:\\.|(?!(?P=q))[^\\\n])*)(?P=q)""")


def _value_span(line_start: int, val: str, comment: bool = True, member: bool = False) -> tuple[int, int] | None:
    """The span of a value (quotes stripped; an inline comment after a blank dropped).

    A quoted value closes its line in every configuration format read here (a comment may
    follow): `'Slack Token': 'CKV_SECRET_14',` is an entry of a dict or an object in code,
    `password="x", user=...` an argument list, and the line rules read those. A JSON member
    (`member`: a double-quoted name and value) may close with a comma: a line of a JSON object.
    """
    if not val:
        return None
    q = _QUOTED.match(val)
    if q:
        rest = val[q.end():].strip()
        if member and q.group("q") == '"' and rest == ",":
            rest = ""
        if rest and not rest.startswith(("#", ";", "//")):
            return None
        return line_start + q.start("v"), line_start + q.end("v")
    if comment:
        cut = re.search(r"[ \t]+[#;]", val)
        if cut:
            val = val[: cut.start()]
    val = val.rstrip(" \t,;")
    if not val or val[0] in "{[(" or val.endswith(("{", "(", "\\")):
        return None
    return line_start, line_start + len(val)


def _kv(ruleset: RuleSet, s: str, config: bool, literal: bool = False) -> Iterator[Span]:
    for m in _KV.finditer(s):
        name = m.group("name")
        named = ruleset.secret_name(name)
        if not named and not (config and name.lower() in PAIR_PASSWORD_NAMES):
            continue
        val = m.group("val")
        if not val:
            yield from _continuation(ruleset, s, m.end(), len(m.group("ind")), name)
            continue
        span = _value_span(m.start("val"), val)
        if span is None:
            continue
        value = s[span[0]:span[1]]
        quoted = span[0] != m.start("val")
        conf = config or s.startswith("//", m.end("ind"))  # a registry-scoped npmrc line is configuration
        if not named and not ruleset.pair_password(name, value):
            continue  # `pwd = /srv/app`: a directory
        if (quoted or _unquoted_ok(value, conf, conf)) and secret_value(ruleset, value, name, text=s) and (
                conf or not ruleset.code_benign(value, name, quoted, literal)):
            yield span[0], span[1], KIND


def _continuation(ruleset: RuleSet, s: str, pos: int, indent: int, name: str) -> Iterator[Span]:
    """INI values on the lines after `name =`, and YAML lists and block scalars under `name:`: more indented."""
    for m in re.finditer(r"\n([ \t]*)(?:- )?([^\n]*)", s[pos:pos + 4096]):
        ind, body = m.group(1), m.group(2)
        if not body.strip():
            continue
        if len(ind) <= indent or body.lstrip().startswith(("#", ";")):
            if len(ind) <= indent:
                return
            continue
        if re.match(r"[\"']?[A-Za-z_][\w.\- ]{0,120}[\"']?:(?:\s|$)", body):
            return  # a nested mapping: its own names decide
        start = pos + m.start(2)
        span = _value_span(start, body)
        if span and secret_value(ruleset, s[span[0]:span[1]], name):
            yield span[0], span[1], KIND


# -- YAML ------------------------------------------------------------------------------------------
_YAML = re.compile(
    r"^(?P<ind>[ \t]*)(?P<dash>- +)?(?P<qn>[\"']?)(?P<name>[A-Za-z_][\w.\-/ ]{0,120}?)(?P=qn)[ \t]*:(?:[ \t]+(?P<val>[^\n]*?))?[ \t]*$",
    re.M,
)


_CODE_WORD = re.compile(r"(?:if|elif|else|while|for|return|not|and|or|assert|except|case|when|def|class|with|raise)\b")


def _yaml(ruleset: RuleSet, s: str, prose_ok: bool, literal: bool = False) -> Iterator[Span]:
    pending: tuple[int, bool] | None = None  # (indent of a `- name: SECRET` item, seen)
    for m in _YAML.finditer(s):
        name, val = m.group("name"), m.group("val") or ""
        indent = len(m.group("ind")) + len(m.group("dash") or "")
        if val.startswith("!!binary"):
            val = val[8:].lstrip()
        is_pair_name = name.lower() in _PAIR_NAMES and val and pair_name(ruleset, val.strip("\"' "))
        if is_pair_name:
            pending = (indent, True)
        elif m.group("dash"):
            pending = None
        if " " in name and not m.group("qn") and (not prose_ok or _CODE_WORD.match(name)):
            continue  # `if not token:` is code; a plain YAML name may hold blanks in a configuration text
        named = ruleset.secret_name(name) or (prose_ok and name.lower() in PAIR_PASSWORD_NAMES)
        if named or (pending and name.lower() in _PAIR_VALUES and indent == pending[0]):
            if not val or val in ("|", ">", "|-", ">-", "|+", ">+"):
                if not prose_ok:
                    continue  # a block under the name: only in a text that is configuration
                yield from _continuation(ruleset, s, m.end(), len(m.group("ind")), name)
                continue
            start = m.start("val") + (len(m.group("val")) - len(val))
            span = _value_span(start, val, member=m.group("qn") == '"')
            if span is None:
                continue
            value = s[span[0]:span[1]]
            quoted = span[0] != start
            if name.lower() in PAIR_PASSWORD_NAMES and not ruleset.pair_password(name, value):
                continue  # `pwd: /srv/app`: a directory
            if (quoted or _unquoted_ok(value, True, prose_ok)) and secret_value(ruleset, value, name, text=s) and (
                    prose_ok or not ruleset.code_benign(value, name, quoted, literal)):
                yield span[0], span[1], KIND
    for m in re.finditer(r"(?m)^([ \t]*)- +(?:key|name): *[\"']?([^\n\"']+)[\"']? *\n\1  +(?:value|secret): *([^\n]*)$", s):
        pair = m.group(2).strip()
        if ruleset.secret_name(pair) or pair.lower() in PAIR_HEADER_NAMES:
            span = _value_span(m.start(3), m.group(3))
            if span and secret_value(ruleset, s[span[0]:span[1]], m.group(2)):
                yield span[0], span[1], KIND


# -- CloudFormation parameters: NoEcho marks a parameter as sensitive ---------------------------------
_CFN_PARAMETERS = re.compile(r"(?m)^(?P<ind>[ \t]*)Parameters:[ \t]*$")
_CFN_LINE = re.compile(r"(?m)^(?P<ind>[ \t]*)(?P<name>[A-Za-z0-9_]+):[ \t]*(?P<v>[^\n]*?)[ \t]*$")
_NOECHO = re.compile(r"""(?i)^["']?true["']?$""")


def _cfn_parameters(ruleset: RuleSet, s: str) -> Iterator[Span]:
    """The `Default` of a template parameter that is secret: `NoEcho: true` (AWS CloudFormation docs,
    "Parameters": NoEcho masks the value wherever the stack shows it) or a secret name
    (`DBPassword`). The default is the value used when none is given, so it is the secret."""
    for block in _CFN_PARAMETERS.finditer(s):
        base = len(block.group("ind"))
        child: int | None = None
        name, noecho, default = "", False, None
        items: list[tuple[str, bool, tuple[int, int] | None]] = []
        for m in _CFN_LINE.finditer(s, block.end()):
            ind = len(m.group("ind"))
            if ind <= base:
                break
            if child is None:
                child = ind
            if ind == child:
                items.append((name, noecho, default))
                name, noecho, default = m.group("name"), False, None
            elif m.group("name") == "NoEcho":
                noecho = bool(_NOECHO.match(m.group("v")))
            elif m.group("name") == "Default" and m.group("v"):
                default = _value_span(m.start("v"), m.group("v"))
        items.append((name, noecho, default))
        for name, noecho, span in items:
            if span and (noecho or ruleset.secret_name(name)) and secret_value(ruleset, s[span[0]:span[1]], name):
                yield span[0], span[1], KIND


# -- XML and plists --------------------------------------------------------------------------------
_XML_PAIRS = (
    # <key>password</key><string>...</string> (plist); <name>password</name><value>...</value> (Hadoop)
    re.compile(r"<(?:key|name)>\s*(?P<name>[^<>]{1,120}?)\s*</(?:key|name)>\s*<(?P<t>string|value|data)>"
               r"\s*(?P<v>[^<]{1,2048}?)\s*</(?P=t)>"),
    # <entry key="password">...</entry>, <property name="password">...</property>
    re.compile(r"<\w+\s+(?:key|name)=[\"'](?P<name>[^\"'<>]{1,120})[\"'][^>]*>\s*(?P<v>[^<]{1,2048}?)\s*</"),
    # <add key="DbPassword" value="..."/>, <property name="password" value="..."/>
    re.compile(r"<\w+\s+(?:key|name)=[\"'](?P<name>[^\"'<>]{1,120})[\"']\s+value=[\"'](?P<v>[^\"']{1,2048})[\"']"),
    # <password>...</password>
    re.compile(r"<(?P<name>[A-Za-z_][\w.:-]{0,80})(?:\s[^<>]*)?>\s*(?P<v>[^<\s][^<]{0,2048}?)\s*</(?P=name)>"),
    # password="..." as an attribute
    re.compile(r"<[^<>]*?\s(?P<name>[A-Za-z_][\w.:-]{0,80})=(?P<q>[\"'])(?P<v>[^\"'<>]{1,2048})(?P=q)"),
)


def _xml(ruleset: RuleSet, s: str) -> Iterator[Span]:
    for rx in _XML_PAIRS:
        for m in rx.finditer(s):
            name, v = m.group("name"), m.group("v")
            if (ruleset.secret_name(name) or name.lower() in PAIR_PASSWORD_NAMES) and secret_value(ruleset, v, name):
                yield m.start("v"), m.end("v"), KIND  # `<pwd>…</pwd>`, `<Pass>…</Pass>`: a configuration pair's name


# -- source code: calls and declarations that hold a literal ---------------------------------------
_STR = r"""(?P<q{n}>["'`])(?P<v{n}>(?:\\.|(?!(?P=q{n}))[^\\\n]){{0,2048}})(?P=q{n})"""
_CODE = (
    # define('DB_PASSWORD', '...'); getenv("PASSWORD", "..."); environ.get('pwd', '...'); ENV.fetch("TOKEN", "...");
    # setters with the same (name, value) arguments: props.set("api_token", "..."), os.Setenv("TOKEN", "..."),
    # System.setProperty("db.password", "..."), putenv; django-environ's env.str("SECRET_KEY", default="...")
    re.compile(r"(?:define|getenv|Getenv|get|fetch|getProperty|env|config|setdefault|set|Set|setenv|Setenv|putenv"
               r"|setProperty|put|str)\(\s*"
               + _STR.format(n=1).replace("(?P<v1>", "(?P<name>") + r"\s*,\s*(?:default\s*=\s*)?" + _STR.format(n=2)
               + r"\s*[,)]"),
    # $cfg['db_password'] = '...';  'password' => '...';  ["token"] = "..."
    re.compile(r"\[\s*" + _STR.format(n=1).replace("(?P<v1>", "(?P<name>") + r"\s*\]\s*=\s*" + _STR.format(n=2)),
    re.compile(_STR.format(n=1).replace("(?P<v1>", "(?P<name>") + r"\s*=>\s*" + _STR.format(n=2)),
    # SECRET_KEY = os.environ.get("X") or '...';  const token = process.env.T || "..." ; x ?? "..."; the
    # branches of a conditional: password = dev ? '...' : '...'

    re.compile(r"(?m)(?:^|;)[ \t]*(?:(?:export|const|let|var|final|static|public|private)[ \t]+)*"
               r"(?P<name>[A-Za-z_][\w.]{0,80})[ \t]*[:=][ \t]*[^\n;]{1,200}?(?:\bor\b|\|\||\?\?|\?|:)[ \t]*"
               + _STR.format(n=2)),
    # A typed declaration with a literal: TypeScript `const apiKey: string = "..."`, Rust `const API_KEY:
    # &str = "..."`, Kotlin `val token: String = "..."`, Swift `let password: String! = "..."`, Python
    # `API_KEY: str = "..."`; Go `var password string = "..."`
    re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w{0,80})[ \t]*:[ \t]*&?'?[A-Za-z_][\w.:<>\[\]|?!, ]{0,60}?[ \t]*=[ \t]*"
               + _STR.format(n=2) + r"(?![\w(])"),
    re.compile(r"\bvar[ \t]+(?P<name>[A-Za-z_]\w{0,80})[ \t]+\*?[A-Za-z_][\w.\[\]]{0,40}[ \t]*=[ \t]*" + _STR.format(n=2)),
    # Visual Basic's declaration with a type (Microsoft Learn, Visual Basic, "Dim statement", "Const statement"):
    # `Dim password As String = "..."`, `Private Const ApiKey As String = "..."`
    re.compile(r"(?i:\b(?:dim|const|private|public|friend|protected|static|shared|readonly)[ \t]+)+(?P<name>[A-Za-z_]\w{0,80})"
               r"[ \t]+(?i:as)[ \t]+(?:New[ \t]+)?[A-Za-z_][\w.]{0,60}[ \t]*=[ \t]*" + _STR.format(n=2)),
)
# A substring each pattern of _CODE needs: the pattern is tried only on a text that holds it.
_CODE_NEEDS = (("(",), ("]",), ("=>",), (" or ", "||", "??", "? "), (":",), ("var",), (" As ", " as ", " AS "))
_GO_MULTI = re.compile(r"(?m)(?:\b(?:const|var)\s+|^[ \t]*)(?P<names>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+)\s*(?:[A-Za-z_][\w.]*)?\s*:?=\s*"
                       r"(?P<vals>\"[^\"\n]*\"(?:\s*,\s*\"[^\"\n]*\")+)")


def _code(ruleset: RuleSet, s: str) -> Iterator[Span]:
    for rx, needs in zip(_CODE, _CODE_NEEDS):
        if not any(n in s for n in needs):
            continue
        for m in rx.finditer(s):
            name, v = m.group("name"), m.group("v2")
            if (ruleset.secret_name(name) or ruleset.pair_password(name, v)) and secret_value(ruleset, v, name):
                yield m.start("v2"), m.end("v2"), KIND
    for m in (_GO_MULTI.finditer(s) if "const" in s or "var" in s or ":=" in s else ()):
        names = [n.strip() for n in m.group("names").split(",")]
        vals = list(re.finditer(r"\"([^\"\n]*)\"", m.group("vals")))
        if len(names) != len(vals):
            continue
        for name, v in zip(names, vals):
            if ruleset.secret_name(name) and secret_value(ruleset, v.group(1), name):
                base = m.start("vals")
                yield base + v.start(1), base + v.end(1), KIND


# -- source code: a statement that names a secret --------------------------------------------------
# In source code, a line whose identifiers name a password, secret, token, credential or key holds
# the secret in its string literals, wherever they stand: `getSecret: () => '…'`, `FOO_SECRET_ID =
# '…'`, `v.setPassword(x, "…")`. Every literal there that reads like a password is masked; what
# reads as a word, a name, a path, a template, a version or prose stays (`_statement_benign`).
_SECRET_WORD = re.compile(r"(?i)passw(?:or)?d|passphrase|secret|token|credential|api_?key|private_?key|access_?key")
_LINE_LITERAL = re.compile(r"""(?P<q>["'`])(?P<v>(?:\\.|(?!(?P=q))[^\\\n]){6,512})(?P=q)""")
_PASSWORD_LIKE = re.compile(r"(?=.*[A-Za-z])(?=.*[0-9])|[!@#$%^&*+=~?<>|;,]|(?=.*[a-z].*[A-Z][a-z]*[A-Z])")
_NOT_SECRET_LITERAL = re.compile(
    r"[a-z]+[0-9]{1,3}"  # a name and its version: oauth2, sha1, http2
    r"|v?[0-9]+(?:\.[0-9]+)+(?:[-+.][0-9A-Za-z.]+)?"  # a version or an address: 1.2.3, 127.0.0.1
    r"|[0-9]+[smhdwy]|[0-9]{4}-[0-9]{2}-[0-9]{2}.*"  # a duration, a date
    r"|[\w.-]+:[0-9]{2,5}"  # host:port
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # a UUID: an id
    r"|" + ENV_VAR_NAME.pattern +  # a constant's name (`CKV_A_14`)
    r"|(?:[A-Za-z][a-z]*(?:[A-Z][a-z]+)*[0-9]{0,3}[_.:-])*[A-Za-z][a-z]*(?:[A-Z][a-z]+)*[0-9]{0,3}"
    r"(?:\.[a-z0-9]{1,5})?"  # words joined (`options.openAiHeaders`, `api-configuration`), a file name
    r"|[A-Za-z]+(?:-[A-Za-z]+)*-v?[0-9]+(?:[.-][0-9]+)*(?:-[A-Za-z]+(?:-[0-9]+)?)*"  # a model or a package and
)  # its version (`gpt-5.5`, `claude-3-5-sonnet-20241022`)
MAX_SECRET_LINES = 256


def _statement_benign(ruleset: RuleSet, v: str) -> bool:
    if any(c.isspace() for c in v) or not any(c.isalnum() for c in v) or len(set(v)) <= 3:
        return True  # prose, a message, a format string; punctuation; filler (`gAAAAA`)
    if _SECRET_WORD.search(v) or ruleset.secret_name(v):
        return True  # a label naming the secret (`#password`, `api_token`)
    if "/" in v or "\\" in v or "{" in v or "$" in v or "%" in v or v.startswith(("-", ".", "<", ")", "]", "}", ",")):
        return True  # a path or URL, a template or reference, a flag, a tag; code between two literals
    if _NOT_SECRET_LITERAL.fullmatch(v) or ruleset.structural(v) or ruleset.placeholder(v):
        return True
    return not _PASSWORD_LIKE.search(v)


def _names_a_secret(ruleset: RuleSet, line: str) -> bool:
    """Does an identifier of the line name a secret (`RuleSet.secret_name`, the fast path's own judge)?"""
    return any(ruleset.secret_name(m.group()) for m in _IDENT.finditer(line) if _SECRET_WORD.search(m.group()))


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _secret_statements(ruleset: RuleSet, s: str) -> Iterator[Span]:
    lines = (m for m in re.finditer(r"[^\n]+", s) if _SECRET_WORD.search(m.group()) and _names_a_secret(ruleset, m.group()))
    for line in islice(lines, MAX_SECRET_LINES):
        for m in _LINE_LITERAL.finditer(line.group()):
            v = m.group("v")
            if not _statement_benign(ruleset, v) and secret_value(ruleset, v, "secret"):
                yield line.start() + m.start("v"), line.start() + m.end("v"), KIND


# -- credential arguments by position in well-known APIs --------------------------------------------
# (a call's name, the index of its password argument, where the API's documentation says so)
# Each row: a call's pattern, the index of its credential argument (-1: the last), lower-case words one of
# which the call holds (the walk tries a row's pattern only on a text that holds one: one alternation of
# every row costs the whole text times the rows), and the API's documentation.
CALLS: tuple[tuple[str, int, tuple[str, ...], str], ...] = (
    (r"DriverManager\.getConnection", 2, ("getconnection",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.sql/java/sql/"
     "DriverManager.html#getConnection(java.lang.String,java.lang.String,java.lang.String) (url, user, password)"),
    (r"new\s+PDO", 2, ("pdo",), "https://www.php.net/manual/en/pdo.construct.php (dsn, username, password)"),
    (r"(?:mysqli_connect|new\s+mysqli|mysqli_real_connect|mysql_connect)", 2, ("mysql",),
     "https://www.php.net/manual/en/mysqli.construct.php (hostname, username, password, database)"),
    (r"\.login", 1, (".login",), "https://docs.python.org/3/library/smtplib.html#smtplib.SMTP.login (user, password); "
     "ftplib.FTP.login and imaplib.IMAP4.login take the same two"),
    (r"(?:HTTPBasicAuth|HTTPDigestAuth|HTTPProxyAuth)", 1, ("auth",),
     "https://requests.readthedocs.io/en/latest/user/authentication/ (username, password)"),
    (r"\bauth\s*=\s*", 1, ("auth",), "https://requests.readthedocs.io/en/latest/user/authentication/ (auth=('user', 'pass'))"),
    (r"\.auth", 1, (".auth(",), "https://ladjs.github.io/superagent/#authentication (.auth(user, password)); "
     "https://github.com/request/request#http-authentication (.auth(username, password, sendImmediately, bearer))"),
    (r"\.auth", 3, (".auth(",), "https://github.com/request/request#http-authentication (.auth(null, null, true, "
     "'bearerToken'): the fourth argument is a bearer token)"),
    (r"(?:aiohttp\.)?BasicAuth", 1, ("basicauth",), "https://docs.aiohttp.org/en/stable/client_reference.html#aiohttp.BasicAuth "
     "(login, password)"),
    (r"new\s+UsernamePasswordCredentials", 1, ("usernamepasswordcredentials",), "https://hc.apache.org/httpcomponents-client-4.5.x/current/httpclient/"
     "apidocs/org/apache/http/auth/UsernamePasswordCredentials.html (userName, password)"),
    (r"new\s+PasswordAuthentication", 1, ("passwordauthentication",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/"
     "PasswordAuthentication.html (userName, char[] password)"),
    (r"smtp\.PlainAuth", 2, ("plainauth",), "https://pkg.go.dev/net/smtp#PlainAuth (identity, username, password, host)"),
    (r"url\.UserPassword", 1, ("userpassword",), "https://pkg.go.dev/net/url#UserPassword (username, password)"),
    (r"\.SetBasicAuth", 1, ("setbasicauth",), "https://pkg.go.dev/net/http#Request.SetBasicAuth (username, password)"),
    (r"new\s+Sequelize", 2, ("sequelize",), "https://sequelize.org/docs/v6/getting-started/ (database, username, password, options)"),
    (r"\bldap_bind", 2, ("ldap_bind",), "https://www.php.net/manual/en/function.ldap-bind.php (ldap, dn, password)"),
    (r"\bldap_exop_passwd", 3, ("ldap_exop_passwd",), "https://www.php.net/manual/en/function.ldap-exop-passwd.php (ldap, user, "
     "old_password, new_password)"),
    (r"\b(?:odbc_p?connect|db2_p?connect|maxdb_p?connect|new\s+maxdb|maxdb_change_user|ifx_p?connect"
     r"|fbsql_p?connect|mysqli_change_user|sybase_p?connect|msql_p?connect)", 2, ("odbc_", "db2_", "maxdb", "ifx_", "fbsql_", "mysqli_change_user", "sybase_", "msql_"),
     "https://www.php.net/manual/en/function.odbc-connect.php (dsn, user, password); "
     "function.db2-connect.php (database, username, password); function.maxdb-connect.php (host, username, passwd); "
     "function.mysqli-change-user.php (mysql, username, password); the other legacy drivers take the same three"),
    (r"\b(?:cubrid_p?connect|dbx_connect)", 4, ("cubrid_", "dbx_connect"), "https://www.php.net/manual/en/function.cubrid-connect.php (host, port, "
     "dbname, userid, passwd); function.dbx-connect.php (module, host, database, username, password)"),
    (r"new\s+(?:\\?Illuminate\\Encryption\\)?Encrypter", 0, ("encrypter",), "https://laravel.com/api/master/Illuminate/Encryption/"
     "Encrypter.html#method___construct (key, cipher)"),
    (r"\boci_(?:p|new_)?connect", 1, ("oci_",), "https://www.php.net/manual/en/function.oci-connect.php (username, password, "
     "connection_string)"),
    (r"\b(?:ftp_login|ssh2_auth_password|imap_open|mssql_connect)", 2, ("ftp_login", "ssh2_auth_password", "imap_open", "mssql_connect"),
     "https://www.php.net/manual/en/function.ftp-login.php (ftp, username, password); "
     "https://www.php.net/manual/en/function.ssh2-auth-password.php (session, username, password); "
     "https://www.php.net/manual/en/function.imap-open.php (mailbox, user, password)"),
    (r"\bpassword_(?:verify|hash)", 0, ("password_",), "https://www.php.net/manual/en/function.password-verify.php "
     "(password, hash); https://www.php.net/manual/en/function.password-hash.php (password, algo)"),
    (r"\.simple_bind(?:_s)?", 1, ("simple_bind",), "https://www.python-ldap.org/en/python-ldap-3.4.3/reference/ldap.html#ldap.LDAPObject"
     ".simple_bind (who, cred)"),
    (r"\bftplib\.FTP(?:_TLS)?", 2, ("ftplib",), "https://docs.python.org/3/library/ftplib.html#ftplib.FTP (host, user, passwd)"),
    (r"new\s+(?:KeyStore\.)?PasswordProtection", 0, ("passwordprotection",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/"
     "security/KeyStore.PasswordProtection.html (char[] password)"),
    (r"new\s+(?:DES|DESede)KeySpec", 0, ("keyspec",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/javax/crypto/"
     "spec/DESKeySpec.html (byte[] key); DESedeKeySpec.html (byte[] key)"),
    (r"new\s+KerberosKey", 1, ("kerberoskey",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.security.jgss/javax/security/"
     "auth/kerberos/KerberosKey.html (principal, char[] password, algorithm)"),
    (r"new\s+PBEKeySpec", 0, ("pbekeyspec",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/javax/crypto/spec/"
     "PBEKeySpec.html (char[] password, ...)"),
    (r"new\s+UsernamePasswordAuthenticationToken", 1, ("usernamepasswordauthenticationtoken",), "https://docs.spring.io/spring-security/reference/api/java/org/"
     "springframework/security/authentication/UsernamePasswordAuthenticationToken.html (principal, credentials)"),
    (r"new\s+Basic(?:Session)?AWSCredentials", 1, ("awscredentials",), "https://sdk.amazonaws.com/java/api/latest/ (v1 BasicAWSCredentials("
     "accessKey, secretKey); BasicSessionCredentials(awsAccessKey, awsSecretKey, sessionToken))"),
    (r"AwsBasicCredentials\.create", 1, ("awsbasiccredentials",), "https://sdk.amazonaws.com/java/api/latest/software/amazon/awssdk/auth/"
     "credentials/AwsBasicCredentials.html#create(java.lang.String,java.lang.String) (accessKeyId, secretAccessKey)"),
    # Keys that sign, verify or encrypt: whoever holds the literal can forge what it signs.
    (r"\b(?i:jwt)\.(?:sign|verify|encode|decode)", 1, ("jwt.",),
     "https://github.com/auth0/node-jsonwebtoken#usage (jwt.sign(payload, secretOrPrivateKey), "
     "jwt.verify(token, secretOrPublicKey)); https://pyjwt.readthedocs.io/en/stable/api.html (jwt.encode(payload, "
     "key), jwt.decode(jwt, key)); https://github.com/jwt/ruby-jwt#usage (JWT.encode(payload, key, algorithm))"),
    (r"\b(?:jose\.)?jwtVerify", 1, ("jwtverify",), "https://github.com/panva/jose/blob/main/docs/jwt/verify/functions/jwtVerify.md "
     "(jwt, key, options)"),
    (r"\bJWK\.asKey", 0, ("jwk.askey",), "https://github.com/cisco/node-jose#importing-keys (jose.JWK.asKey(input, form))"),
    (r"\bcreateSecretKey", 0, ("createsecretkey",), "https://nodejs.org/api/crypto.html#cryptocreatesecretkeykey-encoding (key)"),
    (r"\bcookieParser", 0, ("cookieparser",), "https://github.com/expressjs/cookie-parser#cookieparsersecret-options (secret)"),
    (r"\bcookieParser\.signedCookies?", 1, ("cookieparser",), "https://github.com/expressjs/cookie-parser#cookieparsersignedcookiescookies-"
     "secret (cookies, secret)"),
    (r"\.SignedString", 0, ("signedstring",), "https://pkg.go.dev/github.com/golang-jwt/jwt/v5#Token.SignedString (key)"),
    (r"\bAlgorithm\.HMAC(?:256|384|512)", 0, ("algorithm.hmac",), "https://javadoc.io/doc/com.auth0/java-jwt/latest/com/auth0/jwt/"
     "algorithms/Algorithm.html#HMAC256(java.lang.String) (secret)"),
    (r"\.signWith", -1, ("signwith",), "https://javadoc.io/doc/io.jsonwebtoken/jjwt-api/latest/io/jsonwebtoken/JwtBuilder.html "
     "(signWith(SignatureAlgorithm, String base64EncodedSecretKey): the key last)"),
    (r"\bhmac\.new", 0, ("hmac.new",), "https://docs.python.org/3/library/hmac.html#hmac.new (key, msg, digestmod)"),
    (r"\.create(?:Hmac|Cipheriv|Decipheriv)", 1, (".create",), "https://nodejs.org/api/crypto.html#cryptocreatehmacalgorithm-key-"
     "options (algorithm, key); #cryptocreatecipherivalgorithm-key-iv-options (algorithm, key, iv)"),
    (r"new\s+SecretKeySpec", 0, ("secretkeyspec",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/javax/crypto/spec/"
     "SecretKeySpec.html#%3Cinit%3E(byte%5B%5D,java.lang.String) (key, algorithm)"),
    (r"\bFernet", 0, ("fernet",), "https://cryptography.io/en/latest/fernet/#cryptography.fernet.Fernet (key)"),
    (r"\bAES\.new", 0, ("aes.new",), "https://pycryptodome.readthedocs.io/en/latest/src/cipher/aes.html (AES.new(key, mode))"),
    (r"\b(?i:key_?store|ks|trust_?store)\.load", 1, (".load",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/"
     "java/security/KeyStore.html#load(java.io.InputStream,char%5B%5D) (stream, password)"),
    (r"\b(?i:key_?store|ks)\.getKey", 1, (".getkey",), "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/"
     "security/KeyStore.html#getKey(java.lang.String,char%5B%5D) (alias, password)"),
)
# Calls that set a named value: (a call's name, the index of the name, the index of the value, the docs).
# The value counts when the name is a secret name.
NAMED_CALLS: tuple[tuple[str, int, int, str], ...] = (
    (r"buildConfigField", 1, 2, "https://developer.android.com/build/gradle-tips#share-custom-fields-and-resource-"
     "values-with-your-app-code (buildConfigField(type, name, value))"),
    (r"(?:System\.)?setProperty", 0, 1, "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/util/"
     "Properties.html#setProperty(java.lang.String,java.lang.String) (key, value)"),
    (r"os\.Setenv", 0, 1, "https://pkg.go.dev/os#Setenv (key, value)"),
    (r"\.set", 1, 2, "https://docs.python.org/3/library/configparser.html#configparser.ConfigParser.set "
     "(section, option, value)"),
    (r"(?:curl_)?easy_setopt", 1, 2, "https://curl.se/libcurl/c/curl_easy_setopt.html (handle, option, parameter): "
     "CURLOPT_PASSWORD, CURLOPT_PROXYPASSWORD, CURLOPT_USERPWD, CURLOPT_PROXYUSERPWD"),
    (r"\.put", 0, 1, "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/util/Map.html#put(K,V) "
     "(key, value); JNDI's environment takes Context.SECURITY_CREDENTIALS so (javax.naming.Context)"),
)
# Calls that turn a literal into a key's bytes: a literal decoded into a variable named for a key or
# a secret (`byte[] key = Convert.FromBase64String("…")`) is that key, whatever it reads like.
# Each row: the call's pattern and the API's documentation.
DECODERS: tuple[tuple[str, str], ...] = (
    (r"Convert\.FromBase64String", "https://learn.microsoft.com/dotnet/api/system.convert.frombase64string"),
    (r"(?:Encoding\.\w+|new\s+\w*Encoding\(\s*\))\.GetBytes", "https://learn.microsoft.com/dotnet/api/"
     "system.text.encoding.getbytes"),
    (r"base64\.(?:standard_|urlsafe_)?b(?:64|32|16)decode", "https://docs.python.org/3/library/base64.html"),
    (r"bytes\.fromhex", "https://docs.python.org/3/library/stdtypes.html#bytes.fromhex"),
    (r"binascii\.(?:unhexlify|a2b_hex|a2b_base64)", "https://docs.python.org/3/library/binascii.html"),
    (r"base64\.(?:Raw)?(?:Std|URL)Encoding\.DecodeString", "https://pkg.go.dev/encoding/base64#Encoding.DecodeString"),
    (r"hex\.DecodeString", "https://pkg.go.dev/encoding/hex#DecodeString"),
    (r"Buffer\.from", "https://nodejs.org/api/buffer.html#static-method-bufferfromstring-encoding"),
    (r"\batob", "https://developer.mozilla.org/docs/Web/API/Window/atob"),
    (r"Base64\.get(?:Mime|Url)?Decoder\(\s*\)\.decode", "https://docs.oracle.com/en/java/javase/21/docs/api/"
     "java.base/java/util/Base64.Decoder.html#decode(java.lang.String)"),
    (r"DatatypeConverter\.parse(?:Base64|Hex)Binary", "https://jakarta.ee/specifications/xml-binding/4.0/apidocs/"
     "jakarta.xml.bind/jakarta/xml/bind/datatypeconverter"),
    (r"Hex\.decodeHex", "https://commons.apache.org/proper/commons-codec/apidocs/org/apache/commons/codec/binary/"
     "Hex.html#decodeHex(java.lang.String)"),
    (r"\b(?:base64_decode|hex2bin)", "https://www.php.net/manual/en/function.base64-decode.php; function.hex2bin.php"),
    (r"Base64\.(?:strict_|urlsafe_)?decode64", "https://docs.ruby-lang.org/en/master/Base64.html"),
)
# `NAME = `, `NAME := `, `T NAME = `, `NAME: T = `, `var|let|const NAME = ` and Go's `NAME, err := ` just
# before a decoder's call.
_DECODED_INTO = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*[ \t]*(?::[ \t]*[A-Za-z_][\w.\[\]]*[ \t]*)?:?=[ \t]*(?:await[ \t]+)?\Z")
# Words one of which every call of DECODERS holds (`decode` covers `DecodeString`, `decode64`, `decodeHex`).
DECODER_KEYWORDS = ("frombase64string", "getbytes", "decode", "fromhex", "unhexlify", "a2b_", "buffer.from", "atob",
                    "parsebase64binary", "parsehexbinary", "hex2bin")
_DECODER_CALL = re.compile(r"(?:" + "|".join(rx for rx, _ in DECODERS) + r")\s*\(")
# A decoded literal's variable: its last word names a key or a secret (`key`, `aesKey`, `SIGNING_SECRET`).
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_KEY_LAST_WORD = frozenset({"key", "keys", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "token", "psk"})
_CALL_START = re.compile(r"(?:" + "|".join(f"(?P<c{i}>{rx})" for i, (rx, _, _, _) in enumerate(CALLS)) + r")\s*\(")
_CALL_ROWS = tuple((re.compile(rx + r"\s*\("), index, needles) for rx, index, needles, _ in CALLS)
_NAMED_CALL_START = re.compile(
    r"(?:" + "|".join(f"(?P<n{i}>{rx})" for i, (rx, _, _, _) in enumerate(NAMED_CALLS)) + r")(?:\s*\(|[ \t]+(?=['\"]))")
# (Groovy, and so Gradle, lets a call with arguments leave out its parentheses: `buildConfigField 'String', ...`)
# Words one of which every call of CALLS holds (lower case: the keyword index matches them in any case).
CALL_KEYWORDS = ("getconnection", "pdo", "mysqli", "mysql_connect", ".login", ".auth(", "basicauth", "digestauth", "proxyauth",
                 "auth", "usernamepasswordcredentials", "passwordauthentication", "plainauth", "userpassword",
                 "sequelize", "buildconfigfield", "setproperty", "setenv", "easy_setopt", ".set(", ".put(", "jwt.", ".signedstring",
                 "algorithm.hmac", ".signwith", "hmac.new", ".createhmac", ".createcipheriv", ".createdecipheriv",
                 "secretkeyspec", "fernet", "aes.new", "store.load", "ks.load", "store.getkey", "ks.getkey",
                 "ldap_bind", "ldap_exop_passwd", "jwtverify", "jwk.askey", "createsecretkey", "cookieparser", "odbc_", "db2_", "maxdb", "ifx_", "fbsql_", "mysqli_change_user",
                 "sybase_", "msql_", "cubrid_", "dbx_connect", "encrypter", "oci_", "ftp_login", "ssh2_auth_password", "imap_open", "mssql_connect",
                 "password_verify", "password_hash", "simple_bind", "ftplib", "passwordprotection", "pbekeyspec", "deskeyspec", "desedekeyspec", "kerberoskey",
                 "usernamepasswordauthenticationtoken", "awscredentials", "awsbasiccredentials") + DECODER_KEYWORDS


def call_verify_pattern() -> bytes:
    """The fast path's test near a keyword: the start of one of the calls (the walk reads its arguments)."""
    return (_CALL_START.pattern + "|" + _NAMED_CALL_START.pattern + "|" + _DECODER_CALL.pattern).encode("ascii")
# A setter named for a secret: `setPassword("...")`, `set_api_key("...")`, `withToken("...")`,
# keyring's `set_password(service, user, "...")`: the last argument.
_SETTER = re.compile(r"\b(?:set|with)_?(?P<name>[A-Za-z][A-Za-z0-9_]{1,60})\s*\(")
# ... whose last word holds a secret (`withAuth("oauth2")`, `setCredentials("profile")` take a mode or a name)
_SETTER_LAST = re.compile(r"(?i)(?:password|passwd|passphrase|secret|token|key)s?$")
# "Password" in the languages code is written in (German, Spanish, Catalan, Portuguese, Dutch,
# Afrikaans, Polish, Swedish, Finnish, Danish, Norwegian, Hungarian, Czech and Slovak, Turkish,
# Romanian and Italian, Russian transliterated, Slovene, Croatian and Serbian, French): a field
# named in its author's language (`setMotDePasse`, `passwort`) is a password field. The rule
# set's secret names hold them too (rules.toml `[names]`; `mot-de-passe` as its words).
OTHER_LANGUAGE_PASSWORDS = (
    "passwort", "kennwort", "contrasena", "contrasenya", "senha", "wachtwoord", "wagwoord", "haslo", "losenord",
    "salasana", "adgangskode", "passord", "jelszo", "heslo", "sifre", "parola", "parol", "geslo", "lozinka",
    "motdepasse",
)
# A literal argument, also as bytes or characters: `b"k"`, Go's `[]byte("k")`, Java's `"k".getBytes()`
# and `"k".toCharArray()`, Python's `"k".encode()`, Node's `Buffer.from("k")`.
_ARG_LITERAL = re.compile(r"""\s*(?P<w>\[\]byte\(\s*|Buffer\.from\(\s*)?[bB]?(?P<q>["'`])(?P<v>(?:\\.|(?!(?P=q))[^\\\n]){0,2048})(?P=q)"""
                          r"""(?(w)\s*(?:,[^()]*)?\))\s*(?:\.(?:toCharArray|getBytes|encode)\([^()]*\)\s*)?$""")


# A name given as a constant: `Context.SECURITY_CREDENTIALS`, `PASSWORD_KEY` (upper case: a constant, not a variable).
_ARG_CONSTANT = re.compile(r"\s*(?P<name>(?:[A-Za-z_]\w*\.)*[A-Z][A-Z0-9_]{2,})\s*$")


def _arguments(s: str, pos: int, eol: bool = False, leading: bool = False) -> list[tuple[int, int]]:
    """The top-level arguments of the call whose `(` ends at pos (with `eol`, a call without
    parentheses: its arguments run to the end of the line): spans, strings and brackets respected.
    With `leading`, a call not closed within reach gives the arguments read whole before its
    end (`conn.login(user, "…", function(err) {` and a callback's body)."""
    out: list[tuple[int, int]] = []
    depth, start, i, end = 0, pos, pos, min(len(s), pos + 2048)
    while i < end:
        if eol and depth == 0 and s[i] in "\n;":
            out.append((start, i))
            return out
        c = s[i]
        if c in "\"'`":
            j = i + 1
            while j < end and s[j] != c and s[j] != "\n":
                j += 2 if s[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                out.append((start, i))
                return out
            depth -= 1
        elif c == "," and depth == 0:
            out.append((start, i))
            start = i + 1
        i += 1
    if eol and i == len(s):
        out.append((start, i))
        return out
    return out if leading else []  # not closed within reach: only what was read whole


def call_spans(ruleset: RuleSet, s: str) -> list[Span]:
    """The password arguments of the calls of CALLS in s (found by CALL_KEYWORDS)."""
    low = s.lower()
    found: list[tuple[int, int]] = []
    for rx, index, needles in _CALL_ROWS:
        if len(found) < MAX_CALLS and any(n in low for n in needles):
            found += [(m.end(), index) for m in islice(rx.finditer(s), MAX_CALLS - len(found))]
    out = list(_arguments_spans(ruleset, s, found))
    for m in islice(_NAMED_CALL_START.finditer(s), MAX_CALLS):
        _, name_at, value_at, _ = NAMED_CALLS[int(next(k for k, v in m.groupdict().items() if v is not None)[1:])]
        args = _arguments(s, m.end(), eol=not m.group().rstrip().endswith("("))
        if len(args) <= max(name_at, value_at):
            continue
        lit = _ARG_LITERAL.match(s, *args[name_at])
        const = _ARG_CONSTANT.match(s, *args[name_at])
        name = lit.group("v") if lit else const.group("name").rsplit(".", 1)[-1] if const else ""
        if name and (ruleset.secret_name(name) or name.lower() in PAIR_PASSWORD_NAMES):
            out += _arguments_spans(ruleset, s, [(m.end(), value_at)], name, args)
    return out + list(_decoded_keys(ruleset, s, low))


def _decoded_keys(ruleset: RuleSet, s: str, low: str) -> Iterator[Span]:
    """A literal decoded into a key's variable (DECODERS): `byte[] key = Convert.FromBase64String("…")`."""
    if not any(n in low for n in DECODER_KEYWORDS):
        return
    for m in islice(_DECODER_CALL.finditer(s), MAX_CALLS):
        into = _DECODED_INTO.search(s, max(0, m.start() - 120), m.start())
        if into is None or "\n" in s[into.start():m.start()]:
            continue
        name = into.group("name")
        words = _WORD.findall(name)
        if not (words and words[-1].lower() in _KEY_LAST_WORD or ruleset.secret_name(name)):
            continue
        yield from _arguments_spans(ruleset, s, [(m.end(), 0)], name)


def _calls(ruleset: RuleSet, s: str) -> Iterator[Span]:
    """Setters named for a secret (`setPassword("...")`): the last argument."""
    found = [(m.end(), -1) for m in islice(_SETTER.finditer(s), MAX_CALLS * 4)
             if (_SETTER_LAST.search(m.group("name")) or m.group("name").lower().endswith(OTHER_LANGUAGE_PASSWORDS))
             and ruleset.secret_name(m.group("name"))][:MAX_CALLS]
    yield from _arguments_spans(ruleset, s, found)


_ARG_IDENT = re.compile(r"\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*$")
_LITERAL_REACH = 4096  # how far before a call its argument's assignment is looked for


def _assigned_literal(s: str, a: int, b: int) -> re.Match | None:
    """The literal a variable argument was last given before the call, in the same text
    (`string k = "…"; … FromBase64String(k)`): the call's argument is that literal."""
    ident = _ARG_IDENT.match(s, a, b)
    if ident is None:
        return None
    base = max(0, a - _LITERAL_REACH)
    assignments = list(re.finditer(rf"(?<![\w.]){re.escape(ident.group('name'))}[ \t]*"
                                   rf"(?::[ \t]*[A-Za-z_][\w.\[\]]*[ \t]*)?:?=[ \t]*", s[base:a]))
    found = assignments[-1] if assignments else None
    return _ASSIGNED_QUOTED.match(s, base + found.end()) if found else None


_ASSIGNED_QUOTED = re.compile(r"""[bB]?(?P<q>["'])(?P<v>(?:\\.|(?!(?P=q))[^\\\n]){0,2048})(?P=q)[ \t]*(?:[;,]|$)""", re.M)


def _arguments_spans(ruleset: RuleSet, s: str, found: list[tuple[int, int]], name: str = "password",
                     known: list[tuple[int, int]] | None = None) -> Iterator[Span]:
    """The literal at each (position after `(`, argument index; -1 the last) when it is a value."""
    for pos, index in found:
        args = known if known is not None else _arguments(s, pos, leading=index >= 0)
        if not args or index >= len(args):
            continue
        a, b = args[index]
        lit = _ARG_LITERAL.match(s, a, b) or _assigned_literal(s, a, b)
        if not lit:
            continue
        start, end = lit.span("v")
        for q in ('\\"', '"', "'"):  # Gradle's buildConfigField writes a Java literal inside the string
            if end - start > 2 * len(q) and s.startswith(q, start) and s.endswith(q, start, end):
                start, end = start + len(q), end - len(q)
                break
        if secret_value(ruleset, s[start:end], name, argument=True):
            yield start, end, KIND


# -- Vault's tables: `vault kv get`, `vault read` print `Key  Value` / `---  -----` and a row per key
_KV_TABLE = re.compile(r"(?m)^Key[ \t]{2,}Value[ \t]*\n-{3}[ \t]+-{5}[ \t]*\n(?P<rows>(?:[^\s=][^\n]*\n?)+)")
_KV_ROW = re.compile(r"(?m)^(?P<name>\S+)[ \t]{2,}(?P<v>\S[^\n]*?)[ \t]*$")


def _vault_table(ruleset: RuleSet, s: str) -> Iterator[Span]:
    """Rows of a Vault CLI table (https://developer.hashicorp.com/vault/docs/commands/kv/get: the
    default `-format=table` prints each key of the secret and its value)."""
    for t in _KV_TABLE.finditer(s):
        for m in _KV_ROW.finditer(s, t.start("rows"), t.end("rows")):
            name, v = m.group("name"), m.group("v")
            if ruleset.secret_name(name) and secret_value(ruleset, v, name):
                yield m.start("v"), m.end("v"), KIND


# -- tables a command prints -------------------------------------------------------------------------
# A query's result (psql's aligned format, the mysql client's boxes, sqlite3's `-box` and
# `-markdown` modes) and a CLI's listing (box-drawing characters) put each value in a cell. A column
# whose header is a secret name holds a secret in every row (`passwd`, `authentication_string`,
# `api_token`); a row whose first cell is a secret name holds its value in the next cell (`│
# DB_PASSWORD │ … │`, a secrets manager's listing).
TABLE_BARS = ("|", "\u2502", "\u2551", "\u2503")  # | │ ║ ┃
_CELL_BAR = re.compile("[|\u2502\u2551\u2503]")
_BORDER = re.compile("[-+=:|\u2500-\u257f \t]*")  # a rule line: dashes, pluses, box-drawing characters
_RULE_DASH = re.compile("[-=\u2500\u2501\u2550]")  # the dashes of a rule line: - = ─ ━ ═
# Columns that hold a credential under a name no rule reads as one: MySQL's `mysql.user` keeps each
# account's password hash in `authentication_string`.
CREDENTIAL_COLUMNS = ("authentication_string",)
MAX_TABLE_CELLS = 64  # a row with more cells is no table a person reads: left to the line rules


def _cells(s: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of a row's cells, stripped of their blanks (a leading or trailing bar opens no cell)."""
    bounds = [start - 1, *(m.start() for m in _CELL_BAR.finditer(s, start, end)), end]
    cells = []
    for a, b in zip(bounds, bounds[1:]):
        a += 1
        while a < b and s[a] in " \t":
            a += 1
        while b > a and s[b - 1] in " \t\r":
            b -= 1
        cells.append((a, b))
    if cells and cells[0][0] == cells[0][1]:
        cells = cells[1:]
    if cells and cells[-1][0] == cells[-1][1]:
        cells = cells[:-1]
    return cells


def _table_blocks(s: str) -> Iterator[list[tuple[int, int, bool]]]:
    """Runs of lines that hold a cell bar or are rule lines: (start, end, is_rule) per line."""
    block: list[tuple[int, int, bool]] = []
    pos = 0
    for line in s.split("\n"):
        a, b = pos, pos + len(line)
        pos = b + 1
        rule = bool(_BORDER.fullmatch(line)) and len(_RULE_DASH.findall(line)) >= 3
        if rule or _CELL_BAR.search(line):
            block.append((a, b, rule))
            continue
        if sum(not r for _, _, r in block) >= 2:
            yield block
        block = []
    if sum(not r for _, _, r in block) >= 2:
        yield block


def _tables(ruleset: RuleSet, s: str) -> Iterator[Span]:
    for block in _table_blocks(s):
        rows: list[list[tuple[int, int]]] = []
        ruled = False  # a rule line under the first row: that row is the header
        for a, b, rule in block:
            if rule:
                ruled = ruled or len(rows) == 1
                continue
            cells = _cells(s, a, b)
            if len(cells) < 2 or len(cells) > MAX_TABLE_CELLS:
                continue
            rows.append(cells)
        if not rows:
            continue
        secret_columns = []
        if ruled:
            secret_columns = [i for i, (a, b) in enumerate(rows[0]) if _names_secret(ruleset, s[a:b])]
        for row in rows[1:] if ruled else rows:
            for i in secret_columns:
                if i < len(row) and len(row) == len(rows[0]):
                    name = s[rows[0][i][0]:rows[0][i][1]]
                    yield from _cell_value(ruleset, s, row[i], name)
            first = s[row[0][0]:row[0][1]]
            if _names_secret(ruleset, first):
                yield from _cell_value(ruleset, s, row[1], first)


# Cells that read as a secret's name but head columns of something else: a test report's `PASS`
# (no `pass`, `pwd` or `pw` names a column), a model's usage table's `token`/`tokens`.
_NOT_TABLE_NAMES = frozenset({"token", "tokens"})


def _names_secret(ruleset: RuleSet, name: str) -> bool:
    name = name.strip("`*\"'")
    low = name.lower()
    return 0 < len(name) <= 80 and " " not in name and low not in _NOT_TABLE_NAMES and (
        ruleset.secret_name(name) or low in CREDENTIAL_COLUMNS)


def _cell_value(ruleset: RuleSet, s: str, cell: tuple[int, int], name: str) -> Iterator[Span]:
    a, b = cell
    value = s[a:b]
    if value and _unquoted_ok(value, True, prose_ok=False) and secret_value(ruleset, value, name) and (
            not ruleset.code_benign(value, name, False, True)):
        yield a, b, KIND


# -- credential files ------------------------------------------------------------------------------
def _htpasswd(s: str) -> Iterator[Span]:
    """`user:hash` lines (Apache htpasswd): the hash after the first colon."""
    for m in re.finditer(r"(?m)^[^:#\s][^:\n]*:(?P<v>[^\s:]{8,})[ \t]*$", s):
        yield m.start("v"), m.end("v"), "password_hash"


def _pgpass(s: str) -> Iterator[Span]:
    """`host:port:database:user:password` lines (PostgreSQL's password file): the last field."""
    for m in re.finditer(r"(?m)^(?:(?:\\.|[^:\\\n])*:){4}(?P<v>[^\n]+?)[ \t]*$", s):
        if not m.group().lstrip().startswith("#"):
            yield m.start("v"), m.end("v"), "pgpass"
