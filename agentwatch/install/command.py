"""The command a harness hook runs, and how to recognise it later.

    /abs/python -I -S /abs/site-packages/agentwatch/hook.py HARNESS [--event NAME] [--via CONFIG] || true

- The interpreter is the one agentwatch runs under, by absolute path: a venv's
  python is fine (the client needs no site-packages, `-S` skips them anyway),
  a pyenv/asdf shim is not (a shell script that costs tens of milliseconds
  and can resolve to another Python later); when sys.executable is a shim the
  real binary behind it is used, and if none can be found install refuses.
- `-I -S`: no PYTHON* environment, no user site, no site-packages: start-up
  is a few milliseconds (docs/hook.md).
- `|| true`: the client always exits 0, but Python itself exits 2 when it
  cannot open the script (agentwatch uninstalled or moved, a venv rebuilt),
  and exit 2 means "block" to Claude Code, Codex, Gemini CLI, Cursor, VS Code
  and OpenHands. Every harness here runs the command through a POSIX shell
  (Codex through `$SHELL -lc`), where `|| true` turns any failure into 0.

- `--via CONFIG`: the config file (or Cline hooks directory) the entry is
  written in. The client passes it on with the record (`via.config`), so a
  record says which file's hook sent it even when another harness ran that
  file (docs/record.md, "Sender and via").

agentwatch's entries are recognised by their shape, never by position: the
command's words contain a path ending in `agentwatch/hook.py` followed by the
harness name.
"""

from __future__ import annotations

import os
import shlex

from agentwatch.interpreter import InterpreterNotFound, python_binary

from .core import InstallError

HOOK_SUFFIX = "agentwatch/hook.py"
GUARD = "|| true"
# Characters that quote differently across sh, bash, zsh and fish (Codex runs $SHELL).
_UNQUOTABLE = ("\n", "\r", "\0", "\\")


def hook_file() -> str:
    """Absolute path of the stdlib-only client file (agentwatch/hook.py)."""
    from agentwatch import hook

    path = os.path.abspath(hook.__file__)
    if not os.path.isfile(path):
        raise InstallError(f"the hook client {path} is not a file (agentwatch installed as a zip?)")
    return path


def interpreter() -> str:
    """Absolute path of a real Python binary to run the client with (agentwatch.interpreter)."""
    try:
        return python_binary()
    except InterpreterNotFound as exc:
        raise InstallError(str(exc)) from None


def _quote(word: str) -> str:
    if any(ch in word for ch in _UNQUOTABLE):
        raise InstallError(f"path {word!r} contains characters that cannot be quoted for every shell")
    return shlex.quote(word)


def argv(
    harness: str, event: str | None = None, python: str | None = None, hook: str | None = None,
    via: str | None = None,
) -> list[str]:
    words = [python or interpreter(), "-I", "-S", hook or hook_file(), harness]
    if event is not None:
        words += ["--event", event]
    if via is not None:
        words += ["--via", via]
    return words


def shell_words(words: list[str]) -> str:
    """`words` as one POSIX shell command line, each quoted only when it needs it."""
    return " ".join(_quote(w) for w in words)


def command(
    harness: str, event: str | None = None, python: str | None = None, hook: str | None = None,
    via: str | None = None,
) -> str:
    """The shell command line a harness hook runs (with the `|| true` guard)."""
    return shell_words(argv(harness, event, python, hook, via)) + " " + GUARD


def is_ours(text: object, harness: str) -> bool:
    """True when a command string is agentwatch's hook client for `harness`."""
    if not isinstance(text, str) or HOOK_SUFFIX not in text:
        return False
    try:
        words = shlex.split(text, comments=False, posix=True)
    except ValueError:
        return False
    for i, word in enumerate(words[:-1]):
        if (word == HOOK_SUFFIX or word.endswith("/" + HOOK_SUFFIX)) and words[i + 1] == harness:
            return True
    return False
