"""Credential-bearing flags and argument positions of command lines, from data (commands.toml).

A shell command line is split into simple commands (at `|`, `;`, `&&`, `||` and line
breaks), each into words with their offsets (quotes kept out of the value); the tool is the
first word after environment assignments and wrappers (`sudo`, `env`, `time`, ...), by its
base name. For each row of commands.toml naming that tool, the flag's value (the next word,
or after `=`, or glued to a short flag where the row says so) is masked, the part of it
the row names. A value that is a reference (`$VAR`, `${VAR}`, `$(cmd)`) names a secret
kept elsewhere and stays.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

KIND = "cli_flag"
MAX_COMMAND = 1 << 20  # longer command lines are left to the line rules (as formats.MAX_TEXT leaves texts)
_SEGMENT = re.compile(r"\|\|?|&&|;|\n|\\n|\(|\)|`")
_WORD = re.compile(r"""(?:"(?:\\.|[^"\\])*"|'[^']*'|\\.|[^\s"'|;&()`\\])+""")
# Words that run the command after them; `RUN` is a Dockerfile's instruction whose shell form runs a command line.
_WRAPPERS = frozenset({"sudo", "env", "time", "exec", "nohup", "command", "nice", "doas", "xargs", "watch", "timeout",
                       "RUN"})
_REFERENCE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|\$[0-9@*#?]|<[^<>]*>|\*+|x{4,}|X{4,}"
                        r"|\$\{\{[^}]*\}\}")  # a GitHub Actions expression (`${{ secrets.TOKEN }}`)


@dataclass(frozen=True)
class Row:
    tool: str
    flags: tuple[str, ...]
    value: str
    attached: bool
    subcommand: tuple[str, ...]
    conninfo: bool
    source: str
    separate: bool = True
    piped_from: tuple[str, ...] = ()  # the row reads the words of the command piped into this tool


@lru_cache(maxsize=1)
def table() -> tuple[Row, ...]:
    text = resources.files("agentwatch.record.redact").joinpath("commands.toml").read_text("utf-8")
    data = tomllib.loads(text)
    if data.get("version") != 1:
        raise ValueError("unsupported commands file version")
    return tuple(Row(r["tool"], tuple(r["flags"]), r["value"], r.get("attached", False), tuple(r.get("subcommand", ())),
                     r.get("conninfo", False), r["source"], r.get("separate", True), tuple(r.get("piped_from", ())))
                 for r in data["flag"])


@dataclass(frozen=True)
class PrintRow:
    """A command whose standard output is a secret (commands.toml, `[[prints]]`)."""

    tool: str
    subcommand: tuple[str, ...]
    flags: tuple[str, ...]
    flag_values: tuple[str, ...]
    source: str


@lru_cache(maxsize=1)
def print_table() -> tuple[PrintRow, ...]:
    data = tomllib.loads(resources.files("agentwatch.record.redact").joinpath("commands.toml").read_text("utf-8"))
    return tuple(PrintRow(r["tool"], tuple(r["subcommand"]), tuple(r.get("flags", ())), tuple(r.get("flag_values", ())),
                          r["source"]) for r in data.get("prints", ()))


@lru_cache(maxsize=1)
def _print_tools() -> re.Pattern:
    names = "|".join(sorted({re.escape(r.tool) for r in print_table()}, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_.-])(?:{names})(?![A-Za-z0-9_-])")


# Commands that pass what is piped into them on to their own output (decoding, cutting, quoting it):
# a secret printed into them still reaches the terminal. Any other reader consumes it (`| docker
# login --password-stdin`, `| pbcopy`, `| wc -c`).
_PASS_ON = frozenset({"base64", "base32", "basenc", "tr", "head", "tail", "cut", "sed", "awk", "jq", "yq", "xxd", "od",
                      "cat", "tee", "fold", "rev", "sort", "uniq", "grep", "xargs", "echo", "printf", "openssl"})


def prints_secret(command: str) -> str:
    """The tool of a `[[prints]]` row whose output this command line shows, or "".

    A printing command inside `$(...)` or backquotes is captured, and one whose standard output
    is redirected (`> file`) is not shown; one piped into a reader that does not pass its input
    on (`_PASS_ON`) is consumed. The check errs towards masking: a line that shows a secret's
    output anywhere has its whole output masked.
    """
    if len(command) > MAX_COMMAND or not _print_tools().search(command):
        return ""
    by_tool: dict[str, list[PrintRow]] = {}
    for r in print_table():
        by_tool.setdefault(r.tool, []).append(r)
    pos = 0
    shown = ""  # the tool of a printing command whose output flows on through the pipe being read
    before = ""  # the command word of the segment before
    for seg in [*_SEGMENT.finditer(command), None]:
        end = seg.start() if seg is not None else len(command)
        opened = command[max(0, pos - 2):pos]
        words = [m.group() for m in _WORD.finditer(command, pos, end)]
        pos = seg.end() if seg is not None else len(command)
        piped = seg is not None and seg.group() == "|"
        i = _command_word([(w, 0) for w in words])
        tool = words[i].strip("\"'").rsplit("/", 1)[-1] if i < len(words) else ""
        outer, before = before, tool  # the command a `$(...)` opened in this segment's place is an argument of
        if shown and tool not in _PASS_ON:
            shown = ""  # consumed by the reader it was piped into
        if shown and not piped:
            return shown
        args = words[i + 1:]
        if any(w.startswith(">") or w[:1].isdigit() and w[1:2] == ">" and w[:1] != "2" for w in args):
            shown = ""
            continue  # `gh auth token > token.txt`: written to a file, not shown
        row = next((r for r in by_tool.get(tool, ()) if _prints(r, args)), None)
        captured = opened.endswith(("`", "("))
        if row is not None and (not captured or outer in ("echo", "printf")):  # `echo "$(gh auth token)"` shows it
            if not piped:
                return row.tool
            shown = row.tool
    return shown


def sample_command(row: PrintRow) -> str:
    """A command line the row holds for (the self-test's sample): its tool, subcommand and a flag it asks for."""
    words = [row.tool, *row.subcommand]
    if row.flags:
        words += [row.flags[0], row.flag_values[0] + "={.data.x}" if row.flag_values else "x"]
    return " ".join(words)


def _prints(row: PrintRow, args: list[str]) -> bool:
    words = [w.strip("\"'") for w in args]
    if row.subcommand and not _has_sequence([w.split("/", 1)[0] for w in words], row.subcommand):
        return False  # `kubectl get secret/db` names the secret after a slash
    if not row.flags:
        return True
    for j, w in enumerate(words):
        for flag in row.flags:
            value = w[len(flag) + 1:] if w.startswith(flag + "=") else (
                words[j + 1] if w == flag and j + 1 < len(words) else None)
            if value is None and w.startswith(flag) and len(flag) == 2 and len(w) > 2 and not w.startswith("--"):
                value = w[2:]  # `-ojsonpath=...`: a short flag with its value glued on
            if value is not None and (not row.flag_values or value.startswith(row.flag_values)):
                return True
            if w == flag and not row.flag_values:
                return True
    return False


def tools() -> tuple[str, ...]:
    return tuple(sorted({r.tool for r in table()}))


def verify_pattern() -> bytes:
    """The fast path's test near a tool's name: the name as a word, then a flag of its rows within the line;
    or, for a row that reads what is piped in, the piping command's name, a colon and the tool after a pipe."""
    names = "|".join(re.escape(r.tool) for r in table() if r.flags)
    flags = "|".join(sorted({re.escape(f) for r in table() for f in r.flags}, key=len, reverse=True))
    out = rf"(?:(?<![A-Za-z0-9_.-])(?:{names})(?![A-Za-z0-9_-])[^\r\n]{{0,1300}}?(?:[\s\"'=]|^)(?:{flags}))"
    for r in table():
        if r.piped_from:
            sources = "|".join(re.escape(p) for p in r.piped_from)
            out += rf"|(?:(?:{sources})[^\r\n|]{{0,1300}}:[^\r\n|]{{0,1300}}\|[ \t]*{re.escape(r.tool)})"
    return f"(?i:{out})".encode()


def _unquote(word: str, start: int) -> tuple[int, int]:
    """The span of a word's value inside its quotes (a word wholly in quotes; else the word)."""
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
        return start + 1, start + len(word) - 1
    return start, start + len(word)


def _value_spans(row: Row, s: str, start: int, end: int) -> list[tuple[int, int]]:
    value = s[start:end]
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        start, end, value = start + 1, end - 1, value[1:-1]
    if not value or _REFERENCE.fullmatch(value) or value.startswith(("$(", "${")):
        return []
    if row.value in ("after-colon", "after-percent"):
        i = value.find(":" if row.value == "after-colon" else "%")
        if i < 0 or i == len(value) - 1:
            return []
        start += i + 1
    elif row.value == "after-eq":
        i = value.find("=")
        if i < 0 or i == len(value) - 1:
            return []
        start += i + 1
    elif row.value == "pass-arg":
        if not value.startswith("pass:"):
            return []  # env:, file:, fd:, stdin name where the pass phrase is
        start += 5
    elif row.value == "auth-header":
        m = re.search(r"(?i)authorization:\s*(?:[A-Za-z-]+\s+)?", value)
        if not m or m.end() >= len(value):
            return []
        start += m.end()
    rest = s[start:end]
    if not rest or _REFERENCE.fullmatch(rest) or rest.startswith(("$(", "${")):
        return []
    return [(start, end)]


def spans(s: str) -> list[tuple[int, int, str]]:
    rows = table()
    by_tool: dict[str, list[Row]] = {}
    for r in rows:
        by_tool.setdefault(r.tool, []).append(r)
    out: list[tuple[int, int, str]] = []
    pos = 0
    previous: tuple[str, list[tuple[str, int]]] = ("", [])  # the last simple command, when piped into this one
    piped = False
    for seg in [*_SEGMENT.finditer(s), None]:
        end = seg.start() if seg is not None else len(s)
        words = [(m.group(), m.start()) for m in _WORD.finditer(s, pos, end)]
        pos = seg.end() if seg is not None else len(s)
        came_piped, piped = piped, seg is not None and seg.group() == "|"
        before, previous = previous, ("", [])
        i = _command_word(words)
        if i >= len(words):
            continue
        tool = words[i][0].strip("\"'").rsplit("/", 1)[-1]
        previous = (tool, words[i + 1:])
        mine = by_tool.get(tool) or by_tool.get(tool.lower())
        if not mine:
            continue
        args = words[i + 1:]
        plain = [w for w, _ in args]
        for row in mine:
            if row.piped_from and row.flags and not any(f in plain for f in row.flags):
                continue  # `echo x | docker login --password-stdin`: only with the flag that reads stdin
            if row.piped_from and came_piped and before[0] in row.piped_from:
                for word, start in before[1]:
                    if not word.startswith("-"):
                        out += [(a, b, KIND) for a, b in _value_spans(row, s, start, start + len(word))]
        for row in mine:
            if row.piped_from or row.subcommand and not _has_sequence(plain, row.subcommand):
                continue
            out += [(a, b, KIND) for a, b in _row_spans(row, s, args)]
    return out


def _command_word(words: list[tuple[str, int]]) -> int:
    """The index of a simple command's tool: after environment assignments, wrappers and their flags."""
    i = 0
    while i < len(words) and (re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[i][0])
                              or words[i][0].rsplit("/", 1)[-1] in _WRAPPERS or words[i][0].startswith("-")
                              and i and words[i - 1][0].rsplit("/", 1)[-1] in _WRAPPERS):
        i += 1
    return i


def _has_sequence(words: list[str], seq: tuple[str, ...]) -> bool:
    nonflag = [w.lower() for w in words if not w.startswith("-")]
    return any(nonflag[i:i + len(seq)] == list(seq) for i in range(len(nonflag)))


def _row_spans(row: Row, s: str, args: list[tuple[str, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for j, (word, start) in enumerate(args):
        if row.conninfo:
            a, b = _unquote(word, start)
            for m in re.finditer(r"(?:^|\s)password\s*=\s*('(?:\\.|[^'\\])*'|[^\s'\"]+)", s[a:b]):
                va, vb = a + m.start(1), a + m.end(1)
                if s[va] == "'":
                    va, vb = va + 1, vb - 1
                if vb > va:
                    out.append((va, vb))
            continue
        for flag in row.flags:
            if word == flag:
                if row.value == "next" and j + 1 < len(args):
                    nxt, nstart = args[j + 1]
                    out += _value_spans(Row(row.tool, (), "whole", False, (), False, ""), s, nstart, nstart + len(nxt))
                elif row.value == "last" and j + 1 < len(args):
                    last, lstart = args[-1]
                    out += _value_spans(row, s, lstart, lstart + len(last)) if j + 1 <= len(args) - 1 else []
                elif j + 1 < len(args) and row.value not in ("next", "last") and row.separate:
                    nxt, nstart = args[j + 1]
                    if not (nxt.startswith("-") and len(nxt) > 1 and row.value == "whole" and nxt[1:2].isalpha()
                            and not row.tool == "sqlcmd"):
                        out += _value_spans(row, s, nstart, nstart + len(nxt))
                break
            if word.startswith(flag + "=") and flag.startswith("-"):
                out += _value_spans(row, s, start + len(flag) + 1, start + len(word))
                break
            if row.attached and len(flag) == 2 and word.startswith(flag) and len(word) > 2 and not word.startswith("--"):
                out += _value_spans(row, s, start + 2, start + len(word))
                break
    return out
