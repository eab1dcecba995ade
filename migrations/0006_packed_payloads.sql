-- 0006_packed_payloads: event documents stored deflated, with a dictionary trained on
-- the store's own records (docs/chain.md, "Packed payloads"). Never edit after release;
-- add a new file.
--
-- A packed row holds its whole canonical document in payload_z (raw DEFLATE with the
-- preset dictionary payload_dict) and, in payload, the document's projection: the
-- fields at the paths the generated columns, the views and the readers read, as
-- canonical JSON. The chain covers the document; verifiers inflate it, hash it and
-- check that payload is exactly its projection. Rows without payload_z are as before.
CREATE TABLE _agentwatch_dictionaries (
    id            INTEGER PRIMARY KEY,
    data          BLOB    NOT NULL CHECK (length(data) BETWEEN 1 AND 32768),
    created_at_ns INTEGER NOT NULL
) STRICT;
CREATE TRIGGER _agentwatch_dictionaries_no_update BEFORE UPDATE ON _agentwatch_dictionaries
BEGIN SELECT RAISE(ABORT, 'dictionaries are append-only: UPDATE refused'); END;
CREATE TRIGGER _agentwatch_dictionaries_no_delete BEFORE DELETE ON _agentwatch_dictionaries
BEGIN SELECT RAISE(ABORT, 'dictionaries are append-only: DELETE refused'); END;

ALTER TABLE records ADD COLUMN payload_dict INTEGER;
ALTER TABLE records ADD COLUMN payload_z BLOB CHECK (
    (payload_z IS NULL AND payload_dict IS NULL)
    OR (kind = 'event' AND typeof(payload_z) = 'blob' AND typeof(payload_dict) = 'integer')
);

-- The erasure guard of 0004, for packed rows too: erasing one clears payload_z and
-- payload_dict with it, and the digest it is checked against is the document's.
-- agentwatch_inflate is registered on agentwatch's own connections, as agentwatch_sha256 is.
DROP TRIGGER records_append_only_update;
CREATE TRIGGER records_append_only_update BEFORE UPDATE ON records
WHEN NOT (
    OLD.kind IN ('event', 'gap')
    AND typeof(OLD.payload) = 'text' AND OLD.payload IS NOT 'null'
    AND typeof(NEW.payload) = 'text' AND NEW.payload IS 'null'
    AND NEW.payload_dict IS NULL AND NEW.payload_z IS NULL
    AND NEW.seq IS OLD.seq AND NEW.record_id IS OLD.record_id AND NEW.kind IS OLD.kind
    AND NEW.recorded_at_ns IS OLD.recorded_at_ns
    AND NEW.prev_hash IS OLD.prev_hash AND NEW.hash IS OLD.hash
    AND EXISTS (
        SELECT 1 FROM records AS erasure
        WHERE erasure.seq = (SELECT max(seq) FROM records)
          AND erasure.erased_seq IS OLD.seq
          AND json_extract(erasure.payload, '$.payload_sha256')
              IS 'sha256:' || lower(hex(agentwatch_sha256(
                  CASE WHEN OLD.payload_z IS NULL THEN CAST(OLD.payload AS BLOB)
                       ELSE agentwatch_inflate(OLD.payload, OLD.payload_z,
                            (SELECT data FROM _agentwatch_dictionaries WHERE id = OLD.payload_dict))
                  END)))
    )
)
BEGIN SELECT RAISE(ABORT, 'records are append-only: UPDATE refused (agentwatch erase is the only change allowed)'); END;
