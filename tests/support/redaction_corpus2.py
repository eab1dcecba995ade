"""Score the redaction rules on the held-out corpus (tests/fixtures/redaction/corpus2.json.gz).

It comes from noseyparker's rule examples and trufflehog's detector pattern tests (tests/support/redaction_corpus2_extract.py builds it; every sample names its
source). Scoring and the command line are tests/support/heldout_corpus.py's:
`python tests/support/redaction_corpus2.py --write` records figures2.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout_corpus import HERE, SETS, HeldOut, outcome, totals  # noqa: E402,F401

CORPUS_2 = HeldOut(2, sources=("noseyparker", "trufflehog"), total_label="both")
CORPUS, FIGURES, BEFORE, SOURCES = CORPUS_2.corpus, CORPUS_2.figures, CORPUS_2.before, CORPUS_2.sources
load, score, table = CORPUS_2.load, CORPUS_2.score, CORPUS_2.table

if __name__ == "__main__":
    raise SystemExit(CORPUS_2.main(sys.argv[1:]))
