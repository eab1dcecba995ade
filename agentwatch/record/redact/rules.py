"""What a secret looks like: the rules redaction applies to one string, and their triggers.

`redact` owns policy (modes, salt, the record document); this module owns the
patterns. Every rule family has a *trigger*: a literal that any match must
contain, found with C-speed searches (str.find, bytes.translate/split). The
rules then run only where a trigger fired, so the cost follows the number of
candidates, not the length of the text; a regex scan over all of a text
costs 25-1000x more per character in CPython.

The same triggers make the fast path (`suspicious`): when none fires on a
record's canonical JSON, no rule can change any of its strings, and the
bytes are stored as they are. JSON escaping never hides a trigger: escapes
only add backslashes and letters, and each trigger allows for them.

Families and triggers (docs/redaction.md):
  PEM private keys          "-----BEGIN"
  known token formats       a run of 16+ [A-Za-z0-9+/=_.~-] holding a known prefix where a
                            token may start, or "SG.", "ya29.", "Q~" (dotted formats)
  secret-sounding names     a core word (pass, pwd, secret, token, cookie, credential, auth,
  (assignments, headers,    sig, key) followed, within 9 letters and a short gap of quotes,
  dict keys)                backslashes and blanks, by ":" or "="
  command-line flags        "--password", "--token", ..., "-u "
  passwords in URLs         "@" with "://" and ":" before it
  high-entropy tokens       a run of 20+ [A-Za-z0-9+/=_-] with upper and lower case
"""

from __future__ import annotations

import math
import re
from typing import Callable, Iterator

A = re.ASCII  # ASCII-only classes: case-insensitivity never folds Unicode look-alikes
AI = re.ASCII | re.IGNORECASE
MASK_PREFIX = "[REDACTED:"
Masker = Callable[[str, str], str]  # (kind, secret) -> mask

# --- known token formats ---------------------------------------------------------------------
# (kind, literal prefixes, the rest). A token starts at a boundary of [A-Za-z0-9_-]
# and is at least 16 characters long.
KNOWN_TOKENS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("aws_access_key_id", ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ABIA", "ACCA"),
     r"[A-Z2-7]{16}(?![A-Za-z0-9])"),
    ("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])"),
    ("github_token", ("github_pat_",), r"[A-Za-z0-9_]{22,251}"),
    ("gitlab_token", ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-", "glft-", "glimt-"),
     r"[A-Za-z0-9_-]{20,}"),
    ("anthropic_key", ("sk-ant-",), r"[A-Za-z0-9_-]{20,}"),
    ("openrouter_key", ("sk-or-v1-",), r"[A-Za-z0-9]{32,}"),
    ("openai_key", ("sk-",), r"(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}"),  # also DeepSeek & co.
    ("stripe_key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"[A-Za-z0-9]{16,}"),
    ("stripe_webhook_secret", ("whsec_",), r"[A-Za-z0-9+/=]{24,}"),
    ("slack_token", ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"), r"[A-Za-z0-9-]{20,}"),
    ("slack_token", ("xapp-",), r"[0-9]-[A-Za-z0-9-]{20,}"),
    ("google_api_key", ("AIza",), r"[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
    ("google_oauth_secret", ("GOCSPX-",), r"[A-Za-z0-9_-]{20,}"),
    ("huggingface_token", ("hf_",), r"[A-Za-z0-9]{30,}"),
    ("groq_key", ("gsk_",), r"[A-Za-z0-9]{40,}"),
    ("xai_key", ("xai-",), r"[A-Za-z0-9]{40,}"),
    ("perplexity_key", ("pplx-",), r"[A-Za-z0-9]{40,}"),
    ("replicate_token", ("r8_",), r"[A-Za-z0-9]{30,}"),
    ("npm_token", ("npm_",), r"[A-Za-z0-9]{36,}"),
    ("pypi_token", ("pypi-AgEIcHlwaS5vcmc",), r"[A-Za-z0-9_-]{40,}"),
    ("docker_token", ("dckr_pat_",), r"[A-Za-z0-9_-]{20,}"),
    ("twilio_key", ("SK",), r"[0-9a-fA-F]{32}(?![A-Za-z0-9])"),
    ("shopify_token", ("shpat_", "shpca_", "shppa_", "shpss_"), r"[A-Fa-f0-9]{32}"),
    ("digitalocean_token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}"),
    ("linear_key", ("lin_api_",), r"[A-Za-z0-9]{40,}"),
    ("databricks_token", ("dapi",), r"[a-f0-9]{32}(?:-[0-9])?"),
    ("age_secret_key", ("AGE-SECRET-KEY-1",), r"[0-9A-Z]{58}"),
    ("private_key", ("LS0tLS1CRUdJTi",), r"[A-Za-z0-9+/=]{20,}"),  # base64 of "-----BEGIN"
)
KNOWN_PREFIXES = tuple(sorted({p for _, prefixes, _ in KNOWN_TOKENS for p in prefixes}))
_KNOWN_AT = tuple(
    (kind, prefixes, re.compile("(?:" + "|".join(map(re.escape, prefixes)) + ")" + rest, A))
    for kind, prefixes, rest in KNOWN_TOKENS
)
# Formats with a "." or "~" inside: (kind, trigger literal, pattern). The prefilter
# keeps "." and "~" inside its words, so each of these is one long word holding its trigger.
DOTTED_TOKENS: tuple[tuple[str, str, re.Pattern], ...] = (
    ("jwt", "eyJ", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{13,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*", A)),
    ("sendgrid_key", "SG.", re.compile(r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", A)),
    ("google_oauth_token", "ya29.", re.compile(r"ya29\.[A-Za-z0-9_-]{20,}", A)),
    ("azure_client_secret", "Q~", re.compile(r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}", A)),
)
_ID_BOUNDARY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

# PEM private keys, also with escaped newlines and when the END line is cut off.
PEM_RE = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
    A,
)

# --- names that say "the value is a secret" -------------------------------------------------
# A name is sensitive when it ends with one of these (case-insensitive; the words
# optionally joined by "_", "." or "-"), or is an upper-case name ending in _KEY.
NAME_ENDINGS: tuple[tuple[str, ...], ...] = (
    ("password",), ("passwd",), ("passphrase",), ("pass",), ("pwd",), ("secret",), ("token",),
    ("cookie",), ("credential",), ("credentials",), ("authorization",), ("auth",), ("sig",),
    ("amz", "signature"), ("goog", "signature"), ("apikey",),
    *((qualifier, "key") for qualifier in (
        "api", "access", "private", "secret", "account", "master", "encryption", "signing", "client",
        "app", "license", "session", "ssh", "auth")),
    ("shared", "access", "key"),
)
_NAME_END = "(?:" + "|".join("[_.-]?".join(words) for words in NAME_ENDINGS) + ")"
_ENV_KEY = r"(?-i:[A-Z][A-Z0-9_]*_KEY)"
SENSITIVE_NAME_RE = re.compile(rf".*{_NAME_END}|{_ENV_KEY}", AI)  # userPassword, db_pass, apiKey
_NOT_SENSITIVE = frozenset({"pwd", "oldpwd", "bypass", "compass", "encompass", "surpass", "trespass",
                            "overpass", "underpass", "passthrough"})
_CORES = ("pass", "pwd", "secret", "token", "cookie", "credential", "auth", "sig", "key")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")

# The bounded gap between a name and its separator: a quote (maybe escaped) and blanks.
_GAP = r"(?:\\{0,2}[\"'])?[ \t]{0,3}"
_STRPREFIX = r"(?:[bfru]{1,2}(?=\\{0,2}[\"']))?"  # f"...", b'...': code, judged by what is inside
# name[quote][blanks](:|=)value -- .env lines, YAML, JSON inside strings, query strings.
ASSIGN_RE = re.compile(
    rf"(?<![A-Za-z0-9_.\-])(?<!\[REDACTED:)(?P<name>(?:[A-Za-z0-9_.][A-Za-z0-9_.-]*?)?{_NAME_END}|{_ENV_KEY})"
    rf"{_GAP}[:=](?!=)[ \t]*{_STRPREFIX}"
    r"(?:(?P<q>\\{0,2}[\"'])(?P<qv>[^\"'\\\n]*)(?P=q)|(?P<v>[^\s\"'`,;&|)}\]<>]+))",
    AI,
)
# Authorization headers keep their scheme; cookies are masked to the end of the line.
AUTH_RE = re.compile(
    rf"(?<!\[REDACTED:)authorization{_GAP}[:=][ \t]*(?:[bfru]{{0,2}}\\{{0,2}}[\"'])?"
    r"(?:(?:bearer|basic|token|digest|bot|negotiate|apikey)[ \t]+)?(?P<v>[^\s\"'\\,;]+)",
    AI,
)
COOKIE_RE = re.compile(
    rf"(?<!\[REDACTED:)cookie{_GAP}[:=][ \t]*(?:\\{{0,2}}[\"'])?(?P<v>[^\r\n\"'\\]+)", AI
)
# Command-line flags: --password VALUE, --token=VALUE; curl -u user:pass.
_FLAG_NAMES = r"pass|token|secret|api-?key|access-token|auth-token|client-secret|private-key|user"
_FLAG_FIND = re.compile(rf"-(?:-(?:{_FLAG_NAMES})|u[ \t])")  # on lower-cased text; literal "-" first
_FLAG_FIND_B = re.compile(rf"-(?:-(?:{_FLAG_NAMES})|u[ \t\\])".encode())  # JSON: a tab is "\t"
FLAG_RE = re.compile(
    r"(?<![A-Za-z0-9_-])(?:--(?:password|passwd|pass|token|secret|api-?key|access-token|auth-token"
    r"|client-secret|private-key)(?:=|[ \t]+)|(?:-u|--user)[ \t]+[^\s:\"']*:)"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\n]*)(?P=q)|(?P<v>[^\s\"']+))",
    AI,
)
# scheme://user:password@host -- mask the password, keep user and host.
URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\"'\\]*:(?P<v>[^\s/\"'\\]+)@", A)
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")

# --- high-entropy tokens ---------------------------------------------------------------------
ENTROPY_MIN_LEN = 20
ENTROPY_MAX_LEN = 1024  # longer runs are data (images, archives), not credentials
RUN_MIN = 16  # the shortest known token; below ENTROPY_MIN_LEN
# Opaque ids harnesses and APIs hand out; they identify, they do not authenticate.
ID_PREFIXES = (
    "toolu_", "srvtoolu_", "msg_", "msgbatch_", "req_", "call_", "chatcmpl-", "resp_", "run_",
    "thread_", "asst_", "file-", "file_", "batch_", "ftjob-", "org-",
)
INTEGRITY_PREFIXES = ("sha1-", "sha256-", "sha384-", "sha512-")  # npm/SRI integrity: base64 digests
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"
_SHAPE = str.maketrans({c: "x" for c in _B64})  # runs of "x" are runs of [A-Za-z0-9+/=_-]
_RUN_FIND = re.compile("x" * RUN_MIN + "x*")  # a literal prefix: the engine searches it at C speed
_WORDLIKE_SEGMENT = re.compile(r"[A-Z]?[a-z0-9_.-]*", A)
_WORD = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{3,}(?![a-z])", A)
_SEGMENT_SEP = re.compile(r"[_./=+-]+", A)
_SIMPLE_SEGMENT = re.compile(r"[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+[A-Za-z]{0,2}|[A-Za-z]{1,2}", A)


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in map(s.count, set(s)))


def entropy_threshold(n: int) -> float:
    """Bits per character a random base62/64 token of length n clears with a margin.

    A short sample cannot show its alphabet's full entropy (20 random characters
    average about 4.0 bits, 40 about 4.7), so the bar rises with length.
    """
    return 0.80 * math.log2(min(n, 64))


def identifier_like(tok: str) -> bool:
    """Made of words: camelCase (`getUserAccountSettings2`) or separated (`test_2D_vs_RGI`).

    Random base62 text rarely has 60% of its characters in runs of three or more
    lower-case (or capital) letters; identifiers almost always do.
    """
    if sum(map(len, _WORD.findall(tok))) >= 0.6 * len(tok):
        return True
    segments = _SEGMENT_SEP.split(tok)
    if len(segments) >= 3:
        simple = sum(len(seg) for seg in segments if _SIMPLE_SEGMENT.fullmatch(seg))
        return simple >= 0.8 * sum(map(len, segments))
    return False


def looks_random(tok: str) -> bool:
    """A credential-like token: mixed case and digits, varied, not an id, path or word."""
    n = len(tok.rstrip("="))
    if n < ENTROPY_MIN_LEN or n > ENTROPY_MAX_LEN:
        return False
    if tok == tok.lower() or tok == tok.upper() or tok.isalpha():
        return False  # hex digests, UUIDs, ULIDs, lower-case paths, plain words
    if not any(c.isdigit() for c in tok):
        return False
    if tok.startswith(ID_PREFIXES) and _ID_BOUNDARY.issuperset(tok) or tok.startswith(INTEGRITY_PREFIXES):
        return False
    if "/" in tok:
        if tok[0] == "/":
            return False  # an absolute path
        if all(_WORDLIKE_SEGMENT.fullmatch(seg) for seg in tok.split("/")):
            return False  # a relative path of words
    if identifier_like(tok):
        return False
    return _entropy(tok) >= entropy_threshold(n)


# --- values next to a secret-sounding name ----------------------------------------------------
_REF_RE = re.compile(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{[A-Za-z_][A-Za-z0-9_.]*\}|%[A-Za-z_][A-Za-z0-9_]*%|\{\{.*\}\}"
    r"|<[^<>]*>|\*+|x+|\.\.\.",
    AI,
)
_PLACEHOLDERS = frozenset({"null", "none", "nil", "true", "false", "undefined", "redacted", "str", "string",
                           "bytes", "int", "bool", "any", "optional", "secretstr"})
_TEMPLATE_STARTS = (MASK_PREFIX, "${", "{{", "$(", "<%")
_CODE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|.*[(\[{].*", A)


def benign_value(value: str, *, name: str = "", quoted: bool = True) -> bool:
    """Not a secret though next to a secret-sounding name: refs, placeholders, code."""
    if not value or value.startswith(_TEMPLATE_STARTS) or value.lower() in _PLACEHOLDERS:
        return True
    if _REF_RE.fullmatch(value):
        return True
    if not quoted and (value == name or _CODE_RE.fullmatch(value)):
        return True  # `password=password`, `token = self.token`, `key=get_key()`
    return False


def sensitive_name(name: str) -> bool:
    return name.lower() not in _NOT_SENSITIVE and SENSITIVE_NAME_RE.fullmatch(name) is not None


# --- triggers --------------------------------------------------------------------------------
_CORE_TO_SEP = re.compile(r"[a-z]{0,9}[\\\"' t\t]{0,12}[:=]")  # JSON writes a tab as \t: hence the t
_CORE_TO_SEP_B = re.compile(_CORE_TO_SEP.pattern.encode())
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _core_words_cover_endings() -> bool:
    """Every name ending ends with a core word plus at most 9 letters (the trigger's reach)."""
    return all(
        any(core in words[-1] and len(words[-1]) - words[-1].rindex(core) - len(core) <= 9 for core in _CORES)
        for words in NAME_ENDINGS
    )


assert _core_words_cover_endings()


def _lower(s: str) -> str:
    return s.lower() if s.isascii() else s.translate(_ASCII_LOWER)  # same length, ASCII-only


def _name_hits(low: str) -> Iterator[tuple[str, int]]:
    """(core, position) where a core word is followed by a separator within reach."""
    for core in _CORES:
        i = low.find(core)
        while i >= 0:
            if _CORE_TO_SEP.match(low, i + len(core)):
                yield core, i
            i = low.find(core, i + 1)


def _url_hits(s: str) -> Iterator[int]:
    """Start of the `://` before an "@" with a ":" between them."""
    at = s.find("@")
    while at >= 0:
        scheme = s.rfind("://", 0, at)
        if scheme >= 0 and ":" in s[scheme + 3:at]:
            yield scheme
        at = s.find("@", at + 1)


def _runs(shape: str) -> Iterator[tuple[int, int]]:
    for m in _RUN_FIND.finditer(shape):
        yield m.span()


# --- the fast path: could anything in this canonical JSON change? ------------------------------
_KEEP_B = bytes(c if chr(c) in _B64 + ".~\\" else 32 for c in range(256))  # words: B64 runs and more
_KEEP_RAW_B = bytes(c if chr(c) in _B64 + ".~" else 32 for c in range(256))  # raw text: "\\" separates
# A JSON escape stands for one character no rule counts as part of a token (a control
# character, a quote, a backslash): the whole sequence separates words.
_JSON_ESCAPE_B = re.compile(rb"\\(?:u[0-9a-fA-F]{4}|[\s\S])?")
_KNOWN_PREFIXES_B = tuple(p.encode() for p in (*KNOWN_PREFIXES, "eyJ"))  # eyJ: a JWT starts at a boundary
_PIECES_B = bytes(32 if chr(c) in "+/=.~" else c for c in range(256))  # where a token may start in a word
_RUNS_B = bytes(32 if chr(c) in ".~" else c for c in range(256))  # a word's runs of [A-Za-z0-9+/=_-]
_CORES_B = tuple(core.encode() for core in _CORES)
assert {t for _, t, _ in DOTTED_TOKENS} == {"eyJ", "SG.", "ya29.", "Q~"}  # spelled out in _word_suspicious()
_WORD_CACHE: set[bytes] = set()


def suspicious(text: bytes, *, json: bool = True) -> bool:
    """Could any rule change a string inside this canonical JSON text (or raw UTF-8 text)?

    False means certainly not. It errs towards True; then the caller runs the rules.
    """
    if b"-----BEGIN" in text:
        return True
    low = text.lower()
    for core in _CORES_B:
        i = low.find(core)
        while i >= 0:
            if _CORE_TO_SEP_B.match(low, i + len(core)):
                return True
            i = low.find(core, i + 1)
    if _FLAG_FIND_B.search(low):
        return True
    at = text.find(b"@")
    while at >= 0:
        scheme = text.rfind(b"://", 0, at)
        if scheme >= 0 and b":" in text[scheme + 3:at]:
            return True
        at = text.find(b"@", at + 1)
    cache = _WORD_CACHE
    for w in [w for w in text.translate(_KEEP_B if json else _KEEP_RAW_B).split() if len(w) >= RUN_MIN]:
        if w in cache:
            continue
        if _word_suspicious(w):
            return True
        # Only clean words are kept (never a secret): paths and ids recur from record to record.
        if len(w) <= 256:
            if len(cache) >= 4096:
                cache.clear()
            cache.add(w)
    return False


def _word_suspicious(w: bytes) -> bool:
    """Would a rule change anything in this word? Exact for entropy, generous for the rest."""
    if b"\\" in w:  # JSON escapes in the word: they separate its parts
        return any(_word_suspicious(part) for part in _JSON_ESCAPE_B.sub(b" ", w).split() if len(part) >= RUN_MIN)
    if b"SG." in w or b"ya29." in w or b"Q~" in w:
        return True  # dotted formats (a JWT's "eyJ" is found like a known prefix)
    if _known_prefix_inside(w):
        return True
    # The entropy rule's own runs and parts, judged by the rule itself.
    return any(len(run) >= ENTROPY_MIN_LEN and _run_masks(run.decode("ascii"))
               for run in w.translate(_RUNS_B).split())


def _run_masks(tok: str) -> bool:
    """Would _mask_run change this run?"""
    if "=" in tok.rstrip("="):
        return any(part[:1] != "=" and _run_masks(part) for part in re.split(r"(=+)", tok))
    return looks_random(tok)


def _known_prefix_inside(w: bytes) -> bool:
    """Does a piece of w (split where a known token may start) begin with a known prefix?"""
    if w.startswith(_KNOWN_PREFIXES_B):
        return True
    if w.translate(None, b"+/=.~") == w:
        return False
    return any(piece.startswith(_KNOWN_PREFIXES_B) for piece in w.translate(_PIECES_B).split())


# --- the rules on one string ---------------------------------------------------------------------

def redact_string(s: str, mask: Masker, extra: re.Pattern | None = None) -> str:
    """Every rule, in order; each runs only where its trigger fired, and skips what is masked."""
    if "-----BEGIN" in s:
        s = PEM_RE.sub(lambda m: mask("private_key", m.group()), s)
    for kind, trigger, pattern in DOTTED_TOKENS:
        if trigger in s:
            s = pattern.sub(lambda m, kind=kind: mask(kind, m.group()), s)
    s = _sub_runs(s, RUN_MIN, lambda word: _mask_known(word, mask))
    if "@" in s:
        s = _splice(s, (_url_value(s, i) for i in _url_hits(s)), "url_password", mask)
    low = _lower(s)
    s = _splice(s, _name_values(s, low), None, mask)
    if "-" in s:
        s = _splice(s, (_flag_value(s, m.start()) for m in _FLAG_FIND.finditer(_lower(s))), "cli_flag", mask)
    if extra is not None:
        s = extra.sub(lambda m: _mask_custom(m, mask), s)
    return _sub_runs(s, ENTROPY_MIN_LEN, lambda word: _mask_run(word, mask))


def _sub_runs(s: str, min_len: int, fn: Callable[[str], str]) -> str:
    """Apply fn to each run of [A-Za-z0-9+/=_-] at least min_len long."""
    shape = s.translate(_SHAPE)
    out, last = [], 0
    for start, end in _runs(shape):
        if end - start < min_len:
            continue
        word = s[start:end]
        new = fn(word)
        if new != word:
            out.append(s[last:start])
            out.append(new)
            last = end
    if not out:
        return s
    out.append(s[last:])
    return "".join(out)


_PIECE_SEP = re.compile(r"[+/=]+")


def _mask_known(word: str, mask: Masker) -> str:
    """Known tokens where one may start: the word's start, or after "+", "/" or "=" in it."""
    if not _known_prefix_inside(word.encode()):
        return word
    out, last = [], 0
    for start in (0, *(m.end() for m in _PIECE_SEP.finditer(word))):
        if start < last or not word.startswith(KNOWN_PREFIXES, start):
            continue
        for kind, prefixes, pattern in _KNOWN_AT:
            m = pattern.match(word, start) if word.startswith(prefixes, start) else None
            if m:
                out += [word[last:start], mask(kind, m.group())]
                last = m.end()
                break
    return "".join(out) + word[last:] if out else word


def _mask_run(tok: str, mask: Masker) -> str:
    body = tok.rstrip("=")
    if "=" in body:  # name=value inside one run: judge the parts, keep the names
        return "".join(part if part[:1] == "=" else _mask_run(part, mask) for part in re.split(r"(=+)", tok))
    return mask("high_entropy", tok) if looks_random(tok) else tok


Span = tuple[int, int, str]  # (start, end, kind) of a value to mask


def _splice(s: str, spans: Iterator[Span | None], default_kind: str | None, mask: Masker) -> str:
    """Mask the given value spans (first one wins where they overlap)."""
    found = sorted({span for span in spans if span is not None})
    if not found:
        return s
    out, last = [], 0
    for start, end, kind in found:
        if start < last:
            continue
        out.append(s[last:start])
        out.append(mask(kind or default_kind or "secret", s[start:end]))
        last = end
    out.append(s[last:])
    return "".join(out)


def _value_span(m: re.Match | None, kind: str, *, name: str = "", quoted: bool = True) -> Span | None:
    """The value to mask; `quoted=False` lets code-like values (`self.token`) pass."""
    if m is None:
        return None
    group = "qv" if "q" in m.re.groupindex and m.group("q") is not None else "v"
    value = m.group(group)
    if benign_value(value, name=name, quoted=quoted):
        return None
    start, end = m.span(group)
    return start, end, kind


def _name_values(s: str, low: str) -> Iterator[Span | None]:
    starts = set()
    for core, i in _name_hits(low):
        if core == "auth" and low.startswith("authorization", i):
            yield _value_span(AUTH_RE.match(s, i), "authorization")
            continue
        if core == "cookie":
            yield _value_span(COOKIE_RE.match(s, i), "cookie")
            continue
        start = i
        while start > 0 and s[start - 1] in _NAME_CHARS:
            start -= 1
        if start in starts:
            continue
        starts.add(start)
        m = ASSIGN_RE.match(s, start)
        if m is None:
            continue
        name = m.group("name")
        if name.lower() in _NOT_SENSITIVE or name.lower().endswith(("authorization", "cookie")):
            continue
        yield _value_span(m, "assignment", name=name, quoted=m.group("q") is not None or name.isupper())


def _url_value(s: str, scheme: int) -> Span | None:
    start = scheme
    while start > 0 and s[start - 1] in _SCHEME_CHARS:
        start -= 1
    m = URL_RE.match(s, start)
    return _value_span(m, "url_password") if m else None


def _flag_value(s: str, i: int) -> Span | None:
    return _value_span(FLAG_RE.match(s, i), "cli_flag")


def _mask_custom(m: re.Match, mask: Masker) -> str:
    group = "secret" if "secret" in m.re.groupindex else (1 if m.re.groups else 0)
    if m.group(group) is None:
        return m.group()
    if group == 0:
        return mask("custom", m.group())
    start, end = m.span(group)
    base = m.start()
    return m.group()[: start - base] + mask("custom", m.group(group)) + m.group()[end - base:]
