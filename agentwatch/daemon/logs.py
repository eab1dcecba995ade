"""The daemon's one logging configuration: stderr, a level, text or JSON lines.

Library modules log through `logging.getLogger(__name__)` and never print; `serve` calls
`configure` once. Text lines read `agentwatch serve: <message>` (warnings and errors name
their level); `json` writes one object per line (`ts`, `level`, `logger`, `message`, and
`exc` with a traceback) for service managers that parse their logs.
"""

from __future__ import annotations

import json
import logging
import sys
import time

LOGGER = "agentwatch"


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        level = "" if record.levelno <= logging.INFO else f"{record.levelname.lower()}: "
        line = f"agentwatch serve: {level}{record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False)


def configure(level: str = "info", fmt: str = "text", stream=None) -> logging.Handler:
    """Send the package's log records to stderr (or `stream`) at `level`, as text or JSON lines."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger(LOGGER)
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    root.propagate = False
    return handler
