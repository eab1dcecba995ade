"""Score the redaction rules on the third held-out corpus (tests/fixtures/redaction/corpus3.json.gz).

It comes from kingfisher's rule examples, semgrep-rules' secret-rule tests and
ripsecrets' test files (tests/support/redaction_corpus3_extract.py builds it; every sample names its
source). Scoring and the command line are tests/support/heldout_corpus.py's:
`python tests/support/redaction_corpus3.py --write` records figures3.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout_corpus import HERE, SETS, HeldOut, outcome, totals  # noqa: E402,F401

CORPUS_3 = HeldOut(3, sources=("kingfisher", "semgrep", "ripsecrets"))
CORPUS, FIGURES, BEFORE, SOURCES = CORPUS_3.corpus, CORPUS_3.figures, CORPUS_3.before, CORPUS_3.sources
load, score, table = CORPUS_3.load, CORPUS_3.score, CORPUS_3.table

if __name__ == "__main__":
    raise SystemExit(CORPUS_3.main(sys.argv[1:]))
