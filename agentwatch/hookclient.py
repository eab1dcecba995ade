"""The hook client's work: read the hook input, make the envelope, deliver or spool.

agentwatch/hook.py is the entry point and loads this module (from its cached
bytecode, even when run as a file under `python -I -S`). The flow, per hook
invocation: read stdin to EOF, bounded in size and time; wrap the bytes,
unparsed, in a wire-protocol v1 append envelope; send it to the daemon and
wait briefly for the ack; without a valid ack write the envelope to the spool
(tmp/, fsync, rename into new/). The daemon drains the spool deduplicating by
record_id, so spooling on any doubt never stores a record twice.

Standard library only, and from the agentwatch package only platform_layer.py
(itself standard-library only, beside this file), importing as little as it can
(the C modules behind os, socket and json, not those packages): a hook pays for
every millisecond of start-up. See docs/hook.md.
"""

import sys
import time

try:
    # `os` pulls in posixpath and collections.abc, a noticeable share of the hook's start-up;
    # posix has every call used here (docs/benchmarks.md has the hook's start-up figures).
    import posix as _os
except ImportError:  # pragma: no cover - not POSIX
    import os as _os  # type: ignore[no-redef]
import _json  # the C escaper and scanner; `json` would import `re`
import _socket

if __package__:
    from . import platform_layer as _platform
else:  # run as a file: hook.py put this file's directory on the path
    import platform_layer as _platform  # type: ignore[no-redef]

PROTOCOL_VERSION = 1
MAX_LINE = 1 << 20  # wire limit per line, newline excluded
DEFAULT_TIMEOUT_MS = 250  # connect + send + ack
DEFAULT_STDIN_MS = 2000  # read stdin to EOF within this, whatever the pace of its bytes
# Input kept whole up to this size so that an oversized payload can be cut field by field
# (cut_fields); beyond it only the first MAX_LINE bytes are kept, and the digest covers all.
MAX_PARSE = 32 << 20
# A string value longer than this may be cut from an oversized payload, largest first.
_CUT_MIN = 1024
_CUT_HEAD = 1024  # characters of a cut string kept in its marker
_CUT_BUDGET = MAX_LINE - (64 << 10)  # what a cut payload may take of a frame (head and argv besides)
# Keys that hold a tool's arguments (Claude-style tool_input, Copilot toolArgs, Cline parameters
# and input, Cursor's command and file_path).
_INPUT_KEYS = frozenset(("tool_input", "toolArgs", "parameters", "input", "command", "file_path"))
# Room in the frame for the fields decided after the payload is sized.
_RESERVE = 256
_READ_CHUNK = 1 << 18
# Errors after which the frame may be accepted later, unchanged.
RETRYABLE = ("unavailable", "shutting_down")

_enc_ascii = _json.encode_basestring_ascii
_enc_utf8 = _json.encode_basestring
O_CLOEXEC = getattr(_os, "O_CLOEXEC", 0)


# ---------------------------------------------------------------- locations
# The socket and the spool are settings like any other: the environment
# (AGENTWATCH_SOCKET, AGENTWATCH_SPOOL), else the user's config file, else the
# platform default; exactly what agentwatch.config.load resolves (a project
# file may not set either). tests/test_hook.py checks that the two agree. Bytes,
# so no path is ever decoded or re-encoded on the way to the kernel.


def _environ():
    os_mod = sys.modules.get("os")  # when imported in-process, follow os.environ
    return os_mod.environb if os_mod is not None else _os.environ


def _home():
    home = _environ().get(b"HOME")
    if home:
        return home
    import pwd

    return pwd.getpwuid(_os.getuid()).pw_dir.encode("utf-8", "surrogateescape")


def _default_socket():
    runtime = _environ().get(b"XDG_RUNTIME_DIR")
    if runtime and runtime.startswith(b"/"):
        return runtime.rstrip(b"/") + b"/agentwatch/agentwatch.sock"
    return _platform.fallback_runtime_dir(_os.getuid()).encode("utf-8", "surrogateescape") + b"/agentwatch.sock"


def _default_spool():
    data = _environ().get(b"XDG_DATA_HOME")
    if data and data.startswith(b"/"):
        return data.rstrip(b"/") + b"/agentwatch/spool"
    home = _home().rstrip(b"/").decode("utf-8", "surrogateescape")
    return _platform.fallback_data_dir(home).encode("utf-8", "surrogateescape") + b"/spool"


def socket_setting():
    """(the socket path, whether the user named it: in the environment or the config file)."""
    env = _environ().get(b"AGENTWATCH_SOCKET")
    if env:
        return env, True
    configured = config_paths().get("socket")
    return (configured, True) if configured else (_default_socket(), False)


def socket_path():
    return socket_setting()[0]


def spool_path():
    env = _environ().get(b"AGENTWATCH_SPOOL")
    if env:
        return env
    return config_paths().get("spool") or _default_spool()


# ---------------------------------------------------------------- redirects
# An agent that sets AGENTWATCH_SOCKET in its harness's settings can point the hook at a
# listener of its own (docs/hook.md, "Sockets named by the environment"). A socket the
# environment names is used when it is the configured one (the config file's, else the
# default), when the allow file lists it, or when nothing is configured (no allow file, no
# socket in the config file, no daemon at the default socket: the environment is then the
# configuration, as in tests). Otherwise it is refused: the record is spooled to the configured
# spool with the reason, and the daemon stores it as such.

ALLOW_FILE = b"/agentwatch/hook-sockets"  # under $XDG_CONFIG_HOME (else ~/.config): one socket path a line


def _allowed():
    """The sockets the allow file lists; None when there is no usable allow file."""
    base = _environ().get(b"XDG_CONFIG_HOME")
    root = base if base and base.startswith(b"/") else _home().rstrip(b"/") + b"/.config"
    try:
        fd = _os.open(root.rstrip(b"/") + ALLOW_FILE, _os.O_RDONLY | getattr(_os, "O_NOFOLLOW", 0) | O_CLOEXEC)
    except OSError:
        return None
    try:
        st = _os.fstat(fd)
        if st.st_uid != _os.geteuid() or st.st_mode & _OTHERS_WRITE:
            return None
        data = _os.read(fd, 65536)
    finally:
        _os.close(fd)
    return [line.strip() for line in data.split(b"\n") if line.strip() and not line.startswith(b"#")]


def redirect_refused(named):
    """Why the socket the environment names is refused, or None when it may be used."""
    from_file = config_paths().get("socket")
    configured = from_file or _default_socket()
    if named == configured:
        return None
    allowed = _allowed()
    if allowed is not None:
        return None if named in allowed else "socket_not_allowed"
    if from_file:
        return "socket_not_configured"
    try:
        st = _os.lstat(configured)
    except OSError:
        return None  # nothing configured: the environment is the configuration
    return "socket_not_configured" if st.st_mode & _S_IFMT == _S_IFSOCK else None


def _env_ms(name, default):
    try:
        return max(1, int(_environ().get(name, default)))
    except ValueError:
        return default


# ---------------------------------------------------------------- config file
# The user's config file (agentwatch.config.user_config_path), read only for
# `socket` and `spool`. Importing tomllib costs a hook several times its usual
# start-up, so a file written in plain one-line `key = value` lines and
# `[table]` headers (as docs/config.md and docs/deployment.md write it) is read
# here, and anything else goes to tomllib. The trust rule is config.py's: the
# file is the user's or root's and nobody else can write it or its directory.
# A file the hook cannot use is named on stderr and the defaults apply; the
# daemon refuses such a file too, and the record is spooled.

_BARE = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_PATH_KEYS = ("socket", "spool")
_CONFIG_MAX = 1 << 20


class ConfigUnusable(Exception):
    """The config file exists (or AGENTWATCH_CONFIG names one) but cannot be used."""


def config_file():
    """(the config file's path, whether AGENTWATCH_CONFIG named it)."""
    env = _environ()
    explicit = env.get(b"AGENTWATCH_CONFIG")
    if explicit:
        return _expand_user(explicit), True
    base = env.get(b"XDG_CONFIG_HOME")
    root = base if base and base.startswith(b"/") else _home().rstrip(b"/") + b"/.config"
    return root.rstrip(b"/") + b"/agentwatch/config.toml", False


def config_paths():
    """{"socket": bytes, "spool": bytes}, as far as the config file sets them; {} without one.

    Never raises: a file that cannot be used (or read: a directory, an I/O error) is named
    on stderr and ignored, so the record still reaches the default socket or spool.
    """
    try:
        return read_config_paths()
    except ConfigUnusable as exc:
        say("ignoring the config file: %s" % exc)
    except Exception as exc:
        say("ignoring the config file %s: %s" % (_show(config_file()[0]), exc))
    return {}


def read_config_paths():
    path, explicit = config_file()
    try:
        fd = _os.open(path, _os.O_RDONLY | O_CLOEXEC)
    except FileNotFoundError:
        if explicit:
            raise ConfigUnusable("%s does not exist (AGENTWATCH_CONFIG names it)" % _show(path)) from None
        return {}
    except OSError as exc:
        raise ConfigUnusable("%s: %s" % (_show(path), exc.strerror)) from None
    try:
        _trusted(path, _os.fstat(fd))
        data = _os.read(fd, _CONFIG_MAX + 1)
    finally:
        _os.close(fd)
    if len(data) > _CONFIG_MAX:
        raise ConfigUnusable("%s is larger than %d bytes" % (_show(path), _CONFIG_MAX))
    if b"socket" not in data and b"spool" not in data:
        return {}  # the common case: nothing to parse
    top = _plain_toml(data)
    if top is None:
        top = _tomllib(data, path)
    found = {}
    for key in _PATH_KEYS:
        if key not in top:
            continue
        value = top[key]
        if not isinstance(value, str) or not value:
            raise ConfigUnusable("%s: key %r must be a non-empty string (a path)" % (_show(path), key))
        value = _expand_user(value.encode("utf-8", "surrogateescape"))
        if not value.startswith(b"/"):
            raise ConfigUnusable("%s: key %r must be an absolute path (or start with ~)" % (_show(path), key))
        found[key] = value
    return found


def _trusted(path, st):
    if st.st_uid not in (0, _os.geteuid()):
        raise ConfigUnusable("%s is owned by uid %d, not by this user" % (_show(path), st.st_uid))
    if _others_can_write(st):
        raise ConfigUnusable("%s has mode %04o, writable by others" % (_show(path), st.st_mode & 0o7777))
    parent = path.rpartition(b"/")[0] or (b"/" if path.startswith(b"/") else b".")
    pst = _os.stat(parent)
    if pst.st_mode & _S_IFMT != _S_IFDIR or pst.st_uid not in (0, _os.geteuid()):
        raise ConfigUnusable("%s: its directory is not this user's or root's" % _show(path))
    if _others_can_write(pst) and not pst.st_mode & 0o1000:
        raise ConfigUnusable("%s: its directory has mode %04o, writable by others" % (_show(path), pst.st_mode & 0o7777))


def _others_can_write(st):
    """agentwatch.safefs.others_can_write: world-writable, or group-writable by a group not the user's own."""
    if st.st_mode & 0o002:
        return True
    if not st.st_mode & 0o020:
        return False
    import grp
    import pwd

    try:
        me = pwd.getpwuid(_os.geteuid())
        group = grp.getgrgid(st.st_gid)
    except KeyError:
        return True
    return not (st.st_gid == me.pw_gid and group.gr_name == me.pw_name and set(group.gr_mem) <= {me.pw_name})


def _expand_user(path):
    if not path.startswith(b"~"):
        return path
    name, sep, rest = path[1:].partition(b"/")
    if name:
        import pwd

        try:
            home = pwd.getpwnam(name.decode("utf-8", "surrogateescape")).pw_dir.encode("utf-8", "surrogateescape")
        except KeyError:
            return path
    else:
        home = _home()
    home = home.rstrip(b"/")
    return home + b"/" + rest if rest else home or b"/"


def _plain_toml(data):
    """The top-level table's string values, for a file of plain lines; None for anything else.

    Plain: blank lines, comments, `[table]` headers and one-line `key = value`
    pairs with a bare (or dotted) key and a value that is a quoted string without
    escapes, a bare word (a number, true, false) or a one-line list of such.
    """
    if b'"""' in data or b"'''" in data or b"\\" in data or b"\r" in data:
        return None
    top = {}
    in_top = True
    seen = set()
    for raw in data.split(b"\n"):
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        if line.startswith(b"["):
            name, close, rest = line[1:].partition(b"]")
            rest = rest.strip()
            if line.startswith(b"[[") or not close or not _bare(name, dotted=True) or rest and not rest.startswith(b"#"):
                return None
            if name in seen:
                return None
            seen.add(name)
            in_top = False
            continue
        key, eq, value = line.partition(b"=")
        key = key.strip()
        if not eq or not _bare(key, dotted=True):
            return None
        parsed = _plain_value(value.strip())
        if parsed is None:
            return None
        if in_top:
            name = key.decode("ascii")
            if name in top:
                return None  # TOML refuses a key set twice: leave the verdict to tomllib
            top[name] = parsed[0]
    return top


def _bare(name, dotted=False):
    if not name:
        return False
    parts = name.split(b".") if dotted else (name,)
    return all(part and not part.translate(None, _BARE) for part in parts)


def _plain_value(value):
    """(the value,) for a plain value followed by nothing or a comment; None otherwise.

    Only strings keep their value: the paths are strings, and anything else in their place is refused.
    """
    if value[:1] in (b'"', b"'"):
        end = value.find(value[:1], 1)
        if end < 0:
            return None
        rest = value[end + 1:].strip()
        if rest and not rest.startswith(b"#"):
            return None
        try:
            return (value[1:end].decode("utf-8"),)
        except UnicodeDecodeError:
            return None
    if value.startswith(b"["):
        inner, close, rest = value[1:].partition(b"]")
        rest = rest.strip()
        if not close or b"[" in inner or rest and not rest.startswith(b"#"):
            return None
        for item in inner.split(b","):
            item = item.strip()
            if item and _plain_value(item) is None:
                return None
        return ([],)  # lists matter only as lines to step over
    word = value.partition(b"#")[0].strip()
    if not word or word.translate(None, _BARE + b".:+"):
        return None
    return (None,)  # a number, a boolean or a date: never a path


def _tomllib(data, path):
    import tomllib

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigUnusable("%s is not valid TOML: %s" % (_show(path), exc)) from None


# ---------------------------------------------------------------- ownership
# A small copy of agentwatch/safefs.py's rule (this file imports nothing from
# the package): what the hook connects to or writes into belongs to this user,
# and nobody else can write it. Checked with lstat or on an open descriptor,
# so no symlink is followed.

_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFSOCK = 0o140000
_OTHERS_WRITE = 0o022
_DIR_FLAGS = _os.O_RDONLY | getattr(_os, "O_DIRECTORY", 0) | getattr(_os, "O_NOFOLLOW", 0) | O_CLOEXEC


class Unsafe(Exception):
    """A path another user controls, or could: not used."""


def _judge(path, st, kind):
    if st.st_mode & _S_IFMT != kind:
        raise Unsafe("%s is not a %s" % (_show(path), "socket" if kind == _S_IFSOCK else "directory"))
    if st.st_uid != _os.geteuid():
        raise Unsafe("%s is owned by uid %d, not by this user" % (_show(path), st.st_uid))
    if st.st_mode & _OTHERS_WRITE:
        raise Unsafe("%s has mode %04o, writable by others" % (_show(path), st.st_mode & 0o7777))


def check_socket(path, configured=False):
    """Raise Unsafe unless the socket and its directory are ours and nobody else can write them.

    Whoever controls either could answer in the daemon's place and read the
    unredacted payload. A socket the user named (AGENTWATCH_SOCKET: the service
    deployment's, owned by the service account, docs/deployment.md) may belong to
    another account, but neither it nor its directory may be writable by everyone,
    nor the directory by its group.
    """
    directory = path.rstrip(b"/").rpartition(b"/")[0] or (b"/" if path.startswith(b"/") else b".")
    if not configured:
        _judge(directory, _os.lstat(directory), _S_IFDIR)
        _judge(path, _os.lstat(path), _S_IFSOCK)
        return
    for where, st, kind, forbidden in ((directory, _os.lstat(directory), _S_IFDIR, _OTHERS_WRITE),
                                       (path, _os.lstat(path), _S_IFSOCK, 0o002)):
        if st.st_mode & _S_IFMT != kind:
            raise Unsafe("%s is not a %s" % (_show(where), "socket" if kind == _S_IFSOCK else "directory"))
        if st.st_mode & forbidden:
            raise Unsafe("%s has mode %04o, writable by others" % (_show(where), st.st_mode & 0o7777))


def _show(path):
    return path.decode("utf-8", "backslashreplace")


# ---------------------------------------------------------------- record id


def uuid7(unix_ms=None):
    """A UUIDv7: 48-bit Unix ms, version 7, variant 0b10, 74 random bits.

    Ids made later sort later, so the store's UNIQUE index grows at its end.
    """
    if unix_ms is None:
        unix_ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(_os.urandom(10), "big")
    value = (
        (unix_ms & 0xFFFFFFFFFFFF) << 80
        | 0x7 << 76
        | (rand >> 68) << 64  # rand_a: 12 bits
        | 0b10 << 62
        | rand & 0x3FFFFFFFFFFFFFFF  # rand_b: 62 bits
    )
    h = "%032x" % value
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


# ---------------------------------------------------------------- input


def _sha256():
    try:
        from _sha2 import sha256  # 3.12+
    except ImportError:
        try:
            from _sha256 import sha256
        except ImportError:
            from hashlib import sha256
    return sha256()


def read_stdin(wait_ms=DEFAULT_STDIN_MS, keep=MAX_LINE):
    """Read fd 0 to EOF, keeping at most `keep` bytes.

    Reads while the pipe is open, however slowly its bytes come, until EOF or
    `wait_ms` in all: a harness that writes its input late is read whole, and
    one that never closes stdin cannot hang the hook. A terminal is not read.
    Returns (kept bytes, total bytes seen, sha256 hex of all bytes seen when
    more than `keep` arrived else None, whether EOF was reached).
    """
    try:
        if _os.isatty(0):
            return b"", 0, None, True
    except OSError:
        return b"", 0, None, True
    import select

    chunks: list = []
    kept = total = 0
    hasher = None
    deadline = time.monotonic() + wait_ms / 1000
    eof = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            if not select.select((0,), (), (), left)[0]:
                break
            data = _os.read(0, _READ_CHUNK)
        except BlockingIOError:  # someone left stdin non-blocking: select again
            continue
        except (OSError, ValueError):  # no fd 0, or it went away: nothing more to read
            eof = True
            break
        if not data:
            eof = True
            break
        total += len(data)
        if hasher is not None:
            hasher.update(data)
        elif total > keep:
            hasher = _sha256()
            for chunk in chunks:
                hasher.update(chunk)
            hasher.update(data)
        if kept < keep:
            chunks.append(data[: keep - kept])
            kept += len(chunks[-1])
    return b"".join(chunks), total, hasher and hasher.hexdigest(), eof


def _too_large(raw):
    """Whether `raw`, escaped into the frame, passes _CUT_BUDGET: the one test both halves of a
    call face, so that a start and an end carrying the same arguments cut them alike."""
    if len(raw) <= _CUT_BUDGET // 6:  # escaping grows text at most sixfold
        return False
    if len(raw) > _CUT_BUDGET:
        return True
    try:
        return len(_enc_utf8(raw.decode("utf-8")).encode("utf-8", "surrogatepass")) > _CUT_BUDGET
    except UnicodeDecodeError:
        return False  # sent as base64, cut as bytes by build_frame


def cut_fields(raw, budget):
    """An oversized JSON payload with its largest strings replaced, so that it fits `budget` bytes.

    Returns (new bytes, [JSON pointer of each cut value]) or None when `raw` is
    not a UTF-8 JSON document or cutting strings does not make it fit. Strings
    outside the tool's arguments go first, largest first. Each cut string
    becomes {"agentwatch_cut": {"orig_bytes", "sha256"}, "head": its first
    characters}, so the ids, tool name and session beside it stay exact and the
    call still pairs. Only this slow path imports `json`.
    """
    import json

    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    found: list = []
    stack: list = [(doc, "", None, None)]
    while stack:
        value, pointer, parent, key = stack.pop()
        if isinstance(value, str):
            if len(value) > _CUT_MIN:
                found.append((len(value.encode("utf-8", "surrogatepass")), pointer, parent, key))
        elif isinstance(value, dict):
            for k, v in value.items():
                stack.append((v, pointer + "/" + k.replace("~", "~0").replace("/", "~1"), value, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                stack.append((v, "%s/%d" % (pointer, i), value, i))
    # The tool's arguments are cut last: a call without a call id pairs on their digest, and
    # its start (arguments only) may fit whole while its end (arguments and result) does not.
    found.sort(key=lambda item: (any(part in _INPUT_KEYS for part in item[1].split("/")), -item[0], item[1]))

    def framed(value):  # bytes of `value` as JSON text inside the frame's payload_text string
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return len(_enc_utf8(text).encode("utf-8", "surrogatepass")), text

    # The input's size less what each cut removes estimates the frame's size cheaply: the
    # whole document is encoded once that estimate fits, and once more at the end if not.
    estimate, size, text = len(raw), None, None
    cut: list = []
    for orig_bytes, pointer, parent, key in found:
        if size is not None and size <= budget:
            break
        if parent is None:
            return None  # the document is one huge string: nothing beside it to keep
        hasher = _sha256()
        hasher.update(parent[key].encode("utf-8", "surrogatepass"))
        removed = len(_enc_ascii(parent[key]))  # its size in the input if that escaped it, else more
        head = parent[key][:_CUT_HEAD]
        parent[key] = {"agentwatch_cut": {"orig_bytes": orig_bytes, "sha256": "sha256:" + hasher.hexdigest()},
                       "head": head}
        cut.append(pointer)
        estimate -= removed - len(_enc_ascii(head)) - 128
        size = None
        if estimate <= budget:
            size, text = framed(doc)
    if cut and size is None:
        size, text = framed(doc)  # escapes in the input made the estimate too high
    if size is None or size > budget or text is None:
        return None
    try:
        return text.encode("utf-8"), cut
    except UnicodeEncodeError:  # a lone surrogate the input escaped
        return None


# ---------------------------------------------------------------- envelope


def build_frame(record_id, harness, event, raw, total, digest, complete, argv=(), from_argv=False, clocks=None,
                cut_pointers=None):
    """The append envelope as one line without its delivery field and closing brace.

    `raw` is the payload bytes kept (all of them unless `total` is larger);
    the payload is cut further if its JSON form would push the line past
    MAX_LINE. Whenever the payload carried is not the whole input, the
    envelope says `truncated: true` with the size and sha256 of everything
    read. Append `,"delivery":"socket"}` (or "spool") to finish the line.
    """
    t_wall, t_mono = clocks or (time.time_ns(), time.monotonic_ns())
    full = raw
    truncated = total > len(raw) or not complete
    text = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut may have split the last character: drop its first bytes.
        if truncated and exc.end == len(raw) and len(raw) - exc.start < 4:
            try:
                raw = raw[: exc.start]
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raw = full
    head = [
        '{"op":"append","v":%d,"record_id":"%s","harness":%s,"event":%s,'
        '"ts_observed_ns":%d,"ts_mono_ns":%d,"pid":%d,"ppid":%d'
        % (
            PROTOCOL_VERSION,
            record_id,
            _enc_ascii(harness),
            "null" if event is None else _enc_ascii(event),
            t_wall,
            t_mono,
            _os.getpid(),
            _os.getppid(),
        )
    ]
    if argv:
        listed = ",".join(map(_enc_ascii, argv))
        if len(listed) <= MAX_LINE // 4:
            head.append(',"argv":[%s]' % listed)
        else:
            head.append(',"argv_truncated":true')
    if from_argv:
        head.append(',"payload_from":"argv"')
    head_bytes = "".join(head).encode("utf-8")
    budget = MAX_LINE - len(head_bytes) - _RESERVE
    if text is not None:
        key = b',"payload_text":'
        body = _enc_utf8(text).encode("utf-8")
        cut = len(raw)
        while len(body) > budget:
            # Escapes make the JSON longer than the text: shrink in proportion,
            # at a character boundary, until it fits.
            truncated = True
            cut = min(cut - 1, cut * budget // len(body))
            while cut > 0 and raw[cut] & 0xC0 == 0x80:
                cut -= 1
            body = _enc_utf8(raw[:cut].decode("utf-8")).encode("utf-8")
    else:
        import binascii

        key = b',"payload_b64":'
        if len(raw) > (budget - 2) // 4 * 3:
            truncated = True
            raw = raw[: (budget - 2) // 4 * 3]
        body = b'"' + binascii.b2a_base64(raw, newline=False) + b'"'
    tail = ',"orig_bytes":%d,"truncated":%s' % (total, "true" if truncated else "false")
    if truncated:
        if digest is None:
            hasher = _sha256()
            hasher.update(full)
            digest = hasher.hexdigest()
        tail += ',"raw_sha256":"sha256:%s"' % digest
    if not complete:
        tail += ',"stdin_incomplete":true'
    if cut_pointers:
        tail += ',"cut_fields":[%s]' % ",".join(map(_enc_ascii, cut_pointers))
    return head_bytes + tail.encode("ascii") + key + body


# ---------------------------------------------------------------- delivery


class Rejected(Exception):
    """The daemon answered ok:false; `code` is its error name."""

    def __init__(self, code, message):
        Exception.__init__(self, "%s: %s" % (code, message))
        self.code = code


class _ScanContext:
    # What _json.make_scanner reads from json.JSONDecoder.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float
    memo = None


_scan = _json.make_scanner(_ScanContext())  # type: ignore[arg-type]


def parse_reply(line, record_id):
    """The acknowledged seq, or an exception saying why `line` is not an ack for `record_id`."""
    text = line.decode("utf-8")
    reply, end = _scan(text, 0)
    if text[end:].strip() or not isinstance(reply, dict):
        raise ValueError("reply is not one JSON object")
    if reply.get("ok") is True:
        seq = reply.get("seq")
        if type(seq) is not int or seq < 1:
            raise ValueError("ack without a valid seq")
        if reply.get("record_id") != record_id:
            raise ValueError("ack for another record_id")
        return seq
    if reply.get("ok") is False:
        raise Rejected(str(reply.get("error")), str(reply.get("message", ""))[:200])
    raise ValueError("reply has no ok field")


def send(path, line, record_id, timeout_ms):
    """Send one line and wait for its ack; returns seq or raises (OSError, ValueError, Rejected)."""
    deadline = time.monotonic() + timeout_ms / 1000
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout_ms / 1000)
        sock.connect(path)
        sock.sendall(line)  # the timeout bounds the whole sendall
        reply = b""
        while b"\n" not in reply:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no ack within %d ms" % timeout_ms)
            sock.settimeout(left)
            data = sock.recv(65536)
            if not data:
                raise ConnectionError("daemon closed the connection before the ack")
            reply += data
            if len(reply) > MAX_LINE:
                raise ValueError("reply line too long")
    finally:
        sock.close()
    return parse_reply(reply[: reply.index(b"\n")], record_id)


# ---------------------------------------------------------------- spool


def _mkdirs(path):
    try:
        _os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:
        parent = path.rstrip(b"/").rpartition(b"/")[0]
        if not parent or parent == path:
            raise
        _mkdirs(parent)
        try:
            _os.mkdir(path, 0o700)
        except FileExistsError:
            pass


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[_os.write(fd, view) :]


def _open_dir(name, dir_fd=None):
    """A descriptor on a directory of ours, opened without following a symlink; made 0700 if missing."""
    try:
        try:
            fd = _os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            if dir_fd is None:
                _mkdirs(name)
            else:
                try:
                    _os.mkdir(name, 0o700, dir_fd=dir_fd)
                except FileExistsError:
                    pass
            fd = _os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        import errno  # built in; only this path needs it

        if exc.errno in (errno.ENOTDIR, errno.ELOOP):  # a symlink is not followed
            raise Unsafe("%s is not a directory (a symlink is not followed)" % _show(name)) from None
        raise
    try:
        _judge(name, _os.fstat(fd), _S_IFDIR)
    except BaseException:
        _os.close(fd)
        raise
    return fd


def spool_write(root, record_id, data):
    """Write `data` to root/tmp/<record_id>.json, fsync it, rename into root/new/.

    The rename is atomic, so the drainer sees whole files only and concurrent
    hooks never interleave. Returns the final path. A failure part-way leaves
    tmp/ as it is: the daemon moves stale tmp files to new/ after a grace
    period, where a complete one is stored and a partial one becomes a gap.

    The root, tmp/ and new/ are opened without following a symlink and must
    be ours and writable by nobody else (Unsafe otherwise); the file is made
    and renamed relative to those open directories, so nothing can redirect
    it between the check and the write.
    """
    name = record_id.encode("ascii") + b".json"
    root_fd = _open_dir(root)
    try:
        tmp_fd = _open_dir(b"tmp", root_fd)
        try:
            new_fd = _open_dir(b"new", root_fd)
            try:
                flags = _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL | getattr(_os, "O_NOFOLLOW", 0) | O_CLOEXEC
                fd = _os.open(name, flags, 0o600, dir_fd=tmp_fd)
                try:
                    _write_all(fd, data)
                    _platform.full_fsync(fd)
                finally:
                    _os.close(fd)
                _os.rename(name, name, src_dir_fd=tmp_fd, dst_dir_fd=new_fd)
                _platform.full_fsync(new_fd)  # the rename itself must survive a crash too
            finally:
                _os.close(new_fd)
        finally:
            _os.close(tmp_fd)
    finally:
        _os.close(root_fd)
    return root + b"/new/" + name


# ---------------------------------------------------------------- record


def redact_for_spool(line):
    """Slow path only: the frame with its payload's secrets masked before it rests on disk.

    The redaction rules are not standard-library code, so they are imported here and
    never on the fast path (docs/redaction.md, "Before the store"). Should they fail to
    load or run, the frame is spooled as it is and the hook says so: a record is never
    lost for want of its redaction.
    """
    try:
        if "agentwatch" not in sys.modules:
            # Run as a file: the package is this file's directory; its parent is searched last.
            parent = __file__.rpartition("/")[0].rpartition("/")[0] or "."
            if parent not in sys.path:
                sys.path.append(parent)
        from agentwatch.daemon import spool_redact

        return spool_redact.redact_for_spool(line)
    except Exception as exc:
        say("spooling a record unredacted: %s: %s" % (type(exc).__name__, exc))
        return line


def say(message):
    try:
        _os.write(2, ("agentwatch-hook: %s\n" % message).encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def _ledger(path, record_id, outcome, seq, t0_mono, reason=None):
    """One line per attempt, in a single O_APPEND write (atomic for a line this small)."""
    now_mono = time.monotonic_ns()
    line = '{"record_id":"%s","outcome":"%s","seq":%s,"reason":%s,"ts_ns":%d,"latency_us":%d}\n' % (
        record_id,
        outcome,
        "null" if seq is None else "%d" % seq,
        "null" if reason is None else '"%s"' % reason,
        time.time_ns(),
        (now_mono - t0_mono) // 1000,
    )
    fd = _os.open(path, _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT | O_CLOEXEC, 0o600)
    try:
        _os.write(fd, line.encode("ascii"))
    finally:
        _os.close(fd)


def _parse_args(argv):
    harness = argv[0]
    rest = list(argv[1:])
    event = None
    if rest and rest[0] == "--event" and len(rest) > 1:
        event = rest[1]
        rest = rest[2:]
    elif rest and rest[0].startswith("--event="):
        event = rest[0][len("--event=") :]
        rest = rest[1:]
    return harness, event, rest


def record(argv, t0_mono=None, t0_wall=None):
    """Capture one hook invocation; returns (record_id, outcome, seq). May raise.

    `argv` is HARNESS [--event NAME] [ARG...]; the clocks default to now.
    """
    if t0_mono is None:
        t0_mono = time.monotonic_ns()
    if t0_wall is None:
        t0_wall = time.time_ns()
    harness, event, extra = _parse_args(argv)
    env = _environ()
    record_id = uuid7(t0_wall // 1_000_000)
    raw, total, digest, complete = read_stdin(_env_ms(b"AGENTWATCH_HOOK_STDIN_MS", DEFAULT_STDIN_MS), MAX_PARSE)
    from_argv = False
    if total == 0 and extra and extra[-1].lstrip().startswith("{"):
        # Codex's legacy `notify` passes its JSON as the last argument, stdin empty.
        raw = extra.pop().encode("utf-8", "surrogateescape")
        total, digest, complete, from_argv = len(raw), None, True, True
    cut = None
    if _too_large(raw):
        # Too large for one frame: keep every field but the largest, cut and marked.
        if digest is None:
            hasher = _sha256()
            hasher.update(raw)
            digest = hasher.hexdigest()
        shrunk = cut_fields(raw, _CUT_BUDGET) if complete and total == len(raw) else None
        raw, cut = shrunk if shrunk else (raw[:MAX_LINE], None)
    frame = build_frame(
        record_id, harness, event, raw, total, digest, complete, extra, from_argv, (t0_wall, t0_mono), cut
    )

    seq = None
    reason = None  # why the record was not acknowledged, for the ledger
    named = _environ().get(b"AGENTWATCH_SOCKET")
    refused = redirect_refused(named) if named else None
    if refused is not None:
        reason = "redirect_refused"
        # The path cut to fit the frame's reserve (_RESERVE) beside the delivery field.
        text = named.decode("utf-8", "replace")
        shown = _enc_ascii(text)
        while len(shown) > 150:
            text = text[: len(text) // 2]
            shown = _enc_ascii(text + "...")
        frame += (',"redirect_refused":{"socket":%s,"reason":"%s"}' % (shown, refused)).encode("ascii")
        say("not connecting to %s (%s); spooling record %s" % (_show(named), refused, record_id))
    try:
        if refused is not None:
            raise Unsafe(refused)
        path, configured = socket_setting()
        check_socket(path, configured=configured)
        seq = send(
            path,
            frame + b',"delivery":"socket"}\n',
            record_id,
            _env_ms(b"AGENTWATCH_HOOK_TIMEOUT_MS", DEFAULT_TIMEOUT_MS),
        )
    except Rejected as exc:
        reason = exc.code
        if exc.code not in RETRYABLE:
            # The daemon will refuse this frame again at drain, but spooling it
            # keeps its bytes and turns the refusal into a visible gap row.
            say("daemon rejected record %s (%s); spooling it so the rejection is recorded" % (record_id, exc))
    except Unsafe as exc:
        if refused is None:
            reason = "unsafe_socket"
            say("not connecting: %s; spooling record %s" % (exc, record_id))
    except TimeoutError:
        reason = "timeout"
    except (FileNotFoundError, ConnectionRefusedError):
        reason = "no_daemon"
    except Exception:
        reason = "error"  # daemon down, slow or confused: the spool is the designed path

    outcome = "acked"
    if seq is None:
        try:
            # A refused redirect spools where the configured daemon drains, not beside the redirect.
            root = spool_path() if refused is None else config_paths().get("spool") or _default_spool()
            spool_write(root, record_id, redact_for_spool(frame + b',"delivery":"spool"}\n'))
            outcome = "spooled"
        except Exception as exc:
            outcome = "failed"
            where = spool_path().decode("utf-8", "replace")
            say("could not spool record %s to %s: %s" % (record_id, where, exc))

    ledger = env.get(b"AGENTWATCH_LEDGER")
    if ledger:
        try:
            _ledger(ledger, record_id, outcome, seq, t0_mono, reason)
        except Exception as exc:
            say("could not append to ledger %s: %s" % (ledger.decode("utf-8", "replace"), exc))
    return record_id, outcome, seq
