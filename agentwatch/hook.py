"""agentwatch hook client entry point: one harness hook invocation, one record.

Every harness hook runs this, as a file (`python -I -S /abs/path/hook.py
HARNESS [--event NAME] [ARG...]`, the fastest form), as the `agentwatch-hook`
entry point or as `agentwatch hook HARNESS`. The work is in hookclient.py
(standard library only); see docs/hook.md.

Guarantees: exit status 0 whatever happens; nothing on stdout except the
neutral JSON reply a harness requires (`{}` for gemini-cli,
`{"cancel":false}` for cline), never an allow or approve decision.

This file stays small on purpose: a script is compiled from source on every
run (several ms for the whole client), while an imported module is loaded
from its cached bytecode.
"""

import sys
import time

_T0_MONO = time.monotonic_ns()
_T0_WALL = time.time_ns()

# Harnesses that read JSON on stdout get a reply that decides nothing.
JSON_REPLY = {"gemini-cli": b"{}", "cline": b'{"cancel":false}'}
USAGE = b"agentwatch-hook: usage: agentwatch-hook HARNESS [--event NAME] [ARG...]  (hook input on stdin)\n"


TYPED = (b"agentwatch-hook: stdin is a terminal, so this is a person, not a harness: nothing recorded.\n"
         b"A harness runs it with the hook's JSON on stdin; try: agentwatch-hook HARNESS < payload.json\n")


def _typed_at_a_terminal():
    """stdin and stderr both a terminal: typed by hand. A harness pipes the hook's input (and most
    capture stderr); one that passes its payload as an argument has more than the harness name."""
    import posix

    try:
        return posix.isatty(0) and posix.isatty(2)
    except OSError:
        return False


def _client():
    if __package__:
        from . import hookclient

        return hookclient
    # Run as a file: import the client from this file's directory, searched
    # last so that nothing there can shadow a standard module, then forgotten.
    here = __file__.rpartition("/")[0] or "."
    sys.path.append(here)
    try:
        import hookclient  # type: ignore[no-redef]
    except ImportError:
        # Reached through a symlink: the client is beside the real file.
        from os.path import dirname, realpath

        sys.path.append(dirname(realpath(__file__)))
        import hookclient  # type: ignore[no-redef]

        del sys.path[-1]
    finally:
        sys.path.remove(here)
    return hookclient


def _write(fd, data):
    import posix

    try:
        posix.write(fd, data)
    except OSError:
        pass


def run(argv=None, t0_mono=None, t0_wall=None):
    """Record one hook invocation and reply on stdout if the harness needs it. Returns 0."""
    reply = None
    try:
        try:
            import _signal

            # A hook is bounded to well under a second; Ctrl-C in the agent's
            # terminal must not cut a spool write in half.
            _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        except (ImportError, ValueError, OSError):
            pass  # not the main thread
        if argv is None:
            argv = sys.argv[1:]
        if not argv or argv[0].startswith("-"):  # no harness: --help, or a malformed call
            _write(2, USAGE)
            return 0
        reply = JSON_REPLY.get(argv[0])
        if len(argv) == 1 and _typed_at_a_terminal():
            _write(2, TYPED)
            return 0
        _client().record(list(argv), t0_mono, t0_wall)
    except BaseException as exc:  # noqa: BLE001 - a hook must never fail its harness
        _write(2, ("agentwatch-hook: internal error, record not captured: %r\n" % (exc,)).encode("utf-8", "replace"))
    finally:
        if reply is not None:
            _write(1, reply)
    return 0


def main(argv=None):
    """Console entry point: run, then leave at once with status 0.

    os._exit skips interpreter teardown: it saves time, and no flush of a
    closed stdout at exit can turn status 0 into 120.
    """
    if argv is None:
        run(None, _T0_MONO, _T0_WALL)
    else:
        run(argv)
    import posix

    posix._exit(0)


if __name__ == "__main__":
    main()
