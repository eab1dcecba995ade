-- 0004_erasure: the one change a stored row may undergo, erasing its payload
-- (docs/erasure.md). Never edit after release; add a new file.
--
-- An erasure is two writes in one transaction: an `attestation` row of type
-- `erasure` appended at the head, naming the erased seq and the SHA-256 of the
-- payload it removes, then the erased row's payload set to the JSON text
-- `null`. The chain keeps verifying: a row's hash covers SHA-256(payload),
-- and verifiers take that digest from the erasure row (docs/chain.md).

-- Where an erasure row names its target: verifiers look erased rows up by it.
-- Nested CASEs, so no JSON function ever reads a payload that is not valid JSON
-- text: a damaged row elsewhere must not make every lookup fail.
ALTER TABLE records ADD COLUMN erased_seq INTEGER GENERATED ALWAYS AS (
    CASE WHEN kind = 'attestation' AND typeof(payload) = 'text' THEN
        CASE WHEN json_valid(payload) THEN
            CASE WHEN json_extract(payload, '$.type') = 'erasure' THEN json_extract(payload, '$.erased_seq') END
        END
    END
) VIRTUAL;
CREATE INDEX records_by_erased_seq ON records (erased_seq) WHERE erased_seq IS NOT NULL;

-- The append-only guard, narrowed to exactly one change: an event or gap row's
-- payload becomes `null`, every other column unchanged, while the head row is
-- the erasure row naming this seq and this payload's digest. A row is erased
-- once; attestations (erasure rows among them) never are. agentwatch_sha256 is
-- registered on agentwatch's own connections; elsewhere an UPDATE of records
-- fails to prepare, which refuses it too.
DROP TRIGGER records_append_only_update;
CREATE TRIGGER records_append_only_update BEFORE UPDATE ON records
WHEN NOT (
    OLD.kind IN ('event', 'gap')
    AND typeof(OLD.payload) = 'text' AND OLD.payload IS NOT 'null'
    AND typeof(NEW.payload) = 'text' AND NEW.payload IS 'null'
    AND NEW.seq IS OLD.seq AND NEW.record_id IS OLD.record_id AND NEW.kind IS OLD.kind
    AND NEW.recorded_at_ns IS OLD.recorded_at_ns
    AND NEW.prev_hash IS OLD.prev_hash AND NEW.hash IS OLD.hash
    AND EXISTS (
        SELECT 1 FROM records AS erasure
        WHERE erasure.seq = (SELECT max(seq) FROM records)
          AND erasure.erased_seq IS OLD.seq
          AND json_extract(erasure.payload, '$.payload_sha256')
              IS 'sha256:' || lower(hex(agentwatch_sha256(CAST(OLD.payload AS BLOB))))
    )
)
BEGIN SELECT RAISE(ABORT, 'records are append-only: UPDATE refused (agentwatch erase is the only change allowed)'); END;
