"""What a secret looks like: the rules of rules.toml, compiled once, and how they run.

`redact` owns policy (modes, salt, the record document); this module owns the
rules and how they apply to one string. The rules are data (rules.toml, each
citing its upstream source); this module compiles them into:

- a keyword index (keywords.py: Hyperscan, pyahocorasick or a plain scan, with
  the same answers) that says which rules can match a text. A rule runs on a
  string only when one of its keywords occurs in it.
- the rule walk on one string (`RuleSet.redact`), and
- the fast path (`RuleSet.suspicious`), which asks the same keyword index about a
  record's whole canonical JSON. A string's characters appear in the JSON as they
  are or as an escape sequence; keywords hold no character JSON escapes, and the
  fast path reads the JSON with each escape sequence read as a blank, so every
  keyword in any string is a keyword in that text, every name the walk judges is
  a name there, and every run the entropy rule judges is a run there. Each hit is
  then checked with the rule's looser `verify` pattern (ASCII classes, on bytes,
  near the hit), the name judge or the entropy rule itself. Where the fast path
  finds nothing, the walk would change nothing.
"""

from __future__ import annotations

import base64
import bisect
import math
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Callable, Iterable, Iterator, cast

from agentwatch.record.redact import blobs, commands, formats, passwords
from agentwatch.record.redact.keywords import KeywordIndex

MASK_PREFIX = "[REDACTED:"
Masker = Callable[[str, str], str]  # (kind, secret) -> mask

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_IDENT_CLASS = "A-Za-z0-9_.-"
_IDENT_RUN = re.compile(f"[{_IDENT_CLASS}]+")


def ascii_lower(s: str) -> str:
    """Lower-case ASCII letters only: same length, and the same for a string and its JSON."""
    return s.lower() if s.isascii() else s.translate(_ASCII_LOWER)


# --- the keyword index --------------------------------------------------------------------------



# --- rules ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    regex: re.Pattern  # the match; group `v` (or the whole match) is what gets masked
    verify: re.Pattern | None  # a looser bytes pattern the fast path tries near a keyword hit in the JSON
    entropy: float | None
    allow: tuple[re.Pattern, ...]
    source: str
    case_sensitive: bool  # keywords matched as written (token prefixes) or on lower-cased text
    neighbours: str = ""  # a separator that must stand next to the match (";" in connection strings)
    distinctive: tuple[str, ...] = ()  # prefixes no code writes: a match starting so is masked whatever its entropy
    exact_shape: bool = False  # groups and lengths no code writes (`A3-XXXXXX-…`): masked whatever its entropy


@dataclass(frozen=True)
class EntropyRule:
    kind: str
    min_len: int
    max_len: int
    bits_factor: float
    single_case_min_len: int = 0  # 0: a run in one case never masks
    single_case_bits: float = 0.0


@dataclass(frozen=True)
class NameRule:
    kind: str
    words: frozenset[str]
    suffix_words: tuple[str, ...]  # words recognised at the end of a longer word ("dbpassword")
    key_qualifiers: frozenset[str]
    not_secret: tuple[re.Pattern, ...]
    keywords: tuple[str, ...]
    key_words: frozenset[str] = frozenset()  # "a key" without "secret": only a key-shaped value counts
    service_words: tuple[str, ...] = ()  # services the context rules name, found inside a name
    key_min_len: int = 16
    key_bits: float = 3.0
    always_secret: tuple[re.Pattern, ...] = ()  # names secret though an exclusion matches them


_OPERATOR = r"(?:=|:=|::=|:::=|\?=|=>|:|,|>)"
VERIFY_BEFORE, VERIFY_AFTER = 600, 1400  # bytes around a keyword hit where a rule's match must lie


class _Lazy:
    """A pattern compiled when it is first used: a process that runs few rules (the hook's slow
    path, a short-lived command) does not pay for compiling the two hundred it never runs."""

    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, source: str | bytes, flags: int = 0) -> None:
        self._source, self._flags, self._compiled = source, flags, None

    def _get(self) -> re.Pattern:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    @property
    def pattern(self) -> str | bytes:
        return self._source

    @property
    def groupindex(self) -> dict[str, int]:
        return dict(self._get().groupindex)

    def finditer(self, *args: Any) -> Iterator[re.Match]:
        return self._get().finditer(*args)

    def search(self, *args: Any) -> re.Match | None:
        return self._get().search(*args)

    def match(self, *args: Any) -> re.Match | None:
        return self._get().match(*args)

    def fullmatch(self, *args: Any) -> re.Match | None:
        return self._get().fullmatch(*args)


def _lazy(source: str | bytes, flags: int = 0) -> re.Pattern:
    return cast(re.Pattern, _Lazy(source, flags))


def _verify(pattern: str) -> re.Pattern:
    """A fast-path pattern, on bytes: ASCII classes mean what they mean on the rules' ASCII-flagged patterns."""
    return _lazy(pattern.encode("ascii"))


def _token_regex(spec: dict, *, bounded: bool) -> str:
    """The rule's pattern: a prefix and a body; bounded, the value `v` between its boundaries.

    After a distinctive prefix (`distinctive_prefixes`) the token runs on over the letters,
    digits, `_` and `-` glued to its body (`sk_live_…Extra`: a longer run is no other word), and
    copies glued together (`ghp_…ghp_…`) are masked as one run. A rule whose prefix is a word of
    its own (`API-`, `ext_`: `run_on = false`) keeps its format's length, as ids and page slugs
    start so too; its glued copies are still one run.
    """
    prefixes = "|".join(map(re.escape, sorted(spec["prefixes"], key=len, reverse=True)))
    lead = spec.get("lead", "")
    core = f"{lead}(?:{prefixes})(?:{spec['body']})"
    if not bounded:
        return core
    before = spec.get("before", "A-Za-z0-9_.-")
    after = spec.get("after", "A-Za-z0-9")
    own = distinctive_prefixes(spec)
    if spec.get("repeat"):
        core = f"(?:{core})+"
    elif own:
        stop = "|".join(map(re.escape, sorted(own, key=len, reverse=True)))
        rest = [p for p in spec["prefixes"] if p not in own]
        plain = [f"{lead}(?:{'|'.join(map(re.escape, sorted(rest, key=len, reverse=True)))})(?:{spec['body']})"] if rest else []
        mine = f"{lead}(?:{stop})(?:{spec['body']})"
        if spec.get("run_on", True):
            glued = f"(?:{mine}(?:(?!{stop})[A-Za-z0-9_-])*+)+"
        else:
            glued = f"{mine}(?:(?=[A-Za-z0-9_-]*?{mine})[A-Za-z0-9_-]*?(?:{mine})+)?"
        core = "|".join([glued, *plain])
    return f"(?<![{before}])(?P<v>{core})(?![{after}])"


_SEPARATORS = "_-.~:="
_CODE_BODY = re.compile(r"\[[A-Z0-9-]+\]\{[0-9]+\}")


def _min_width(pattern: str) -> int:
    try:
        import re._parser as sre  # type: ignore[import-not-found]
    except ImportError:  # Python < 3.11
        import sre_parse as sre  # type: ignore[no-redef]
    return sre.parse(pattern).getwidth()[0]


def distinctive_prefixes(spec: dict) -> tuple[str, ...]:
    """The prefixes of a token rule that no identifier, word, path or digest an ordinary program writes can start.

    A prefix is distinctive when the rule is found by its prefixes (not keyed on a service
    name because the prefix is common), nothing of the token stands before it, the
    token it starts is 12 or more characters, and either
    - it is 4 or more characters with a separator (`_ - . ~ : =`) after its first
      (`ghp_`, `xoxb-`, `glpat-`, `sk_live_`, `shippo_live_`, `hvs.`), or
    - it is a code of 4 upper-case letters followed by a fixed number of upper-case
      letters and digits (`AKIA` and 16 of `[A-Z2-7]`).
    A placeholder in such a format (`ghp_xxxx...`, `sk_live_aaaa...`) is still masked: it
    cannot be told from a key by its look, and it is not code.
    """
    if spec.get("keywords") or spec.get("lead") or spec.get("distinctive") is False:
        return ()
    body = _min_width(spec["body"])
    out = []
    for p in spec["prefixes"]:
        if len(p) + body < 12:
            continue
        if len(p) >= 4 and any(c in _SEPARATORS for c in p[1:]):
            out.append(p)
        elif len(p) == 4 and p.isalpha() and p.isupper() and _CODE_BODY.fullmatch(spec["body"]):
            out.append(p)
    return tuple(out)


def _context_regex(spec: dict) -> str:
    names = "|".join(map(re.escape, spec["names"]))
    return (
        rf"(?i:(?<![A-Za-z0-9])[A-Za-z0-9_.-]{{0,50}}?(?:{names})[A-Za-z0-9_. \t-]{{0,20}}(?:\\{{0,2}}[\"'`])?)"
        rf"[ \t]{{0,3}}{_OPERATOR}[ \t]*(?:[@$]?\\{{0,2}}[\"'`])?[ \t\r\n]*(?:\\[nrt][ \t]*)?"
        rf"(?P<v>(?i:{spec['value']}))(?![A-Za-z0-9_-])"
    )


def _context_verify(spec: dict) -> str:
    names = "|".join(map(re.escape, spec["names"]))
    return rf"(?i:(?:{names})[\s\S]{{0,400}}?(?:{spec['value']}))"  # 100 characters are at most 400 bytes


class RuleSet:
    """The compiled rules of one rules file."""

    def __init__(self, data: dict, *, backend: str | None = None) -> None:
        if data.get("version") != 1:
            raise ValueError("unsupported rules file version")
        rules: list[Rule] = []
        table: list[tuple[str, bool, tuple[int, ...]]] = []  # (keyword, case-sensitive, rule ids)

        def add(rule: Rule, words: Iterable[str]) -> None:
            rules.append(rule)
            table.extend((kw, rule.case_sensitive, (len(rules) - 1,)) for kw in words)

        def compiled(specs: Iterable[str]) -> tuple[re.Pattern, ...]:
            return tuple(_lazy(a) for a in specs)

        # Token formats first: where two rules mask the same value, the more specific kind wins.
        for spec in data.get("token", ()):
            keywords = spec.get("keywords")
            verify = None if spec.get("fast_path") == "keyword" else _verify(_token_regex(spec, bounded=False))
            add(Rule(spec["id"], spec["kind"], _lazy(_token_regex(spec, bounded=True), re.ASCII), verify,
                     spec.get("entropy"), compiled(spec.get("allow", ())), spec["source"], keywords is None,
                     distinctive=distinctive_prefixes(spec), exact_shape=spec.get("exact_shape", False)),
                keywords or spec["prefixes"])
        for spec in data.get("context", ()):
            add(Rule(spec["id"], spec["kind"], _lazy(_context_regex(spec), re.ASCII), _verify(_context_verify(spec)),
                     spec.get("entropy"), compiled(spec.get("allow", ())), spec["source"], False), spec["names"])
        for spec in data.get("pattern", ()):
            verify = _verify(spec["verify"]) if "verify" in spec else None
            add(Rule(spec["id"], spec["kind"], _lazy(spec["regex"], re.ASCII), verify, spec.get("entropy"),
                     compiled(spec.get("allow", ())), spec["source"], False, spec.get("neighbours", "")),
                spec["keywords"])
        # Credential-bearing flags of known tools (commands.toml): found by the tool's name.
        # Credential arguments of well-known calls (formats.CALLS): found by the calls' words.
        add(Rule(CALLS_ID, formats.KIND, re.compile(r"(?!)"), _verify(formats.call_verify_pattern().decode()), None, (),
                 "formats.CALLS", False), formats.CALL_KEYWORDS)
        add(Rule(COMMANDS_ID, commands.KIND, re.compile(r"(?!)"), re.compile(commands.verify_pattern()), None, (),
                 "commands.toml", False), commands.tools())
        self.rules: tuple[Rule, ...] = tuple(rules)
        names = data["names"]
        words = frozenset(names["words"]) | frozenset(formats.OTHER_LANGUAGE_PASSWORDS)
        self.names = NameRule(
            kind=names["kind"], words=words,
            suffix_words=tuple(sorted((w for w in words if len(w) >= 5), key=len, reverse=True)),
            key_qualifiers=frozenset(names["key_qualifiers"]),
            not_secret=tuple(re.compile(p) for p in names["not_secret"]),
            always_secret=tuple(re.compile(p) for p in names.get("always_secret", ())),
            keywords=tuple(sorted(_minimal_substrings(words | {"key"}))),
            key_words=frozenset(names.get("key_words", ())),
            service_words=tuple(sorted({n.lower() for spec in data.get("context", ()) for n in spec["names"]
                                        if len(n) >= 4 and n.isascii()})),
            key_min_len=names.get("key_value_min_len", 16),
            key_bits=names.get("key_value_bits", 3.0),
        )
        self.NAMES = len(self.rules)  # the rule id the name keywords map to
        table.extend((kw, False, (self.NAMES,)) for kw in self.names.keywords)
        table.extend((kw, False, (self.NAMES,)) for kw in (*self.names.key_words, *self.names.service_words,
                                                            *formats.CREDENTIAL_COLUMNS))
        e = data["entropy"]
        self.entropy = EntropyRule(e["kind"], e["min_len"], e["max_len"], e["bits_factor"],
                                   e.get("single_case_min_len", 0), e.get("single_case_bits", 0.0))
        self.index = KeywordIndex(table, backend=backend)
        prefixes = sorted({p for r in self.rules for p in r.distinctive})
        self._distinctive = KeywordIndex([(p, True, ()) for p in prefixes], backend=backend) if prefixes else None
        self._clean_runs: set[bytes] = set()  # runs seen not to mask (never a secret)
        self._secret_name = lru_cache(maxsize=8192)(self._secret_name_uncached)  # a record's keys recur
        self._secret_chunk = lru_cache(maxsize=8192)(self._secret_chunk_uncached)
        self._key_chunk = lru_cache(maxsize=8192)(self._key_chunk_uncached)
        self._key_name = lru_cache(maxsize=8192)(self._key_name_uncached)

    # -- names ------------------------------------------------------------------------------------
    def secret_name(self, name: str) -> bool:
        """A name (key, variable, parameter path) that says its value is a secret."""
        return self._secret_name(name)

    def _secret_name_uncached(self, name: str) -> bool:
        if len(name) > 256:
            return False
        return any(self._secret_chunk(chunk) for chunk in _IDENT_RUN.findall(name))

    def _secret_chunk_uncached(self, chunk: str) -> bool:
        words = name_words(chunk)
        if not words:
            return False
        joined = "-".join(words)
        n = self.names
        if any(p.search(joined) for p in n.always_secret):
            return True
        if any(p.search(joined) for p in n.not_secret):
            return False
        for i, w in enumerate(words):
            if w in n.words or (w[-1:] == "s" and w[:-1] in n.words):
                return True
            if w in ("key", "keys") and i and words[i - 1] in n.key_qualifiers:
                return True
            if len(w) > 5 and w.endswith(n.suffix_words) or w[-1:] == "s" and w[:-1].endswith(n.suffix_words):
                return True
            if len(w) > 3 and w.endswith("pwd") and w[:-3] not in _PWD_NOT_HELD:
                return True  # `dbpwd`, `ROOTPWD`: `pwd` ends no other word (`OLDPWD` is excluded above)
        return False

    def placeholder(self, value: str) -> bool:
        """A stand-in for a secret (a reference, a template, filler, a path, a permission level)."""
        return _placeholder(value) or enumerated_or_reference(value)

    def structural(self, value: str) -> bool:
        """An opening bracket or a version range: `structural_value`."""
        return structural_value(value)

    def message(self, value: str) -> bool:
        """A sentence or label written for a person: `message_text`."""
        return message_text(value)

    def pair_password(self, name: str, value: str) -> bool:
        """`pass` or `pwd` naming a pair in structured or configuration text: `pair_password`."""
        return pair_password(name, value)

    def code_benign(self, value: str, name: str, quoted: bool, literal: bool = False) -> bool:
        """The line rules' judgement of a value as code (a variable, a type, a label): `benign_value`.

        `literal`: the text is not source code, so an unquoted value is a literal, as after an
        environment name (only references, placeholders, labels and the like stay).
        """
        if literal and not quoted and _TYPE_WORD.fullmatch(value):
            return True  # `token: string` in a document's code block: a type, benign by principle
        return benign_value(value, name=name, quoted=quoted, env=literal or name.isupper() and not quoted)

    def key_name(self, name: str) -> int:
        """A name that says "a key" or names a known service, without a secret word: 2 qualified, 1 a lone key, 0 not.

        Such a name makes its value secret only when the value has the shape of a key (`key_shaped`).
        """
        return self._key_name(name)

    def _key_name_uncached(self, name: str) -> int:
        if len(name) > 256:
            return 0
        return max((self._key_chunk(chunk) for chunk in _IDENT_RUN.findall(name)), default=0)

    def _key_chunk_uncached(self, chunk: str) -> int:
        words = name_words(chunk)
        if not words:
            return 0
        n = self.names
        if any(p.search("-".join(words)) for p in n.not_secret):
            return 0
        low = chunk.lower()
        if any(w in low for w in n.service_words):
            return 2
        while len(words) > 1 and words[-1].isdigit():
            words.pop()  # key2, KEY_1
        if words[-1] in n.key_words:  # the last word: `keyStr`, `issuerKeyHash` name something else
            return 2 if len(words) > 1 else 1
        return 0

    def key_shaped(self, value: str, qualified: bool) -> bool:
        """A value that looks like a key: letters and digits, varied, not words or a path; past hex after a lone key."""
        n = self.names
        if not max(n.key_min_len, KEY_VALUE_MIN) <= len(value) <= KEY_VALUE_MAX or not _KEY_VALUE.fullmatch(value):
            return False
        digits = sum(c.isdigit() for c in value)
        if digits < 2 or sum(c.isalpha() for c in value) < 2 or value[0] in "/.~":
            return False
        if not qualified and _NOT_HEX.isdisjoint(value) and (len(value) < 32 or not value.isalnum()):
            return False  # `key = <uuid>` after a lone key: an id as often as a credential
        if sum(len(m) for m in _SEQUENCES.findall(value)) >= 0.5 * len(value):
            return False  # an alphabet written out (`0123456789abcdefghijklmnopqrstuvwxyz`), not a key
        if _SEMVER.fullmatch(value):
            return False  # a version: `v0.0.0-20161001094733-a6f4afe4910c` (a Go pseudo-version) after a module
        if _placeholder(value) or identifier_like(value) and digits < 4:
            return False  # words (`getUserSettings2`), not a key; random letters often read as words too
        segments = _SEGMENT_SEP.split(value)
        if len(segments) >= 2 and all(_SIMPLE_SEGMENT.fullmatch(seg) for seg in segments if seg):
            return False  # `feature_flag_2024_v2`, `app.v1.settings`: words and numbers
        if "/" in value and all(_WORDLIKE_SEGMENT.fullmatch(seg) for seg in value.split("/")):
            return False  # a relative path of words (an object key)
        return shannon(value) >= n.key_bits

    def _key_value_after(self, data: bytes, hi: int) -> bool:
        """Fast path: a key-shaped run starting within reach after a key name ending at data[hi]."""
        for m in _KEY_RUN_B.finditer(data, hi, hi + KEY_VALUE_REACH_BYTES + KEY_VALUE_MAX + 1):
            if m.start() - hi > KEY_VALUE_REACH_BYTES:
                return False
            if self.key_shaped(m.group().decode("ascii"), True):
                return True
        return False

    # -- which rules can fire -----------------------------------------------------------------------
    def rules_in(self, text: str) -> set[int]:
        return self.index.rules_in(text.encode("utf-8", "surrogatepass"))

    def suspicious(self, data: bytes | str, *, json: bool = True) -> bool:
        """Could any rule change a string inside this canonical JSON (or this one string)?

        False means certainly not; True means the walk must look.
        """
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        if passwords.present(data, json):
            return True  # a value shaped like a strong password needs no name beside it
        if b"\x1b[" in data or json and b"\\u001b[" in data:
            data = _ANSI_CSI_B.sub(b" ", data)  # a terminal's colours around a token, as the walk's view blanks them
        if json and b"\\" in data:
            data = _JSON_ESCAPE_B.sub(b" ", data)
            if b"\\" in data:
                return True  # a backslash that escapes nothing: not canonical JSON, let the walk look
        if any(marker in data for marker in formats.PATH_MARKERS):
            return True  # a credential file named in the text (a here-document writing it): the walk reads it
        keywords, rules = self.index.keywords, self.rules
        windows: dict[int, list[list[int]]] = {}  # rule -> merged [lo, hi) regions around its hits
        for start, k in self.index.hits(data):
            kw, _, ids = keywords[k]
            for rid in ids:
                if rid == self.NAMES:
                    if self._name_hit(data, start, len(kw)):
                        return True
                    continue
                if rules[rid].verify is None:
                    return True
                lo, hi = max(0, start - VERIFY_BEFORE), start + VERIFY_AFTER
                regions = windows.setdefault(rid, [])
                if regions and lo <= regions[-1][1]:
                    regions[-1][1] = max(regions[-1][1], hi)  # hits come in order: extend the last region
                else:
                    regions.append([lo, hi])
        for rid, regions in windows.items():
            verify = rules[rid].verify
            assert verify is not None
            if any(verify.search(data, lo, hi) for lo, hi in regions):
                return True
        return self._entropy_hit(data)

    def _name_hit(self, data: bytes, start: int, n: int) -> bool:
        """Is the identifier around data[start:start+n] a secret name?"""
        lo = start
        while lo > 0 and data[lo - 1] in _IDENT_BYTES:
            lo -= 1
        hi = start + n
        while hi < len(data) and data[hi] in _IDENT_BYTES:
            hi += 1
        chunk = data[lo:hi].decode("ascii")
        if chunk.lower().lstrip("_") in PAIR_PASSWORD_NAMES and (
                _PAIR_OPERATOR_B.match(data, hi) or _PAIR_NAME_BEFORE_B.search(data, max(0, lo - 24), lo)
                or lo and data[lo - 1] == 60 and data[hi:hi + 1] in (b">", b" ")):  # 60: `<`
            return True  # `"pass": "..."`, `pwd: x`, `{"key": "PASS", "value": …}`, `<Pass>…`: a pair named `pass` or `pwd`
        if chunk.lower() in formats.PAIR_HEADER_NAMES and _PAIR_NAME_BEFORE_B.search(data, max(0, lo - 24), lo):
            return True  # `{"name": "Authorization", "value": …}`: a credential header in a list of pairs
        if chunk.lower() in formats.CREDENTIAL_COLUMNS:
            return True  # `authentication_string`: a table's column of password hashes (formats._tables)
        return self._secret_chunk(chunk) or bool(self._key_chunk(chunk)) and self._key_value_after(data, hi)

    def _entropy_hit(self, data: bytes) -> bool:
        """Would the entropy rule mask a run in this text? Runs are found in C (translate, a literal search)."""
        clean = self._clean_runs
        for m in _LONG_RUN.finditer(data.translate(_RUN_SHAPE)):
            word = data[m.start():m.end()]
            if word in clean:
                continue
            if self._run_masks(word.decode("ascii")) and not self._only_after_digest_labels(data, word):
                return True
            if len(word) <= 256:
                if len(clean) >= 8192:
                    clean.clear()
                clean.add(word)
        return False

    @staticmethod
    def _only_after_digest_labels(data: bytes, word: bytes) -> bool:
        """Does every maximal occurrence of this run follow a digest label (go.sum `h1:`)?"""
        i = data.find(word)
        while i >= 0:
            end = i + len(word)
            whole = (i == 0 or data[i - 1] not in _RUN_BYTES) and (end == len(data) or data[end] not in _RUN_BYTES)
            if whole and not data[max(0, i - 7):i].endswith(_DIGEST_LABELS_B) and not _PUBLIC_LABEL_B.search(
                    data[max(0, i - 40):i]):
                return False
            i = data.find(word, i + 1)
        return True

    # -- the walk on one string ------------------------------------------------------------------------
    def redact(self, s: str, mask: Masker, extra: re.Pattern | None = None, path: str = "") -> str:
        """Every rule whose keyword occurs in s; where matches overlap, the earliest, then longest, wins.

        `path` is the file the text came from, when the record names one (its format).
        Masks already in s are kept as they are: no rule masks a mask again. Large blobs and
        binary text are bounded first (blobs.py): the rules never run over a blob's middle.
        """
        if len(s) >= blobs.BINARY_MIN:
            if blobs.looks_binary(s):
                return blobs.redact_printable_runs(s, lambda run: self.redact(run, mask, extra, path))
            found = self._split_blobs(s, blobs.blob_spans(s))
            if found:
                return blobs.redact_around_blobs(s, found, lambda text, m: self._redact_whole(text, m, extra, path),
                                                 mask, lambda text: self._redact_whole(text, mask, extra, path))
        return self._redact_whole(s, mask, extra, path)

    def _split_blobs(self, s: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Blobs cut where something the rules read stands in a middle they would not see.

        A token or an assignment glued into a long run (`…aSLACK_BOT=xoxb-…`, `…aPASSWORD=…`
        between two base64 runs) is part of the run. Cut at a distinctive token prefix, or at an
        `=` that is not padding (base64 has `=` only at its end), each piece keeps its first and
        last EDGE characters in view, so the rules read the token or the name and its value. A
        piece shorter than a blob is read whole.
        """
        if not spans:
            return spans
        data = s.encode("ascii", "replace")  # one byte per character, as blobs.blob_spans reads it
        out = []
        for a, b in spans:
            lo, hi = a + blobs.EDGE, b - blobs.EDGE
            cuts = [lo + m.start() for m in _ASSIGNED.finditer(data[lo:hi])]
            if self._distinctive is not None:
                cuts += [lo + start for start, _ in self._distinctive.hits(data[lo:hi])]
            pos = a
            for at in sorted(cuts):
                if at - pos >= blobs.BLOB_RUN:
                    out.append((pos, at))
                pos = max(pos, at)
            if b - pos >= blobs.BLOB_RUN:
                out.append((pos, b))
        return out

    def _redact_whole(self, s: str, mask: Masker, extra: re.Pattern | None = None, path: str = "") -> str:
        """Every span the rules find in s, spliced; a unified diff is read as the file it changes (`diff_view`)."""
        view = diff_view(s) if "@@ " in s else s
        if "\x1b[" in view:
            view = _ANSI_CSI.sub(lambda m: " " * len(m.group()), view)  # a terminal's colours: presentation, not text
        spans = self._spans(view, path)
        if spans:
            spans += _repeats(s, spans)
            if MASK_PREFIX in s:
                masks = [m.span() for m in MASK_RE.finditer(s)]
                spans = [sp for sp in spans if not any(a < sp[1] and sp[0] < b for a, b in masks)]
            s = _splice(s, spans, mask)
        if extra is not None:
            s = extra.sub(lambda m: _mask_custom(m, mask), s)
        return self._mask_runs(s, mask)

    def _spans(self, s: str, path: str) -> list[tuple[int, int, str]]:
        data = s.encode("utf-8", "surrogatepass")
        hits = self.index.hits(data)
        ids: set[int] = set()
        for _, k in hits:
            ids.update(self.index.keywords[k][2])
        spans: list[tuple[int, int, str]] = formats.path_spans(s, path) if path else []
        if "<<" in s and any(marker in s for marker in formats.PATH_MARKER_TEXTS):
            spans.extend(formats.heredoc_path_spans(s))  # `cat > ~/.pgpass <<EOF`: the file names the format
        for rid in sorted(ids):
            if rid == self.NAMES:
                spans.extend(self._assignment_spans(s, data, hits, bool(path) and formats.literal_text(s, path),
                                                    bool(path) and formats.source_code(path)))
                spans.extend(formats.spans(self, s, path))  # the format-aware layer: pairs by format
                continue
            rule = self.rules[rid]
            if rule.id == CALLS_ID:
                spans.extend(formats.call_spans(self, s))
                continue
            if rule.id == COMMANDS_ID:
                spans.extend(commands.spans(s))
                continue
            for m in rule.regex.finditer(s):
                group = "v" if "v" in m.re.groupindex and m.group("v") is not None else 0
                value = m.group(group)
                if not value or any(a.search(value) for a in rule.allow):
                    continue
                if rule.distinctive and value.startswith(rule.distinctive) or rule.exact_shape:
                    pass  # a format no code writes: its placeholders too (the allow list still holds)
                elif _FILLER.search(value) and not filler_beside_secret(value) or not rule.case_sensitive and _placeholder(value):
                    continue
                elif rule.entropy is not None and shannon(value) < rule.entropy:
                    continue
                if rule.id == "url-credentials" and not _url_credentials_ok(m):
                    continue
                if rule.id == "basic-credentials" and not basic_credentials(value):
                    continue
                start, end = m.span(group)
                if rule.neighbours and not _has_neighbour(s, m.start(), end, rule.neighbours):
                    continue
                if "name" in m.re.groupindex and not self.secret_name(m.group("name")):
                    continue
                if not rule.case_sensitive and _CALL_START.match(value):
                    continue  # `"Authorization": headers()["Authorization"]`: code, not a credential
                last_word = value.split()[-1:] or [""]
                if rule.kind == "cli_flag" and _FLAG_REFERENCE.fullmatch(last_word[0].strip("\"'")):
                    continue  # `-passin env:KEY_PASS`, `-u "$USER:$PASS"`: where the secret is, not the secret
                spans.append((start, end, rule.kind))
        found = list(spans)  # a rule that knows the value's kind masks it: the shape is the last resort
        spans.extend(sp for sp in passwords.spans(s) if not any(a < sp[1] and sp[0] < b for a, b, _ in found))
        return spans

    def _assignment_spans(self, s: str, data: bytes, hits: list[tuple[int, int]],
                          literal_file: bool = False, code_file: bool = False) -> Iterator[tuple[int, int, str]]:
        """`name = value` where the name is secret: tried at each identifier holding a name keyword."""
        starts: set[int] = set()
        ascii_text = len(data) == len(s)
        for i, k in hits:
            if self.NAMES not in self.index.keywords[k][2]:
                continue
            if not ascii_text:
                i = len(data[:i].decode("utf-8", "surrogatepass"))  # a byte offset, as a character offset
            lo = i
            while lo > 0 and s[lo - 1] in _IDENT_SET:
                lo -= 1
            while lo < i and s[lo] == ".":
                lo += 1  # VB's `With {.Password = "…"}`: a member of the object just made
            if lo in starts:
                continue
            starts.add(lo)
            span = self._assignment_at(s, lo, literal_file, code_file)
            if span is not None:
                yield span

    def _assignment_at(self, s: str, lo: int, literal_file: bool = False,
                       code_file: bool = False) -> tuple[int, int, str] | None:
        """`name = value` at s[lo] when the name is secret; `literal_file`: s is a file that is not
        code (formats.literal_text), where an unquoted `name=value` holds a literal anywhere on a line."""
        if lo and s[lo - 1] == "<":
            m = XML_RE.match(s, lo - 1)
            if m and self.secret_name(m.group("name")) and not benign_value(m.group("v").strip()):
                start, end = m.span("v")
                return start, end, "assignment"
        at = lo
        if at and s[at - 1] in "\"'":
            at -= 1
            while at and s[at - 1] == "\\" and lo - at < 3:
                at -= 1
        m = ASSIGN_RE.match(s, at)
        if m is None and at != lo:
            m = ASSIGN_RE.match(s, lo)
            at = lo
        if m is None and _line_start(s, lo):
            m = DSL_RE.match(s, lo) or CUT_MEMBER_RE.match(s, lo)
            at = lo
        if m is None:
            return self._compared_before(s, lo) or self._equals_at(s, lo) or self._label_at(s, lo)
        name = m.group("name")
        keyed = 0
        if not self.secret_name(name) and not self._declared_password(m, s, at):
            keyed = self.key_name(name)
            if not keyed:
                return None
            if keyed == 1 and m.group("jq") is None and self._qualifier_before(s, at):
                keyed = 2
        op = m.group("op")
        quoted = m.group("q") is not None
        if op in ("==", "===", "!=", "!==") and not quoted:
            return None  # a comparison with a variable, not a literal
        group = "qv" if quoted else "v"
        start, end = m.span(group)
        line_start = not m.group("jq") and _line_start(s, at)
        if not quoted and line_start and op == ":":
            # YAML: the value runs to the end of the line (or a comment)
            eol = _EOL.search(s, start)
            end = eol.start() if eol else len(s)
            while end > start and s[end - 1] in " \t,;":
                end -= 1
        value = s[start:end]
        if op == ":" and not quoted and not m.group("jq") and not line_start and not name.isupper() and (
                not any(c.isdigit() for c in value)):
            return None  # `if not token: raise`, `def f(token: str)`: a colon in code, not YAML
        if op in _COMPARISONS and not keyed:
            # a literal a password is checked against is that password, whatever it reads like
            return (start, end, "assignment") if self._compared(name, value) else None
        if op in _COMPARISONS and not _COMPARED.search(name):
            return None
        # `"user=a&pwd=x"`: data, not code; `f"PWD={cfg['pw']}"`, `Password={2}` interpolate a value
        literal = not quoted and op == "=" and not value.startswith(_INTERPOLATION) and (
            literal_file or _inside_string(s, at))
        if not quoted and op == ":" and lo and s[lo - 1] == "{" and (
                _FORMAT_SPEC.fullmatch(value) or s[lo - 2:lo] == "${" and value.startswith(("+", "?"))):
            return None  # `f"{webhook_wall:.2f}"`: a format; `${TOKEN:+set}`, `${TOKEN:?unset}`: what the shell says
        if not quoted and message_text(value + _rest_of_line(s, end)):
            return None  # `- DD_API_KEY: Your Datadog API key`: a description runs on to the line's end
        # In source code an unquoted value is code where the statement reads as code: a quoted name (a
        # dict's key, `{"MY_SECRET": binding}`) or `NAME = value` spaced as code is; `NAME=value` and
        # `NAME: value` may be a .env or YAML text held in a string, whose upper-case names hold literals.
        code = code_file and not literal and (m.group("jq") is not None or op == "=" and s[m.start("op") - 1] in " \t")
        if code_file and not quoted and (_TYPE_RE.fullmatch(value) or value.startswith("(") or (
                op == ":" and " ? " in s[s.rfind("\n", 0, at) + 1:at])):
            return None  # `TOKEN_BUFFER: number`, `X: (keyof T)[]`, `c ? A_TOKEN : b`: a type, a conditional
        upper_env = name.isupper() and not quoted and not code
        if benign_value(value, name=name, quoted=quoted, env=upper_env or literal, code=code):
            return None
        if not quoted and value.isdigit() and formats.number_table(s):
            return None  # `session_secret: 600000` in a map of numbers (formats.number_table)
        if keyed and (start - m.end("name") > KEY_VALUE_REACH or not self.key_shaped(value, keyed == 2)):
            return None  # a key name's value counts only when it has a key's shape
        if op == "," and not quoted:
            return None  # `("token_refresh_failed", exc_info=True)`: a pair's value is a literal, else code
        if op == "," and not self.key_shaped(value, True) and (keyed or not self._call_pair(s, value, m.end())):
            return None  # `("X-Api-Key", "<key>")` is a pair; `["api_key", "api_secret"]` a list of names
        return start, end, "assignment"

    def _qualifier_before(self, s: str, lo: int) -> bool:
        """`API key: …`, `Secret Key = …`: a lone key whose qualifier is a word before it, one blank apart.

        A label a person reads (a CLI's output, a README, a note) spells the name as words; the
        qualifier says what kind of key it is, as it does joined to it (`api_key`, `secretKey`).
        Without an operator (`signing key 05d4…`) a hex value stays: prose names a fingerprint so.
        """
        m = _WORD_BEFORE.search(s, max(0, lo - 24), lo)
        return m is not None and m.group(1).lower() in self.names.key_qualifiers

    @staticmethod
    def _declared_password(m: re.Match, s: str, at: int) -> bool:
        """`String pwd = "…";`, `const pass = '…'`, `"user=a&pwd=…"`: a literal under `pass`, `pwd` or `pw`.

        As words of text these are a test result or the working directory ([names].not_secret);
        a quoted literal assigned to one, or a pair's value inside a string literal (a query
        string, a conninfo), is a password, unless it is a path (`pwd = "/srv"`).
        """
        name = m.group("name").rsplit(".", 1)[-1].lstrip("_")  # `_pass = "…"`: a private name is still one
        if m.group("q") is not None:  # (inside a literal, the quote after `=` closes it: `';PWD=' . $pw`)
            return (m.group("op") in ("=", ":=", ":", *_COMPARISONS) and not _inside_string(s, at)
                    and pair_password(name, m.group("qv")))
        value = m.group("v")
        return (m.group("op") == "=" and not value.startswith(_INTERPOLATION) and _inside_string(s, at)
                and pair_password(name, value))

    def _call_pair(self, s: str, value: str, end: int) -> bool:
        """`put("password", "hunter2")`: a secret's name and a literal as a call's last two arguments.

        A list of names (`["password", "password_confirmation"]`, `("token", "secret", ...)`) goes on
        or closes with a bracket; a pair's literal closes the call (or the line), and is not a name.
        """
        after = s[end:end + 8].lstrip(" \t")
        if not (after == "" or after[0] in ")\n;" or after.startswith("\\n")):
            return False
        return not self.secret_name(value) and not _NAME_LIKE.fullmatch(value) and not _ENCODING.fullmatch(value)

    def _compared(self, name: str, value: str) -> bool:
        """Is a literal compared with a secret-named value the secret it accepts?

        With a password or a key, whatever it reads like (`if password == "this cool password"`),
        unless it is empty or a placeholder. Parsers compare tokens too (`token === "--flag"`), so
        with another secret name (`token`, `auth`) only a literal with a key's shape counts.
        """
        if compared_benign(value):
            return False
        return bool(_COMPARED.search(name)) or self.key_shaped(value, True)

    def _compared_before(self, s: str, lo: int) -> tuple[int, int, str] | None:
        """`"f62e…" == password`: a literal on the left of a comparison with a secret-named variable."""
        m = _COMPARED_BEFORE.search(s, max(0, lo - 300), lo)
        if m is None:
            return None
        m_name = _IDENT_AT.match(s, lo)
        name = m_name.group().rsplit(".", 1)[-1] if m_name else ""
        if not name or not self.secret_name(name) or not self._compared(name, m.group("v")):
            return None
        return m.start("v"), m.end("v"), "assignment"

    def _equals_at(self, s: str, lo: int) -> tuple[int, int, str] | None:
        """`password.equals("…")`, `"…".equals(pwd)` (Java), `strcmp($pwd, "…")`, `hash_equals("…", $token)`
        (PHP): comparisons of strings by a call, read as `==` is."""
        m = _EQUALS_AFTER.match(s, lo)
        if m is None and _STRCMP_OPEN.search(s, max(0, lo - 40), lo):
            m = _STRCMP_AFTER.match(s, lo)
        if m is None:
            m_name = _IDENT_AT.match(s, lo)
            window = max(0, lo - 300)
            before = (_EQUALS_BEFORE.search(s, window, lo) or _STRCMP_BEFORE.search(s, window, lo)) if m_name else None
            if before is None or m_name is None:
                return None
            name, v, start = m_name.group().rsplit(".", 1)[-1], before.group("v"), before.start("v")
        else:
            name, v, start = m.group("name").rsplit(".", 1)[-1], m.group("v"), m.start("v")
        name = re.sub(r"^[Gg]et_?(?=[A-Za-z])", "", name)  # a getter's value: `user.getPassword().equals("…")`
        if not self.secret_name(name) or not self._compared(name, v):
            return None
        return start, start + len(v), "assignment"

    def _label_at(self, s: str, lo: int) -> tuple[int, int, str] | None:
        """`acme SECRET <key>`: a label and a value with blanks between, no operator.

        Prose and code put words after a name, so only a value with the shape of a key counts
        (`key_shaped`: letters and digits, varied, not words, a path or an alphabet), and after
        a lone `key` only one with a letter past `f` (never hex: `key <commit sha>` in prose).
        """
        m = LABEL_RE.match(s, lo)
        if m is None:
            return None
        name = m.group("name")
        if self.secret_name(name):
            qualified = True
        else:
            keyed = self.key_name(name)
            if not keyed:
                return None
            qualified = keyed == 2 or self._qualifier_before(s, lo) and not _NOT_HEX.isdisjoint(m.group("v"))
        value = m.group("v")
        if not qualified and _NOT_HEX.isdisjoint(value):
            return None
        if not self.key_shaped(value, qualified):
            return None
        start, end = m.span("v")
        return start, end, "assignment"

    # -- high-entropy runs --------------------------------------------------------------------------
    def _mask_runs(self, s: str, mask: Masker) -> str:
        out, last = [], 0
        public = [m.span() for m in _PUBLIC_PEM.finditer(s)] if "-----BEGIN" in s else []
        for m in _RUN.finditer(s):
            run = m.group()
            start, end = m.span()
            if _digest_context(s, start) or not self._run_masks(run):
                continue
            if public and any(a <= start and end <= b for a, b in public):
                continue  # a public key or a certificate: published by its owner
            if _identifier_value(s, start):
                continue  # `credentialId: <run>`, `?id=<run>`: an identifier names, it does not authorize
            out += [s[last:start], self._mask_run(run, mask, s[start - 1:start])]
            last = end
        if not out:
            return s
        out.append(s[last:])
        return "".join(out)

    def _run_masks(self, run: str) -> bool:
        if run.startswith(("sha256=", "sha384=", "sha512=", "sha1=", "md5=")):
            return False  # a checksum field (wheel RECORD, SRI)
        if "=" in run.rstrip("="):
            return any(part[:1] != "=" and self._run_masks(part) for part in _EQ_SPLIT.split(run))
        return looks_random(run, self.entropy) and not github_node_id(run)

    def _mask_run(self, run: str, mask: Masker, before: str = "") -> str:
        if "=" in run.rstrip("="):  # name=value inside one run: judge the parts, keep the names
            parts = _EQ_SPLIT.split(run)
            out = []
            for i, p in enumerate(parts):
                after_id = i >= 2 and parts[i - 1] == "=" and _id_name(parts[i - 2], "&" if i > 2 else before)
                out.append(p if p[:1] == "=" or after_id else self._mask_run(p, mask))  # `id=<run>`: an identifier
            return "".join(out)
        return mask(self.entropy.kind, run) if looks_random(run, self.entropy) else run


COMMANDS_ID = "command-flags"
CALLS_ID = "call-arguments"
KEY_VALUE_MIN = 16  # the shortest value a key name's rule takes (rules.toml may ask for more)
KEY_VALUE_MAX = 256  # longer runs are data, not a key under a name
KEY_VALUE_REACH = 40  # characters from a key name's end to its value's start (quotes, blanks, operator)
KEY_VALUE_REACH_BYTES = 96  # the same reach in the fast path's bytes, with room for JSON escapes
_KEY_VALUE = re.compile(r"[A-Za-z0-9_+/=.~-]+")
_KEY_RUN_B = re.compile(rb"[A-Za-z0-9_+/=.~-]{16,}")


_DIGEST_LABELS = ("h1:", "sha1:", "sha256:", "sha384:", "sha512:", "md5:", "sha256=", "sha384=", "sha512=")
_DIGEST_LABELS_B = tuple(label.encode("ascii") for label in _DIGEST_LABELS)


_PUBLIC_LABEL = re.compile(r"(?:data:image/[a-z0-9.+-]{1,20};base64,|(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp[0-9]{3}) )\Z")
_PUBLIC_LABEL_B = re.compile(_PUBLIC_LABEL.pattern.encode("ascii"))
# PEM blocks of public material (RFC 7468: CERTIFICATE, PUBLIC KEY; RFC 4716 and OpenPGP public key blocks)
_PUBLIC_PEM = re.compile(r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|SSH2 PUBLIC KEY|PGP PUBLIC KEY BLOCK|"
                         r"X509 CRL|CERTIFICATE REQUEST|TRUSTED CERTIFICATE)-----[\s\S]{0,65536}?-----END [A-Z0-9 ]+-----")


_NAME_BEFORE = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]{0,60})[\"']?[ \t]*[:=][ \t]*[\"']?\Z")
_ID_WORDS = frozenset({"id", "ids", "uuid", "guid"})


def _identifier_value(s: str, start: int) -> bool:
    """A run right after the name of an identifier (`credentialId: `, `"request_id": "`)."""
    m = _NAME_BEFORE.search(s, max(0, start - 80), start)
    return m is not None and _id_name(m.group(1), s[m.start() - 1:m.start()])


def _id_name(name: str, before: str) -> bool:
    """`credentialId`, `request_id`, a URL's `?id=`: a name whose last word is `id` after another word,
    or `id` alone as a query parameter. A bare `ID` in a log line is left to the rules (a key's id
    often stands there beside its secret)."""
    words = name_words(name)
    if not words or words[-1] not in _ID_WORDS:
        return False
    return len(words) > 1 or before in ("?", "&")


def _digest_context(s: str, start: int) -> bool:
    """A run right after a digest label (go.sum `h1:`, wheel RECORD `sha256=`): a checksum, not a secret.

    Also public data by its label: an image's bytes in a data URI (`data:image/png;base64,`) and
    an SSH public key after its algorithm (`ssh-ed25519 AAAA...`).
    """
    return s.endswith(_DIGEST_LABELS, max(0, start - 7), start) or bool(
        _PUBLIC_LABEL.search(s[max(0, start - 40):start]))


# A terminal control sequence (ECMA-48 CSI: ESC [ parameters, a final letter), as colours wrap words.
_ANSI_CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ANSI_CSI_B = re.compile(rb"(?:\x1b|\\u001b)\[[0-9;?]*[A-Za-z]")  # raw, or escaped in JSON
_JSON_ESCAPE_B = re.compile(rb"\\(?:u[0-9a-fA-F]{4}|[\s\S])")
_IDENT_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_RUN_SHAPE = bytes(120 if c in _RUN_BYTES else 32 for c in range(256))  # [A-Za-z0-9+/=_-] -> "x", the rest -> " "
_IDENT_SET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_RUN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
_LONG_RUN = re.compile(b"x" * 20 + b"x*")  # a literal prefix: the engine searches it at C speed
_EQ_SPLIT = re.compile(r"(=+)")
_WORDS_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def name_words(chunk: str) -> list[str]:
    """`getDBPassword` -> get, db, password; `API_KEY` -> api, key."""
    return [w.lower() for w in _WORDS_RE.findall(chunk)]


def _minimal_substrings(words: Iterable[str]) -> set[str]:
    """The words none of whose others is inside them (a hit on "pass" already covers "password")."""
    ws = set(words)
    return {w for w in ws if not any(o != w and o in w for o in ws)}


# [quote] name [quote] [blanks] operator [blanks] value: .env, YAML, TOML, INI, HCL, shell, JSON in text, code
ASSIGN_RE = re.compile(
    r"(?P<jq>\\{0,2}[\"'])?(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,80})(?(jq)\\{0,2}[\"'])"
    r"[ \t]{0,24}(?P<op>:=|::=|:::=|\?=|<=>|=>|===|!==|==|!=|\.=|=|:(?!:)|(?(jq),|(?!)))[ \t]*[@]?"
    r"(?:[bfru]{1,2}(?=\\{0,2}[\"']))?"
    r"(?:(?P<q>'''|\"\"\"|\\{0,2}[\"'`])(?P<qv>(?:\\[nrt0]|\\\\|[^\"'`\\\n])*)(?P=q)|(?P<v>[^\s\"'`,;&|)}\]<>\\]+))",
)
# (A quoted value may hold the escapes \n, \t, \r, \0 and \\; Python's triple quotes close it too.)


_INTERPOLATION = ("{", "$", "%", "#{", "<", "@")  # a template's hole, not a literal: `{x}`, `${x}`, `%s`, `<x>`


def _inside_string(s: str, at: int) -> bool:
    """Does s[at] stand inside a string literal of its line (an odd count of unescaped quotes before it)?

    `"login=a&pwd=x"`, `"host=db user=u password=x"`: pairs inside a literal are data (a query
    string, a conninfo), whose unquoted values are literals, never a program's variables.
    """
    line = s[s.rfind("\n", 0, at) + 1:at]
    return any((line.count(q) - line.count("\\" + q)) % 2 == 1 for q in ('"', "'"))


# A JSON member whose line was cut before its opening quote (`cut`, `grep -o`, a wrapped terminal):
# `secret_key": "…"` at the start of a line.
CUT_MEMBER_RE = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,80})(?P<jq>\")[ \t]*(?P<op>:)[ \t]*(?P<q>\")(?P<qv>(?:\\[nrt0\\\"]|[^\"\\\n])*)\""
    r"(?P<v>(?!))?",
)


# A DSL's `name "value"` on a line of its own (Gradle `password "..."`, Ruby, nginx): no operator.
DSL_RE = re.compile(
    r"(?P<jq>(?!))?(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,80})(?P<op>[ \t]+)(?P<q>[\"'])(?P<qv>[^\"'\\\n]*)(?P=q)"
    r"(?P<v>(?!))?(?=[ \t]*[;,]?[ \t]*(?:$|[\r\n]|\\[nr]|#|//))",
)
# A label and a key-shaped value with blanks between (`acme SECRET <key>`, `TOKEN <key>`): no operator.
# The blanks stay within the fast path's reach after a key name (KEY_VALUE_REACH_BYTES).
_WORD_BEFORE = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z]{2,12}) $")  # a word and one blank, ending where a name starts
LABEL_RE = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,80})[ \t]{1,8}(?P<v>[A-Za-z0-9_+/=.~-]{16,256})(?![^\s\"'`,;)}\]])")
XML_RE = re.compile(r"<(?P<name>[A-Za-z_][A-Za-z0-9_.:-]{0,80})(?:[ \t][^<>]*)?>\s*(?P<v>[^<\s][^<]{0,1024}?)\s*</(?P=name)>")
_EOL = re.compile(r"[ \t]+(?:#|//)|\\[nr]|[\r\n]")
MASK_RE = re.compile(r"\[REDACTED:[a-z0-9_]+:hmac-sha256:[0-9a-f]+\]")


_FORMAT_SPEC = re.compile(r"[<>^=]?[-+ ]?#?0?[0-9]*[,_]?(?:\.[0-9]+)?[bcdeEfFgGnosxX%]?")  # Python's format mini-language


def _rest_of_line(s: str, end: int) -> str:
    """What follows end on its line (a value's description, when it is words)."""
    eol = s.find("\n", end, end + 512)
    return s[end:eol if eol >= 0 else end + 512].rstrip()


def _line_start(s: str, i: int) -> bool:
    """Only blanks (and a YAML list dash) between the last line break and s[i]: a YAML key."""
    j = i
    while j and s[j - 1] in " \t":
        j -= 1
    if j >= 1 and s[j - 1] == "-" and j < i:  # `- name: value` (the blank after the dash is gone by now)
        j -= 1
        while j and s[j - 1] in " \t":
            j -= 1
    return j == 0 or s[j - 1] in "\n\r" or (j >= 2 and s[j - 2:j] in ("\\n", "\\r"))


_REF_RE = re.compile(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{[A-Za-z_][A-Za-z0-9_.]*\}?|%[A-Za-z_][A-Za-z0-9_]*%|\{\{.*\}\}"
    r"|%[sdrvqxf]|%\([A-Za-z_][A-Za-z0-9_]*\)[sdr]|\{[0-9]*\}"  # format strings: `?apikey=%s`, `{0}`, `{}`
    r"|!(?:Ref|Sub|GetAtt|ImportValue|FindInMap|Join|Select|If|Base64|Cidr|GetAZs|Split|Equals|Condition)\b.*"
    r"|\$[0-9@*#?!]|<[^<>]*>|\*+|x+|X+|\.\.\.|#+|-+|_+|\?+",
)
_PLACEHOLDERS = frozenset({
    "null", "none", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "redacted", "str", "string", "bytes", "int", "bool",
    "any", "optional", "secretstr", "changeme", "password", "secret", "token", "your_token", "your-token",
    "yourtoken", "your_api_key", "your-api-key", "your_password", "example", "placeholder", "dummy", "test",
    "testing", "required", "env", "os.environ", "process.env",
})
_COMPARED = re.compile(r"(?i)pass|pwd|secret|key")
_COMPARISONS = ("==", "===", "!=", "!==", "<=>")
# A secret's word numbered, not a label: `AdminPassword123`, `NotSoSecretKey1` (two digits or more, or one
# after the secret's own word: `OAuth2` and `password1`, a scheme and a form's field, stay labels).
_NUMBERED = re.compile(r"[A-Za-z][A-Za-z0-9]*?(?:[0-9]{2,}|(?:Key|Password|Passwd|Secret|Token|Pwd)[0-9])")
# Before `pwd` in one word, what says the value is no password: `nopwd`, `RESETPWD` (a path), `showpwd`.
_PWD_NOT_HELD = frozenset({"no", "old", "reset", "forgot", "forgotten", "change", "show", "hide", "check", "set", "get"})
_LABEL_RE = re.compile(r"[a-z][a-z0-9]*(?:[._:/ -][a-z0-9]+)*")
_STRING_GLUE = re.compile(r"^(?:[+,;)]|\.\$)|[+(\[]$")
_IDENTIFIER_VALUE = re.compile(r"[A-Za-z_][a-z_]*(?:[A-Z][a-z_]*)*[,;]?|[a-z_][a-z0-9]*(?:_[a-z0-9]+)+[,;]?")
_NUMBER_RE = re.compile(r"[0-9_]{1,12}(?:\.[0-9]+)?[,;]?")
_TYPES = (r"(?:str|string|int|integer|float|number|bool|boolean|bytes|any|unknown|object|none|null|undefined|void|"
          r"never|dict|list|tuple|set|optional|secretstr|record|map|array|promise|callable|type|literal)")
# A name written as a literal (`"password_confirmation"`, `"authToken"`): words joined by `_`, `-`, `.` or a case change.
_NAME_LIKE = re.compile(r"[a-z]+(?:[_.-][a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z0-9]+(?:_[A-Z0-9]+)+")
# An encoding or an algorithm names how the argument before it is read (`Buffer.from("accountKey", "base64")`).
_ENCODING = re.compile(r"(?i)base64(?:url)?|hex|utf-?8|utf-?16(?:le|be)?|ascii|latin-?1|binary|ucs-?2"
                       r"|[hrep]s(?:256|384|512)|aes|sha-?(?:1|224|256|384|512)|md5|bcrypt|argon2(?:id|i|d)?")
_TYPE_WORD = re.compile(rf"(?i:{_TYPES})(?:\[.*\]|<.*>)?\??[,;]?")
# A type annotation's value (`Optional[str]`, `HttpClient | None`); runs possessive where a split
# between them would be tried again on failure (a long CamelCase run ending in a non-word character).
_TYPE_RE = re.compile(
    rf"(?i:{_TYPES})(?:\[.*\]|<.*>)?(?:\s*\|\s*[A-Za-z_][A-Za-z0-9_.]*(?:\[.*\]|<.*>)?)*\??(?:\s*=.*)?[,;]?"
    r"|[A-Z][a-z]{2,}+[a-z0-9]*+(?:[A-Z][a-z]{2,}+[a-z0-9]*+)++(?:\[.*\]|<.*>)?(?:\s*\|\s*[A-Za-z_][A-Za-z0-9_.]*)*[,;]?"
    r"|[A-Za-z_][A-Za-z0-9_.]*(?:\[.*\]|<.*>)(?:\s*\|\s*[A-Za-z_][A-Za-z0-9_.]*)*[,;]?"
    r"|[A-Za-z_][A-Za-z0-9_.]*\s*[;,]"
)
_ANNOTATION = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*\.)+[A-Z][A-Za-z0-9_]*(?:\[.*\])?(?:\s*\|\s*None)?\s*=\s*\S.*"
                         r"|[A-Z][A-Za-z0-9_]*(?:\[.*\])?\s*=\s*(?:None|null|nil|undefined)")
_FLAG_REFERENCE = re.compile(r"(?:env|file|fd):\S+|stdin"
                             r"|(?:[^:\s]*:)?(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\([^)]*\)|\$\{\{[^}]*\}\})")
_CALL_START = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\(")
_CALL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\(.*\)")
_TEMPLATE_STARTS = (MASK_PREFIX, "${", "{{", "$(", "<%", "%{", "#{", "[REDACTED")
_CODE_RE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:[?!]?\.[A-Za-z_][A-Za-z0-9_]*)+(?:[?!]?\.?\(.*|[ \t].*)?|[A-Za-z_][A-Za-z0-9_.]+[ \t]*[(\[].*|[(\[{].*|"
    r"[A-Za-z_][A-Za-z0-9_]*[ \t]*=[ \t]*[^=\s].*|"  # a keyword argument: `exc_info=True`
    r"(?:raise|return|await|yield|lambda|not|None|True|False|self|cls|if|else|def|class|new|this|function|typeof)\b.*",
)


_FILLER = re.compile(r"(?i)x{4,}|\*{4,}|\.{3}|_here\b|your[_-]|(?:fake|example|sample|dummy|placeholder|change[_-]?me|redacted)"
                     r"|^change[_-]?it$")  # `changeit`: the documented default a keystore's user is told to change


# What is left of a value once its filler words are taken out, when a secret on its own: letters
# and digits mixed in a run of six or more, five of them different (`ExamplePas123`, `AKIAIOSFODNN7EXAMPLE`).
# AWS's documentation ends its example keys in EXAMPLE (`AKIAIOSFODNN7EXAMPLE`,
# `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`; IAM User Guide, "Manage access keys"): a published example
# is a short stem before EXAMPLE (a key id's 13 characters) or ends in EXAMPLEKEY. A long random run with
# EXAMPLE glued to its end (`sk-yEyY18xzH5IiiORdCDzstp1h2xrx…EXAMPLE`, as test suites mark a key) is a key
# with a word beside it, like any other filler word beside a secret.
_DOCUMENTED_EXAMPLE = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{0,16}(?:EXAMPLE|SAMPLE)\Z|(?:EXAMPLE|SAMPLE)KEY\Z")
_RESIDUE_SECRET = re.compile(r"(?=[A-Za-z0-9]{0,63}[0-9])(?=[A-Za-z0-9]{0,63}[A-Za-z])[A-Za-z0-9]{6,64}")


def filler_beside_secret(value: str) -> bool:
    """Does a value hold a secret beside its filler word? A stand-in word does not make the rest of
    the value a stand-in: `ExamplePas123` still holds `Pas123`."""
    if _DOCUMENTED_EXAMPLE.search(value):
        return False
    return any(len(set(m.group())) >= 5 for m in _RESIDUE_SECRET.finditer(_FILLER.sub(" ", value)))  # not `T00000000`


def _placeholder(value: str) -> bool:
    """A stand-in for a secret: a reference, a template, a type name, filler like xxxx or YOUR_KEY_HERE."""
    if formats.key_run_after_dollar(value):
        return False  # `$A3ae68d9f8cc…`: a value that starts with `$`
    if value.startswith(_TEMPLATE_STARTS) or value.lower() in _PLACEHOLDERS or _REF_RE.fullmatch(value):
        return True
    if _FILLER.search(value):
        return not filler_beside_secret(value)
    body = value.strip("\"'`")
    return len(body) >= 8 and max(map(body.count, set(body))) >= 0.6 * len(body)  # 00000000, aaaaaaaa


# A message written for a person: three or more words of letters (any script) or numbers, single
# blanks between them, each word in lower case, capitalised or a short acronym, and a capital
# first letter or a sentence's closing mark (`Passordet må ha minst 6 tegn.`, `Enter your password`).
# (an environment variable's name is a word of a message too: `JWT_SECRET is not set`)
_MSG_WORD = r"(?:" + formats.ENV_VAR_NAME.pattern + r"|[^\W_](?:[^\W_]|['\u2019-](?=[^\W_]))*)"
_MESSAGE = re.compile(rf"[(\"'\u201c\u00ab]?{_MSG_WORD}(?:[,;:.!?)\"'\u201d\u00bb]{{0,2}} [(\"'\u201c\u00ab]?{_MSG_WORD}){{2,}}"
                      r"(?: ?[.!?:\u2026)\"'\u201d\u00bb]+)?")  # French sets `?`, `!` and `:` after a blank


def message_text(value: str) -> bool:
    """A sentence or a label written for a person (an error message, a form's label), not a secret.

    Translation files and forms put such text under secret names (`"password_hint": "Enter
    your password."`, `"password": "Mot de passe oublié ?"`). A random password has no blanks
    and a passphrase generated from a word list is lower case without a closing mark, so
    both stay secrets; a passphrase written as a capitalised sentence does not.
    """
    v = value.strip()
    if len(v) < 12 or len(v) > 2048 or " " not in v or not _MESSAGE.fullmatch(v):
        return False
    words = [re.sub(r"['\u2019-]", "", w.strip("(\"'\u201c\u00ab,;:.!?)\u201d\u00bb\u2026")) for w in v.split(" ")]
    if not all(w.isdigit() or w.isalpha() and (w.islower() or w.istitle() or w.isupper() and len(w) <= 5)
               or formats.ENV_VAR_NAME.fullmatch(w) for w in words if w):
        return False  # `Xk9 Qp2Z mm`: mixed case inside a word is not how people write
    return v[0].isupper() or v[-1] in ".!?\u2026"


# A lookup of the environment or of a secret store by name: where the secret is, not the secret
# (`os.environ['X']`, `os.getenv("X")`, `process.env.X`, `ENV.fetch("X")`, `System.getenv("X")`).
_ENV_LOOKUP = re.compile(r"(?:os\.environ|os\.getenv|getenv|process\.env|import\.meta\.env|ENV|System\.getenv"
                         r"|Environment\.GetEnvironmentVariable|env|config|settings|secrets)(?:\.get|\.fetch)?"
                         r"(?:\s*[\[(.][^\n]*)?", re.S)


# `pass` or `pwd` naming a pair, in canonical JSON, in JSON text inside a string (whose escaped
# quotes the fast path reads as blanks) or in a configuration text: `"pass": "`, `pwd: `, `pass =`.
PAIR_PASSWORD_NAMES = formats.PAIR_PASSWORD_NAMES
_PAIR_NAME_BEFORE_B = re.compile(rb'(?i)(?:key|name)["\x27]?\s*(?:[:=]\s*["\x27]?|>)\Z')  # a name/value pair's name
_PAIR_OPERATOR_B = re.compile(rb'["\x27\]\s!]{0,64}[:=]')


def pair_password(name: str, value: object) -> bool:
    """`{"user": "u", "pass": "p"}`, `pwd: p` in a configuration text: the name of a pair, over a string.

    As words of text `pass` is a test result (`--- PASS: TestX`) or Python's statement and `pwd`
    the working directory, so `[names].not_secret` keeps them out of the line rules. As the
    name of a JSON member or of a configuration pair over a string, `pass` is a password, and so
    is `pwd` unless its value is a path (`"pwd": "/home/u"`, `PWD=C:\\Users\\u`: a directory).
    """
    if not isinstance(value, str) or name.lower() not in PAIR_PASSWORD_NAMES:
        return False
    v = value.strip().strip("\"'")
    path = v in (".", "..") or v[:1] in "/~$%" or v.startswith(("./", "../")) or "/" in v or "\\" in v
    return name.lower() == "pass" or not path


# A version or a version range as package manifests write them (semver's `1.2.3-rc.1`, npm's `^1.2`,
# `~1.2.x`, PEP 440's `>=1.0`, `~=2.1`): an operator, or two dots or more.
_VERSION = re.compile(r"(?:(?:\^|~|[<>]=?|[=!~]=|=)\s*v?\d+(?:\.(?:\d+|x|\*)){0,3}|v?\d+(?:\.(?:\d+|x|\*)){2,3})"
                      r"(?:[-+][0-9A-Za-z.-]+)?(?:\s*(?:,|\|\|)\s*(?:\^|~|[<>]=?|[=!~]=)?\s*v?\d+(?:\.(?:\d+|x|\*)){0,3})*")


def structural_value(value: str) -> bool:
    """An opening bracket (`AUTH_PASSWORD_VALIDATORS = [`: the items are judged on their own lines)
    or a version range (`"jsonwebtoken": "^9.0.0"`: a package manifest names a package, not a secret)."""
    v = value.strip().strip("\"'")
    return v in ("[", "{", "(", "[]", "{}", "()", "[{", "({") or bool(_VERSION.fullmatch(v))


# A permission level from a fixed vocabulary: GitHub Actions' `permissions:` map gives each scope
# (`id-token`, `contents`, ...) one of `read`, `write` or `none`, and `read-all`/`write-all` to all.
# GitHub Actions' permission levels, and `secrets: inherit`, which passes a caller's secrets on to a
# reusable workflow by that one keyword (GitHub docs, "Reusing workflows", jobs.<job_id>.secrets.inherit).
_PERMISSION = re.compile(r"read|write|none|read-all|write-all|inherit")
# A file's path: absolute, home- or dot-relative, or two names or more, ending in a file name with an
# extension (`/tmp/cosign.key`, `path/to/x.pem`). The extension keeps base64 out (it has no `.`).
_FILE_PATH = re.compile(r"(?:~|\.{1,2}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)?/?(?:[A-Za-z0-9_.@-]+/)+[A-Za-z0-9_@-][A-Za-z0-9_.@-]*"
                        r"\.[A-Za-z][A-Za-z0-9]{0,7}|/[A-Za-z0-9_@-][A-Za-z0-9_.@-]*\.[A-Za-z][A-Za-z0-9]{0,7}"
                        # dot-, home- or variable-relative, with or without an extension: base64 never starts so
                        r"|(?:\.{1,2}|~|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)/[A-Za-z0-9_.@/-]*"
                        # an absolute path of two or more lower-case names (a volume's `:ro` after it)
                        r"|(?:/[a-z0-9_.][a-z0-9_.@-]*){2,}/?(?::(?:ro|rw|z|Z))?"
                        # a file's name alone, with the extension of a key's or a config's file
                        r"|[A-Za-z0-9_@-][A-Za-z0-9_.@-]*\.(?:pem|key|crt|cer|der|p12|pfx|jks|keystore|pub|asc|gpg"
                        r"|json|ya?ml|txt|env|ini|conf|cfg|properties|xml)")
# A Python entry point's object reference (`importable.module:object.attr`, the packaging spec's
# "Entry points specification"), with a package path of three names or more so that a
# `first.last:password` pair is not taken for one.
_ENTRY_POINT = re.compile(r"(?:[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*){2,}|(?=[a-z0-9.]*_)[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)"
                          r":[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
                          r"(?:[ \t]*\[[A-Za-z0-9_, \t-]*\])?")


# A name joined to a reference (`host=${{ secrets.KEY }}`, Develocity's `DEVELOCITY_ACCESS_KEY`
# format `host=key`; `user:${PASSWORD}`): the secret part is where the secret is kept.
_KEYED_REFERENCE = re.compile(r"[A-Za-z0-9_.-]+[=:](?:\$\{\{[^{}\n]*\}\}|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*)")
# A line of hashicorp/vault-action's `secrets` input: `path key | OUTPUT_NAME ;` names where a
# secret is read from and the variable it goes to (the action's README, "Key Syntax").
_VAULT_ACTION = re.compile(r"[A-Za-z0-9_./{}-]+/[A-Za-z0-9_./{}-]+ +[A-Za-z0-9_.-]+ *\| *[A-Za-z_][A-Za-z0-9_]* *;?")


def enumerated_or_reference(value: str) -> bool:
    """A value that names or chooses, and holds nothing: a permission level, a file's path, an entry
    point, a name joined to a reference, a secret store's path."""
    v = value.strip().strip("\"'")
    return bool(_PERMISSION.fullmatch(v) or _FILE_PATH.fullmatch(v) or _ENTRY_POINT.fullmatch(v)
                or _KEYED_REFERENCE.fullmatch(v) or _VAULT_ACTION.fullmatch(v))


# A quoted literal, a comparison operator and the start of a variable's (dotted) name, ending where
# the name starts: `"f62e…" == password`, `'x' !== this.pwd`.
_COMPARED_BEFORE = re.compile(r"""(["'])(?P<v>[^"'\n\\]{1,256})\1[ \t]*(?:===?|!==?|<=>)[ \t]*"""
                              r"\$?(?:[A-Za-z_][A-Za-z0-9_]*(?:\.|->))*\Z")
_IDENT_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
# Java's String.equals and equalsIgnoreCase, C#'s String.Equals (a StringComparison may follow), the literal
# on either side (`pwd.equals("…")`, `"…".Equals(authToken)`).
_EQUALS_AFTER = re.compile(r"""(?P<name>[A-Za-z_][A-Za-z0-9_.]*?)(?:\(\))?\.[Ee]quals(?:IgnoreCase)?\(\s*(["'])(?P<v>[^"'\n\\]{1,256})\2\s*[,)]""")
# PHP's comparisons by a call (php.net: strcmp, strcasecmp, strncmp, strncasecmp, hash_equals(known, user)).
_STRCMP = r"(?:strn?(?:case)?cmp|hash_equals)\(\s*"
_STRCMP_OPEN = re.compile(_STRCMP + r"\$?(?:[A-Za-z_]\w*(?:->|\.))*\Z")
_STRCMP_AFTER = re.compile(r"""(?P<name>[A-Za-z_][A-Za-z0-9_.]*?)(?:\(\))?\s*,\s*(["'])(?P<v>[^"'\n\\]{1,256})\2\s*[,)]""")
_STRCMP_BEFORE = re.compile(_STRCMP + r"""(["'])(?P<v>[^"'\n\\]{1,256})\1\s*,\s*\$?(?:[A-Za-z_]\w*(?:->|\.))*\Z""")
_EQUALS_BEFORE = re.compile(r"""(["'])(?P<v>[^"'\n\\]{1,256})\1\.[Ee]quals(?:IgnoreCase)?\(\s*(?:[A-Za-z_][A-Za-z0-9_]*\.)*\Z""")


def compared_benign(value: str) -> bool:
    """A literal compared with a password or key that is not one: empty, a reference or placeholder.

    The label and message rules do not apply here: a program compares a password with the
    password it accepts, so `if obj.password == "this cool password"` holds it however it reads.
    """
    v = value.strip()
    return not v or len(v) <= BENIGN_MAX and _placeholder(v)


# Words that stand for a secret in prose and docs (`_PLACEHOLDERS`) and are also weak passwords
# people use: a quoted literal in code under another secret name is taken as the password.
_WEAK_WORDS = frozenset({"secret", "password"})


# The longest value the benign rules read. An unquoted value runs to the next blank or quote, so in
# text like `auth=(auth=(…` every assignment's value runs to the end of the text, and reading each
# whole would make the work quadratic in the text's length. A longer value is taken as a secret
# (it is masked: the safe side); no placeholder, message or reference is that long.
BENIGN_MAX = 2048


def benign_value(value: str, *, name: str = "", quoted: bool = True, env: bool = False, code: bool = False) -> bool:
    """Not a secret though next to a secret name: refs, placeholders, labels, messages, code.

    An unquoted value may be code (`password = getpass()`, `token = self.token`,
    `api_key: str`); after an upper-case (environment) name it is taken as a value, except in
    source code (`code`: the text is a file of a language whose unquoted words are names).
    """
    value = value.strip()
    if len(value) > BENIGN_MAX:
        return False  # judged a secret unread: keeps the work per assignment bounded (see BENIGN_MAX)
    if quoted and name and value.lower() in _WEAK_WORDS and value.lower() not in name.lower():
        return False  # EMAIL_PASSWORD = "secret": a weak password, quoted in code under a name it is not
    if not value or _placeholder(value) or message_text(value):
        return True
    if structural_value(value):
        return True
    if not quoted and _ENV_LOOKUP.fullmatch(value):
        return True  # `SECRET_KEY = os.environ['SECRET_KEY']`: a literal fallback after it is read by formats._code
    if quoted and _STRING_GLUE.search(value):
        return True  # `"Password: " + getPassword() + ","`: quotes that close and open strings around code
    if _ANNOTATION.fullmatch(value) and not quoted:
        return True  # `auth: _t.AuthType = None`: a type annotation with its default, not a value
    if value.startswith("arn:aws"):
        return True  # an Amazon Resource Name names a secret (arn:aws:secretsmanager:...), it is not one
    if enumerated_or_reference(value):
        return True  # `id-token: write`, `key_file: /tmp/cosign.key`, `x = pkg.mod.sub:func`
    low = value.lower().strip("\"'`")
    if formats.auth_scheme_alone(value, name):
        return True  # `"Authorization": foo ? 'Bearer' : 'OAuth'`: a scheme's name, chosen before its credentials
    words = name_words(name)
    if low in (name.lower(), name.rsplit(".", 1)[-1].lower()) or low.replace("-", "_") == name.lower():
        return True  # `self.api_key = api_key`, TOKENS = "tokens": a name, not a value
    if (not quoted or len(words) > 1) and _LABEL_RE.fullmatch(low) and any(
            w in low for w in words if len(w) >= 4 and w not in ("user", "name")) and not _NUMBERED.fullmatch(value):
        return True  # SECRET_KEY_ACCOUNT = 'secret-key', "user.auth_logged_out": a label naming the secret
    if _NUMBER_RE.fullmatch(value) and "token" in name.lower():
        return True  # max_tokens = 4096
    if quoted or env:
        return False
    if _TYPE_RE.fullmatch(value) or _CODE_RE.fullmatch(value):
        return True  # `api_key: str`, `tokenSource: ProviderTokenSource;`, `token = secrets.token_urlsafe(32)`
    if (code or not name.isupper()) and _IDENTIFIER_VALUE.fullmatch(value):
        return True  # `sliceEnd = overlapEnd - tokenStart`: a variable, not a literal
    return False


def _has_neighbour(s: str, start: int, end: int, sep: str) -> bool:
    """Is the match one `key=value` of a `sep`-separated list (another pair right after or before it)?"""
    after = re.match(rf"[ \t]*{re.escape(sep)}[ \t]*[A-Za-z][A-Za-z0-9 _.-]{{0,40}}=", s[end:end + 60])
    before = re.search(rf"[A-Za-z][A-Za-z0-9 _.-]{{0,40}}=[^{re.escape(sep)}\n]{{0,200}}{re.escape(sep)}[ \t]*\Z",
                       s[max(0, start - 300):start])
    return bool(after or before)


_ASSIGNED = re.compile(rb"=(?=[^=])")  # inside a run, `=` before more of it: an assignment, not base64's padding


def basic_credentials(token: str) -> bool:
    """Does this token decode as the Basic scheme's credentials (RFC 7617: base64 of `user-id ":" password`)?

    Padded base64 (RFC 4648, as clients write it) of printable UTF-8 with a user id, a colon and a
    password: `dTpw` (`u:p`) does; the words of prose after "basic" (`usage`, `auth`, `test`) decode
    to control bytes or no colon, and `user:` has no password to hide.
    """
    if len(token) % 4:
        return False
    try:
        text = base64.b64decode(token, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    user, colon, password = text.partition(":")
    return bool(user and colon and password) and text.isprintable()


def _url_credentials_ok(m: re.Match) -> bool:
    """user:password@host, not a package spec (npm:pkg@1.2.3) or an address book line."""
    user, host = (m.group("user") or "").lower(), m.group("host")
    if not user and "://" not in m.group() and m.start() and m.string[m.start() - 1] == ":":
        return False  # `test_x.py::test_y@group` (pytest's node id and xdist group), `ns::name@x`: a `::` path
    if user in ("npm", "jsr", "github", "git", "workspace", "link", "file", "patch", "catalog", "portal",
                "mailto", "http", "https"):
        return False
    if host.lower() in ("sha1", "sha256", "sha384", "sha512"):
        return False  # an image reference: name:tag@sha256:digest
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+)*", host) and "://" not in m.group():
        return False  # a version (pkg:name@1.2.3), not a host
    return True


def shannon(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in map(s.count, set(s)))


ID_PREFIXES = (
    "toolu_", "srvtoolu_", "msg_", "msgbatch_", "req_", "call_", "chatcmpl-", "resp_", "run_",
    "thread_", "asst_", "file-", "file_", "batch_", "ftjob-", "org-",
    "age1",  # an age recipient: an X25519 public key in bech32 (age-encryption.org/v1)
)
INTEGRITY_PREFIXES = ("sha1-", "sha256-", "sha384-", "sha512-")
_ID_BOUNDARY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_WORDLIKE_SEGMENT = re.compile(r"[A-Z]?[a-z0-9_.-]*")
_WORD = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{3,}(?![a-z])|(?:[Ss]ha|SHA|[Mm]d|MD|[Cc]rc|CRC)[0-9]{1,3}")
# A hash algorithm's name is a word of identifiers (`distributionSha256Sum`, `md5Hex`), though it has few vowels.
_ALGORITHM = re.compile(r"(?i:sha|md|crc)[0-9]{1,3}")
_SEGMENT_SEP = re.compile(r"[_./=+-]+")
_SIMPLE_SEGMENT = re.compile(r"[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+[A-Za-z]{0,2}|[A-Za-z]{1,2}")


_VOWELS = frozenset("aeiouyAEIOUY")
_CONSONANT_RUN = re.compile(r"[^aeiouyAEIOUY]{5}")


def _speakable(word: str) -> bool:
    """A word a person wrote: a vowel in every few letters (`Settings`, `getUser`), not `ngrsz` or `uilpkk`."""
    vowels = sum(c in _VOWELS for c in word)
    return vowels * 5 >= len(word) and not _CONSONANT_RUN.search(word)


def identifier_like(tok: str) -> bool:
    """Made of words: camelCase (`getUserAccountSettings2`) or separated (`test_2D_vs_RGI`)."""
    if sum(len(w) for w in _WORD.findall(tok) if _speakable(w) or _ALGORITHM.fullmatch(w)) >= 0.6 * len(tok):
        return True
    segments = _SEGMENT_SEP.split(tok)
    if len(segments) >= 3:
        simple = sum(len(seg) for seg in segments if _SIMPLE_SEGMENT.fullmatch(seg))
        return simple >= 0.8 * sum(map(len, segments))
    return False


def looks_random(tok: str, rule: EntropyRule) -> bool:
    """A credential-like run: mixed case and digits, varied, not an id, path or word."""
    n = len(tok.rstrip("="))
    if n < rule.min_len or n > rule.max_len:
        return False
    if tok.startswith(ID_PREFIXES) and _ID_BOUNDARY.issuperset(tok) or tok.startswith(INTEGRITY_PREFIXES):
        return False
    if (tok.islower() or tok.isupper()) and tok.isalnum() and tok.isascii():
        return _single_case_random(tok, rule)
    if tok.islower() or tok.isupper() or tok.isalpha() or not tok.isascii():
        return False  # hex digests, UUIDs, ULIDs, lower-case paths, plain words
    if not any(c.isdigit() for c in tok) and not (
            n >= 20 and ("-" in tok or "_" in tok) and "/" not in tok
            and not all(_WORD_SEGMENT.fullmatch(seg) for seg in re.split(r"[-_]+", tok) if seg)):
        return False  # (a run with no digit counts when it mixes `-` or `_` into what is not words, as URL-safe
        # keys do; `X-GitHub-Api-Version`, `My_Class-Name` are words)
    if "/" in tok:
        if tok[0] == "/":
            return False  # an absolute path
        if all(_WORDLIKE_SEGMENT.fullmatch(seg) for seg in tok.split("/")):
            return False  # a relative path of words
    if identifier_like(tok) or "EXAMPLE" in tok or "example" in tok:
        return False  # words, or a documentation example (`wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`)
    if sum(len(m) for m in _SEQUENCES.findall(tok)) >= 0.5 * n:
        return False  # an alphabet written out (`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789`)
    return shannon(tok) >= rule.bits_factor * math.log2(min(n, 64))


# Possessive runs (`[a-z]++`): a run of lower-case letters is one word's tail, never split two ways,
# so a long run that fails to match fails in linear time instead of trying every split.
_WORD_SEGMENT = re.compile(r"(?:[A-Z]?[a-z]++)++|[A-Z]{1,5}(?:[a-z]++)?|[A-Z]{1,5}(?:[A-Z][a-z]++)++")  # `PSScriptAnalyzer`
_SEQUENCE = re.compile(r"(?i)abcde|bcdef|cdefg|defgh|efghi|fghij|ghijk|hijkl|ijklm|jklmn|klmno|lmnop|mnopq|nopqr|opqrs|"
                       r"pqrst|qrstu|rstuv|stuvw|tuvwx|uvwxy|vwxyz|01234|12345|23456|34567|45678|56789")  # an alphabet
_SEQUENCES = re.compile(r"(?i)(?:a(?=b)|b(?=c)|c(?=d)|d(?=e)|e(?=f)|f(?=g)|g(?=h)|h(?=i)|i(?=j)|j(?=k)|k(?=l)|l(?=m)|"
                        r"m(?=n)|n(?=o)|o(?=p)|p(?=q)|q(?=r)|r(?=s)|s(?=t)|t(?=u)|u(?=v)|v(?=w)|w(?=x)|x(?=y)|y(?=z)|"
                        r"0(?=1)|1(?=2)|2(?=3)|3(?=4)|4(?=5)|5(?=6)|6(?=7)|7(?=8)|8(?=9)){3,}.")  # 4+ in order
# A semantic version with its pre-release and build parts (semver.org 2.0.0; Go modules' pseudo-versions,
# `vX.Y.Z-yyyymmddhhmmss-abcdefabcdef`, are such versions).
_SEMVER = re.compile(r"v?(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
_NOT_HEX = frozenset("ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ")


_NODE_ID = re.compile(rb"0(\d{1,2}):([A-Z][A-Za-z]{1,40})\d{1,20}")


def github_node_id(run: str) -> bool:
    """A GitHub global node id in its legacy form: base64 of `0<n>:<Type><number>`, n the type's length.

    `MDQ6VXNlcjU4MzIzMQ==` is `04:User583231` (GitHub docs, "Using global node IDs"). It names
    a public object (a user, a repository, an organization) in the GraphQL and REST APIs'
    output; base64 makes it look random to the entropy rule, nothing more.
    """
    body = run.rstrip("=")
    if not 12 <= len(body) <= 80 or not body.startswith("MD"):
        return False
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except ValueError:
        return False
    m = _NODE_ID.fullmatch(raw)
    return m is not None and int(m.group(1)) == len(m.group(2))


def _single_case_random(tok: str, rule: EntropyRule) -> bool:
    """A long base-36 key in one case (`jeqozza8xili4i96pc1x1ww67lmvrw27`): letters beyond hex, digits, varied.

    Hex digests and ids stay (no letter past f); so do words and names (too few digits or bits)
    and alphabets written out in code (`abcdefghijklmnopqrstuvwxyz0123456789`).
    """
    n = len(tok)
    if not rule.single_case_min_len or n < rule.single_case_min_len:
        return False
    digits = sum(c.isdigit() for c in tok)
    if digits < 4 or n - digits < 8 or _NOT_HEX.isdisjoint(tok) or _SEQUENCE.search(tok):
        return False
    return shannon(tok) >= rule.single_case_bits


REPEAT_MIN = 8  # shorter values are words too often to mask wherever they recur
REPEAT_MAX_VALUES = 64  # each value is searched in the whole string: a bound on the work per string


_HUNK = re.compile(r"^@@ -[0-9]+(?:,[0-9]+)? \+[0-9]+(?:,[0-9]+)? @@", re.M)


def diff_view(s: str) -> str:
    """A unified diff with the marker column of its hunks' lines blanked: the changed file's lines.

    `git diff`, `git show` and `diff -u` print each line of a hunk after a `+`, `-` or blank
    (POSIX diff, "Unified format"). Read as they are, a `+` before `password: x`, before a
    PEM body's lines or before `export TOKEN=` hides the line's start from every rule that
    reads one. The view has the same length and offsets as s, so a span found in it masks s.
    """
    if not _HUNK.search(s):
        return s
    out = []
    in_hunk = False
    for line in s.splitlines(keepends=True):
        if _HUNK.match(line):
            in_hunk = True
        elif in_hunk and line[:1] in ("+", "-", " ") and not line.startswith(("+++ ", "--- ")):
            line = " " + line[1:]
        elif line[:1] != "\\":
            in_hunk = False  # `diff --git`, `index`, a commit header: the hunk is over
        out.append(line)
    return "".join(out)


def _repeats(s: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Other whole occurrences of a value a rule masked in s: a secret found once is a secret everywhere.

    `token = 'k' | 'k'` or a key echoed after its assignment; only where a rule
    already masks something, so the fast path's answer is unchanged. An occurrence
    that overlaps a masked span is left to that span.
    """
    taken: list[list[int]] = []  # the masked spans, merged: sorted and disjoint
    for a, b, _ in sorted(spans):
        if taken and a < taken[-1][1]:
            taken[-1][1] = max(taken[-1][1], b)
        else:
            taken.append([a, b])
    starts = [a for a, _ in taken]
    out: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for start, end, kind in spans:
        value = s[start:end]
        if len(value) < REPEAT_MIN or value in seen:
            continue
        if len(seen) >= REPEAT_MAX_VALUES:
            break
        seen.add(value)
        i = s.find(value)
        while i >= 0:
            j = i + len(value)
            k = bisect.bisect_left(starts, j) - 1  # the last masked span starting before j
            if (not (i and s[i - 1].isalnum() and value[0].isalnum())
                    and not (j < len(s) and s[j].isalnum() and value[-1].isalnum())
                    and not (k >= 0 and taken[k][1] > i)):
                out.append((i, j, kind))
                taken.insert(k + 1, [i, j])
                starts.insert(k + 1, i)
            i = s.find(value, i + 1)
    return out


def _splice(s: str, spans: list[tuple[int, int, str]], mask: Masker) -> str:
    """Mask the value spans: the earliest-starting, then longest, wins where they overlap."""
    spans.sort(key=lambda sp: (sp[0], -sp[1]))
    out, last = [], 0
    for start, end, kind in spans:
        if start < last:
            continue
        out.append(s[last:start])
        out.append(mask(kind, s[start:end]))
        last = end
    out.append(s[last:])
    return "".join(out)


def _mask_custom(m: re.Match, mask: Masker) -> str:
    group = "secret" if "secret" in m.re.groupindex else (1 if m.re.groups else 0)
    if m.group(group) is None:
        return m.group()
    if group == 0:
        return mask("custom", m.group())
    start, end = m.span(group)
    base = m.start()
    return m.group()[: start - base] + mask("custom", m.group(group)) + m.group()[end - base:]


def load(text: str | None = None, *, backend: str | None = None) -> RuleSet:
    """The rule set of a rules file (the built-in one by default); `backend` picks the keyword index."""
    if text is None:
        text = resources.files("agentwatch.record.redact").joinpath("rules.toml").read_text("utf-8")
    return RuleSet(tomllib.loads(text), backend=backend)


@lru_cache(maxsize=1)
def builtin() -> RuleSet:
    """The built-in rules, compiled on first use (tens of milliseconds, so not at import)."""
    return load()


def compile_builtin() -> int:
    """Compile every pattern of the built-in rules now; the number compiled.

    For a long-lived process that redacts many records (a normalizing worker): its first
    records do not wait for the patterns they happen to need. A few times cheaper than
    running the self-test corpus through the rules, which compiles them as a side effect.
    """
    count = 0
    for rule in builtin().rules:
        for pattern in (rule.regex, rule.verify, *rule.allow):
            if isinstance(pattern, _Lazy):
                pattern._get()
                count += 1
    return count


def redact_string(s: str, mask: Masker, extra: re.Pattern | None = None) -> str:
    """The built-in rules on one string (`RuleSet.redact`)."""
    return builtin().redact(s, mask, extra)


def suspicious(text: bytes | str, *, json: bool = True) -> bool:
    """Could the built-in rules change a string in this canonical JSON, or in this text read either way?

    `RuleSet.suspicious` with the reading stated is what the recorder uses; this
    function also answers for a raw string passed as JSON (both readings are asked).
    """
    ruleset = builtin()
    return ruleset.suspicious(text, json=json) or (json and ruleset.suspicious(text, json=False))
