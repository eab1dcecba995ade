"""Score the redaction rules on the fourth held-out corpus (tests/fixtures/redaction/corpus4.json.gz).

It comes from the findings trivy's secret scanner tests expect and secretlint's rule
snapshot tests (tests/support/redaction_corpus4_extract.py builds it; every sample names its
source). Scoring and the command line are tests/support/heldout_corpus.py's:
`python tests/support/redaction_corpus4.py --write` records figures4.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout_corpus import HERE, SETS, HeldOut, outcome, totals  # noqa: E402,F401

CORPUS_4 = HeldOut(4, sources=("trivy", "secretlint"))
CORPUS, FIGURES, BEFORE, SOURCES = CORPUS_4.corpus, CORPUS_4.figures, CORPUS_4.before, CORPUS_4.sources
load, score, table = CORPUS_4.load, CORPUS_4.score, CORPUS_4.table

if __name__ == "__main__":
    raise SystemExit(CORPUS_4.main(sys.argv[1:]))
