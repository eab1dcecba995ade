"""What the record knows it is missing (docs/record.md, "Coverage").

Two sources the agent's hooks do not control alone:

- `manifest` and `hookconfig`: every hook entry `install` wrote, and what the
  harness's config files hold now (removed, changed, narrowed, redirected or
  disabled entries are named findings); the daemon records it as `config`
  attestation rows.
- `transcripts` and `pairing`: each harness's own session record, paired with
  the recorded tool calls (both, missing, extra, mismatched); the daemon
  records it as `coverage` attestation rows at session end.

`rows` reads both kinds of row back for `sessions`, `show`, `health`,
`verify` and `reconcile`.
"""
