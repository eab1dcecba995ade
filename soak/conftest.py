"""Soaks share tests/'s helpers (tests/support, daemon.py, faultload.py): put tests/ on the path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
