"""What `agentwatch health` can still say when no daemon answers: the spool's backlog and how to start the recorder.

Hooks spool what the daemon does not acknowledge, so with the daemon down the
spool directory holds the records waiting to be stored; counting its files
needs no daemon. The next step depends on how the recorder is run here: a
systemd unit (user or system) or a launchd agent that `agentwatch service
print` set up is started through it; otherwise `agentwatch serve` runs it in
the foreground and `agentwatch service print` writes the service that starts
it at login.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from agentwatch.daemon import health
from agentwatch.daemon.service import LABEL
from agentwatch.daemon.spool import Spool


def start_hint(home: Optional[Path] = None, system_root: Path = Path("/")) -> str:
    """The command that starts the recorder, by the service set up on this machine."""
    home = home or Path.home()
    if (system_root / "etc/systemd/system/agentwatch.service").exists():
        return "sudo systemctl start agentwatch (the system service; its log: journalctl -u agentwatch)"
    if (home / ".config/systemd/user/agentwatch.service").exists():
        return "systemctl --user start agentwatch (its log: journalctl --user -u agentwatch)"
    if (home / f"Library/LaunchAgents/{LABEL}.plist").exists():
        return f"launchctl kickstart gui/{os.getuid()}/{LABEL}"
    if (system_root / f"Library/LaunchDaemons/{LABEL}.plist").exists():
        return f"sudo launchctl kickstart system/{LABEL}"
    return "agentwatch serve (in the foreground); `agentwatch service print` sets it up to start at login"


def report(socket_path: Path, reason: str, spool_dir: Path) -> dict:
    """The health document of a recorder that does not answer: stopped, with the spool and the next step."""
    doc = health.unreachable(socket_path, reason)
    try:
        doc["spool"] = Spool(spool_dir).stats().as_dict() if spool_dir.is_dir() else None
    except OSError:
        doc["spool"] = None  # unreadable here (another user's spool): the reason still says it all
    doc["spool_dir"] = str(spool_dir)
    doc["start"] = start_hint()
    return doc
