"""No text makes the redaction rules backtrack without end.

A pattern with two ways to read the same characters (`(?:[A-Z]?[a-z]+)+` splitting a run of
letters, `\\.` or `.` for a backslash, `[a-z]{2,}[a-z0-9]*` dividing one run between two
quantifiers) tries every reading before it fails, so each character more doubles its time: a
record the agent wrote could stall the daemon's redaction. The inputs here are those shapes at
a length where an exponential reading would not finish within the test's timeout; each runs in a
child process, so a regression fails the test instead of hanging the suite. The shapes were found
by scoring the twenty-fifth corpus (a token of one long lower-case run and a `-`) and by feeding
every module-level pattern repeated pieces.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agentwatch.record.redact import formats, rules

SHAPES = {
    # looks_random reads a token of 20 or more with `-` and no digit segment by segment (_WORD_SEGMENT)
    "word segments": "id: Xy-" + "q" * 60 + "Z-" + "w" * 40 + "Q",
    # a value after a secret name, quoted and never closed, full of `\n` escapes (formats._QUOTED)
    "unclosed quote": '"secret": "' + "a\\n" * 60 + "!",
    # a CamelCase run under a name in source code, checked as a type annotation (_TYPE_RE)
    "camel run": "def f():\n    token = " + "Abbbbb" * 60 + "!\n",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_record_of_an_ambiguous_shape_is_redacted_in_linear_time(shape, tmp_path):
    script = textwrap.dedent(f"""
        import json
        from agentwatch.record import redact
        policy = redact.Policy(redact.REDACTED, bytes(range(32)))
        text = {SHAPES[shape]!r}
        for raw in ({{"tool_name": "Bash", "tool_input": {{"command": "cat notes"}},
                      "tool_response": {{"stdout": text, "stderr": ""}}}},
                    {{"tool_name": "Read", "tool_input": {{"file_path": "/p/app.py"}},
                      "tool_response": {{"type": "text", "file": {{"filePath": "/p/app.py", "content": text}}}}}}):
            doc = {{"schema": 1, "raw": raw}}
            json.loads(policy.encode(doc)), policy.apply(doc)
        print("done")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "done\n"


@pytest.mark.parametrize(("segment", "word"), [
    ("PSScriptAnalyzer", True), ("GitHub", True), ("Api", True), ("X", True), ("abc", True),
    ("abcDef", True), ("ABCDEFG", False), ("a1", False), ("", False), ("aBcD", False), ("aBcDe", True), ("AbcdE", False),
])
def test_the_word_segment_pattern_reads_words_as_before(segment, word):
    assert bool(rules._WORD_SEGMENT.fullmatch(segment)) is word


@pytest.mark.parametrize(("value", "type_like"), [
    ("HttpClient", True), ("HttpClient2 | None", True), ("Optional[str]", True), ("Abcdef!", False),
    ("AbcDef", True), ("Ab", False),
])
def test_the_type_pattern_reads_annotations_as_before(value, type_like):
    assert bool(rules._TYPE_RE.fullmatch(value)) is type_like


@pytest.mark.parametrize(("val", "inner"), [
    ('"s3cr\\"et" # note', 's3cr\\"et'),   # an escaped quote stays inside
    ("'abc' ", "abc"),
    ('"a\\\\"', "a\\\\"),                  # an escaped backslash, then the closing quote
    ('"never closed\\n', None),
])
def test_a_quoted_value_is_read_to_its_closing_quote(val, inner):
    m = formats._QUOTED.match(val)
    assert (m.group("v") if m else None) == inner
