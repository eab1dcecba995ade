"""Score the redaction rules on the twenty-second held-out corpus (tests/fixtures/redaction/corpus22.json.gz), format x carrier.

The corpus is what Samsung/CredSweeper's tests expect of its sample files (each file the
default scan's expected findings name, a positive whole or, in a long file, by the runs of
lines holding its values; each file no default, deep or documentation finding names, and each
line of a positive file the rules alone report that none of them names, an upstream negative),
and ordinary files of that repository (tests/support/redaction_corpus22_extract.py builds it;
every sample names its source, its path and the format of its text). As in the fifth to
twenty-first corpora, each sample is stored in the four carriers an agent's record holds text
in, as a Claude Code hook payload (docs/harnesses.md):

- `command`: a Bash command line: the sample itself where it is a shell command line,
  else one that writes the file (`cat > PATH <<'EOF' ... EOF`);
- `output`: the output of `cat PATH` (`tool_response.stdout`);
- `file-read`: a Read of PATH (`tool_response.file.content`);
- `mcp-input`: an MCP tool's input (`mcp__filesystem__write_file` with `path`, `content`).

A positive is caught in a carrier when none of its secrets is left in the stored record:
no 12-character piece of a secret of 12 or more (the earlier corpora's rule), no whole
word of a shorter one (the masks set aside; the extractor keeps only secrets this can
judge). A benign or negative sample is intact when the record is stored unchanged.
`python tests/support/redaction_corpus22.py --write` records figures22.json; `--before`
records figures22-before.json (the rules as they were when the corpus was built, before any
change made with it in view); `--compare FILE` adds that column; `--show FILE` prints the
tables of recorded figures without scoring.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import carrier_corpus  # noqa: E402

SOURCES = ("credsweeper",)
SCORER = carrier_corpus.scorer(globals(), 22, SOURCES)

if __name__ == "__main__":
    raise SystemExit(SCORER.main(sys.argv[1:]))
