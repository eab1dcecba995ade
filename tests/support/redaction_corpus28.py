"""Score the redaction rules on the twenty-eighth held-out corpus (tests/fixtures/redaction/corpus28.json.gz), format x carrier.

The corpus is what fosscode/libreleak's detector tests label
(`tests/detector_tests.rs`: each file a test writes from the fake secrets of `tests/common.rs`
and asserts the scanner detects, a positive whose secrets are those fixtures; each file a test
asserts it detects nothing in, an upstream negative), and ordinary files of the repository
(tests/support/redaction_corpus28_extract.py builds it; every sample names its source, its path
and the format of its text). As in the fifth to twenty-seventh corpora, each sample is stored in
the four carriers an agent's record holds text in, as a Claude Code hook payload
(docs/harnesses.md):

- `command`: a Bash command line: the sample itself where it is a shell command line,
  else one that writes the file (`cat > PATH <<'EOF' ... EOF`);
- `output`: the output of `cat PATH` (`tool_response.stdout`);
- `file-read`: a Read of PATH (`tool_response.file.content`);
- `mcp-input`: an MCP tool's input (`mcp__filesystem__write_file` with `path`, `content`).

A positive is caught in a carrier when none of its secrets is left in the stored record:
no 12-character piece of a secret of 12 or more (the earlier corpora's rule), no whole
word of a shorter one (the masks set aside; the extractor keeps only secrets this can
judge). A benign or negative sample is intact when the record is stored unchanged.
`python tests/support/redaction_corpus28.py --write` records figures27.json; `--before`
records figures27-before.json (the rules as they were when the corpus was built, before any
change made with it in view); `--compare FILE` adds that column; `--show FILE` prints the
tables of recorded figures without scoring.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import carrier_corpus  # noqa: E402

SOURCES = ("libreleak",)
SCORER = carrier_corpus.scorer(globals(), 28, SOURCES)

if __name__ == "__main__":
    raise SystemExit(SCORER.main(sys.argv[1:]))
