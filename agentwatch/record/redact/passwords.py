"""A value shaped like a strong password is a password, wherever it stands and whatever names it.

Every other rule needs a sign beside the value: a secret name, a flag, a call, a provider's
prefix, a file's format. A password chosen by a person under the usual composition policy (an
upper-case and a lower-case letter, a digit and a symbol: `S3crEt@123`, `1qaz@WSX`,
`b@dP@$sW0rD`) carries its own sign: words, identifiers, versions, paths, hosts, digests and
base64 never hold all four classes with one of the symbols `! @ # $ & ~`. What does hold them
is code and markup, and each such shape is read as what it is and kept:

- a variable or a reference (`$solutionPath`, `${X}`, `$(cmd)`), a placeholder (`<Your@Pass1>`);
- a call or code between brackets (`f(x)[0]`), a regular expression (`\\d`, `.*`), a glob
  (`*.Linux64`), an operator (`&&`, `=>`, `::`), a format string (`%Y-%m-%d`);
- a name behind its sigil (`@Param1`), a place in a file (`main.py#L42`), cells (`Sheet1!A1`),
  an amount (`Cost$0.014`), Markdown's emphasis, an HTML entity, a locale;
- a path or URL (`/`, `\\`, `%2F`), an email address or `user@host`, `package@1.2.3`, a query
  string (`a=1&B=2`).

A token is a run of characters other than white space and quotes (8 to 64 of them, after the
punctuation around it); in `name=value` or `name:value` the value is judged. docs/redaction.md,
"A value shaped like a password", says why each exception is safe.
"""

from __future__ import annotations

import re
from typing import Iterator
from urllib.parse import unquote

KIND = "password_shape"
MIN_LEN, MAX_LEN = 8, 64

# Not `*`, `^` or `%`: in text they multiply, raise, anchor, format and escape (`2*x`, `x^2`,
# `^[a-z]`, `%d`, `%20`); a password may still hold them beside one of these.
_SYMBOL = "!@#$&~"
_TOKEN = re.compile(r"""(?<![^\s"'`])[^\s"'`]*[!@#$&~][^\s"'`]*""")
_CLASSES = (re.compile(r"[a-z]"), re.compile(r"[A-Z]"), re.compile(r"[0-9]"))
_CODE = ("/", "\\", "${", "{{", "$(", ".*", ".+", "*.", "(?", "&&", "||", "->", "=>", "::", "##", "a-z", "A-Z", "0-9")
_VARIABLE = re.compile(r"(?:^|[=:(\[{,)\]])\$[A-Za-z_0-9]")  # `$name`, `x=$name`, `[string]$name`: shell, PHP, PowerShell, Perl
_INNER_CLASS = re.compile(r"[\w.]*[A-Za-z_]\w*(?:\$\w+)+(?:\.class)?")  # Java's `Outer$Inner1`, `Foo$1.class`
_OPEN, _CLOSE = re.compile(r"[(\[{]"), re.compile(r"[)\]}]")
_CALL = re.compile(r"[A-Za-z_][\w.]*\(")  # `@lru_cache(maxsize`, `norm(A@x0`: a call
_ENTITY = re.compile(r"&(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);")  # `&nbsp;`, `&#39;`: HTML's characters
_LOCALE = re.compile(r"[a-z]{2,3}_[A-Z]{2}(?:\.[\w-]+)?(?:@\w+)?")  # `sr_RS.UTF-8@latin`
_FORMAT = re.compile(r"%[A-Za-z]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_USER_AT_HOST = re.compile(r"[a-z][a-z0-9._-]{2,}@[A-Za-z0-9.-]+")
_PACKAGE_AT_VERSION = re.compile(r"@?[\w./-]+@[v^~]?\d+\.\d+.*")
_QUERY = re.compile(r"[\w.-]+=[^&]*(?:&[\w.-]+=[^&]*)+")
# `@Param1`, `#navBar2`, `!isReady2`, `%APPDATA%`, `~python:mod.Name`, `@handle1!`; `~73K-char` (about)
_SIGIL_NAME = re.compile(r"[!@#$%^&*~]+\.?[A-Za-z0-9_][\w.:-]*[%@!]?|~\d[\w.,-]*")
_MONEY = re.compile(r"\$\d[\d,]*(?:\.\d+)?")  # `Cost$0.014`: an amount
_WRAPPED = re.compile(r"(\*{1,3}|_{1,2}|~~)(?P<inner>[^*_~]+)\1")  # Markdown's `**Python3**`, `~~v2Beta~~`
# `main.py#L42`, `com.example.v2#NotFound`, `Parser#visitExpr2`: a file, a module or a class, and a place in it
_ANCHOR = re.compile(r"[\w.-]*\.[\w-]+#[A-Za-z][\w.-]*|[A-Z][A-Za-z0-9]+#[a-z][A-Za-z0-9_]*")
_OBJECT_AT = re.compile(r"[A-Za-z_][\w.$]*@[0-9a-f]{1,16}")  # Java's `Object.toString()`: `com.x.Key@1b6d3586`
_CHAR_REFS = re.compile(r"(?:#x[0-9A-Fa-f]+[-,|]?)+")  # XML's `#x20-#xD7FF`
_ENCODED_WORD = re.compile(r"\?[\w-]+\?[QqBb]\?")  # MIME's `=?utf-8?q?W=C3=B6rld!?=`
_CELL = re.compile(r"[\w.]+!\$?[A-Z]{1,3}\$?\d+(?::\$?[A-Z]{1,3}\$?\d+)?")  # `Sheet1!A1:B2`: a spreadsheet's cells
_NAME = re.compile(r"[A-Za-z_][\w.-]*[=:](?![=:])")
_ITEM = re.compile(r"[^,]+")
_PLACEHOLDER = re.compile(r"<[^<>]*>")
_LEFT, _RIGHT = "=:,([{<", ",;:)]}>."


def _code(v: str) -> bool:
    """Code or markup: a path, a call, an index or a block, a variable, an operator, a pattern, an entity."""
    return (any(c in v for c in _CODE) or bool(_VARIABLE.search(v) or _CALL.search(v) or _ENTITY.search(v))
            or bool(_OPEN.search(v) and _CLOSE.search(v)))


def shaped(v: str) -> bool:
    """Is v (one token, its surrounding punctuation taken off) shaped like a strong password?"""
    if not MIN_LEN <= len(v) <= MAX_LEN or not any(c in _SYMBOL for c in v):
        return False
    if not all(p.search(v) for p in _CLASSES):
        return False
    if "$" in v and not any(c in _SYMBOL for c in _MONEY.sub("", v)):
        return False
    wrapped = _WRAPPED.fullmatch(v)
    if wrapped:
        return shaped(wrapped.group("inner"))
    if _SIGIL_NAME.fullmatch(v) or _ANCHOR.fullmatch(v) or _CELL.fullmatch(v) or _INNER_CLASS.fullmatch(v):
        return False  # a name behind its sigil, a place in a file, a range of cells
    if "%" in v and (any(c in unquote(v) for c in "/ \t\n") or len(_FORMAT.findall(v)) >= 2):
        return False  # `http%2F%2Fhost`, `This%20is`: a URL or text, encoded; `%Y-%m-%dT%H`: a format string
    if _code(v):
        return False
    if _LOCALE.fullmatch(v) or _CHAR_REFS.fullmatch(v) or _ENCODED_WORD.search(v) or _OBJECT_AT.fullmatch(v):
        return False
    return not (_EMAIL.fullmatch(v) or _USER_AT_HOST.fullmatch(v) or _PACKAGE_AT_VERSION.fullmatch(v)
                or _QUERY.fullmatch(v))


def spans(s: str) -> Iterator[tuple[int, int, str]]:
    """The span of every password-shaped value in s."""
    for m in _TOKEN.finditer(s):
        whole = m.group()
        if len(whole) < MIN_LEN or _QUERY.fullmatch(whole.strip(_LEFT + _RIGHT)) or _PLACEHOLDER.search(whole):
            continue
        if _code(whole):
            continue  # `(a|b{2,50})$`, `match![0]);`: code, judged whole before its items and its punctuation
        for part in _ITEM.finditer(m.group()):  # `a=1,b=2`: a list, item by item
            token, start = part.group(), m.start() + part.start()
            named = _NAME.match(token)
            if named:
                token, start = token[named.end():], start + named.end()  # `name=value`, `user:pass`: the value
            left = len(token) - len(token.lstrip(_LEFT))
            right = len(token.rstrip(_RIGHT))
            if shaped(token[left:right]):
                yield start + left, start + right, KIND


def _shape_table() -> bytes:
    """Each byte as its class: a token boundary, a symbol, an upper-case or lower-case letter, a digit, other."""
    out = bytearray()
    for b in range(256):
        c = chr(b)
        out += (b" " if c in " \t\n\r\f\v\"'`" else b"!" if c in _SYMBOL else b"A" if "A" <= c <= "Z"
                else b"a" if "a" <= c <= "z" else b"0" if "0" <= c <= "9" else b".")
    return bytes(out)


_SHAPE = _shape_table()
_ESCAPE_B = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|([\s\S]))")
_ESCAPED = {ord('"'): b" ", ord("n"): b" ", ord("r"): b" ", ord("t"): b" ", ord("f"): b" ", ord("\\"): b"\\", ord("/"): b"/"}


def _unescape(m: re.Match[bytes]) -> bytes:
    """A JSON escape as one byte that splits tokens where the decoded character does (white space, a quote)."""
    if m.group(1) is not None:
        return b" " if chr(int(m.group(1), 16)).isspace() else b"\x01"
    return _ESCAPED.get(m.group(2)[0], b"\x01")


def present(data: bytes, json: bool = True) -> bool:
    """Fast path: could spans() find a password shape in any string of these bytes (canonical JSON, or one string)?

    The bytes are mapped to their classes in C (one translate); only a token around a symbol that
    also holds a digit and both cases is decoded and judged. A byte token holds every token
    spans() sees in its text (it splits at fewer characters), so nothing spans() finds is missed.
    """
    if json and b"\\" in data:
        data = _ESCAPE_B.sub(_unescape, data)
    shape = data.translate(_SHAPE)
    i = shape.find(b"!")
    while i >= 0:
        lo = shape.rfind(b" ", 0, i) + 1
        hi = shape.find(b" ", i)
        if hi < 0:
            hi = len(shape)
        if hi - lo >= MIN_LEN:
            token = shape[lo:hi]
            if b"0" in token and b"A" in token and b"a" in token and any(
                    True for _ in spans(data[lo:hi].decode("utf-8", "surrogatepass"))):
                return True
        i = shape.find(b"!", hi)
    return False
