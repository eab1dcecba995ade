-- 0001_records: the hash-chained record table, its append-only guards,
-- forensic columns and views. Never edit after release; add a new file.

CREATE TABLE _agentwatch_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- The store's identity is part of every row hash (docs/chain.md).
INSERT INTO _agentwatch_meta (key, value) VALUES
    ('store_id', lower(hex(randomblob(16)))),
    ('chain_version', '1'),
    ('created_at_ns', CAST(unixepoch('subsec') * 1000000000 AS INTEGER));

CREATE TRIGGER _agentwatch_meta_no_update BEFORE UPDATE ON _agentwatch_meta
BEGIN SELECT RAISE(ABORT, 'store metadata is immutable: UPDATE refused'); END;
CREATE TRIGGER _agentwatch_meta_no_delete BEFORE DELETE ON _agentwatch_meta
BEGIN SELECT RAISE(ABORT, 'store metadata is immutable: DELETE refused'); END;

CREATE TABLE records (
    seq            INTEGER PRIMARY KEY,
    record_id      TEXT    NOT NULL UNIQUE,
    kind           TEXT    NOT NULL CHECK (kind IN ('event', 'attestation', 'gap')),
    recorded_at_ns INTEGER NOT NULL,
    payload        TEXT    NOT NULL,
    prev_hash      BLOB    NOT NULL CHECK (length(prev_hash) = 32),
    hash           BLOB    NOT NULL CHECK (length(hash) = 32),
    -- Forensic columns are derived from the payload, so the chain covers them.
    harness    TEXT GENERATED ALWAYS AS (json_extract(payload, '$.harness')) VIRTUAL,
    session_id TEXT GENERATED ALWAYS AS (json_extract(payload, '$.session_id')) VIRTUAL,
    event_name TEXT GENERATED ALWAYS AS (json_extract(payload, '$.event.name')) VIRTUAL,
    event_kind TEXT GENERATED ALWAYS AS (json_extract(payload, '$.event.kind')) VIRTUAL,
    tool_name  TEXT GENERATED ALWAYS AS (json_extract(payload, '$.tool.name')) VIRTUAL
);

CREATE TRIGGER records_append_only_update BEFORE UPDATE ON records
BEGIN SELECT RAISE(ABORT, 'records are append-only: UPDATE refused'); END;
CREATE TRIGGER records_append_only_delete BEFORE DELETE ON records
BEGIN SELECT RAISE(ABORT, 'records are append-only: DELETE refused'); END;
-- Defence in depth behind the one writer: seq stays contiguous from 1.
CREATE TRIGGER records_contiguous_seq BEFORE INSERT ON records
WHEN NEW.seq IS NOT coalesce((SELECT max(seq) FROM records), 0) + 1
BEGIN SELECT RAISE(ABORT, 'records.seq must be the head seq + 1'); END;

CREATE INDEX records_by_time    ON records (recorded_at_ns);
CREATE INDEX records_by_session ON records (session_id, seq);
CREATE INDEX records_by_tool    ON records (tool_name, seq);
CREATE INDEX records_by_event   ON records (harness, event_name, seq);

-- One row per harness event, the table forensic queries start from.
CREATE VIEW events AS
SELECT
    seq,
    record_id,
    recorded_at_ns,
    strftime('%Y-%m-%dT%H:%M:%fZ', recorded_at_ns / 1000000000.0, 'unixepoch') AS recorded_at,
    harness,
    session_id,
    event_name,
    event_kind,
    tool_name,
    json_extract(payload, '$.tool.category') AS tool_category,
    json_extract(payload, '$.turn_id')       AS turn_id,
    json_extract(payload, '$.cwd')           AS cwd,
    json_extract(payload, '$.model')         AS model,
    json_extract(payload, '$.client.pid')    AS client_pid,
    json_extract(payload, '$.client.ts_observed_ns') AS observed_at_ns,
    payload
FROM records
WHERE kind = 'event';

-- The chain as auditors read it: hashes in their printed form.
CREATE VIEW chain AS
SELECT
    seq,
    record_id,
    kind,
    recorded_at_ns,
    'sha256:' || lower(hex(prev_hash)) AS prev_hash,
    'sha256:' || lower(hex(hash))      AS hash
FROM records;
