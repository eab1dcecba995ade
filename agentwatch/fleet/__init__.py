"""The fleet tier: every machine's records shipped to PostgreSQL and verified there (docs/fleet.md).

`schema` installs the server side (migrations/postgres/); `ship` sends a store's
rows in seq order through the server's ingest function; `worker` runs the
shipper as the daemon's child; `reconcile` and `sql` read the central copy.
"""
