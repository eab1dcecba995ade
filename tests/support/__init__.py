"""Test-only support code: fault VFS, power-loss and I/O fault runs, the ingest soak."""
