-- 0007_retention: payloads removed by a retention policy, the digest kept in the row
-- (docs/retention.md). Never edit after release; add a new file.
--
-- A retention pass is one transaction: an `attestation` row of type `retention` appended at
-- the head, naming the seq range it covers, then each retained row's payload set to the JSON
-- text `null` with the SHA-256 of its document kept in `kept_sha256`. The row hash covers
-- that digest, so a kept digest other than the payload's does not reproduce the hash: the
-- chain authenticates it, and verifiers hash a retained row with it (docs/chain.md).

ALTER TABLE records ADD COLUMN kept_sha256 BLOB CHECK (
    kept_sha256 IS NULL OR (typeof(kept_sha256) = 'blob' AND length(kept_sha256) = 32 AND payload IS 'null')
);

-- The seq range a retention row covers, for the trigger and for verifiers. Nested CASEs, as
-- in 0004, so no JSON function reads a payload that is not valid JSON text.
ALTER TABLE records ADD COLUMN retained_first INTEGER GENERATED ALWAYS AS (
    CASE WHEN kind = 'attestation' AND typeof(payload) = 'text' THEN
        CASE WHEN json_valid(payload) THEN
            CASE WHEN json_extract(payload, '$.type') = 'retention' THEN json_extract(payload, '$.first_seq') END
        END
    END
) VIRTUAL;
ALTER TABLE records ADD COLUMN retained_last INTEGER GENERATED ALWAYS AS (
    CASE WHEN kind = 'attestation' AND typeof(payload) = 'text' THEN
        CASE WHEN json_valid(payload) THEN
            CASE WHEN json_extract(payload, '$.type') = 'retention' THEN json_extract(payload, '$.last_seq') END
        END
    END
) VIRTUAL;
CREATE INDEX records_by_retained_last ON records (retained_last) WHERE retained_last IS NOT NULL;

-- The hold a `hold` or `hold_release` row names, so retention finds the holds without reading
-- every attestation.
ALTER TABLE records ADD COLUMN hold_id TEXT GENERATED ALWAYS AS (
    CASE WHEN kind = 'attestation' AND typeof(payload) = 'text' THEN
        CASE WHEN json_valid(payload) THEN
            CASE WHEN json_extract(payload, '$.type') IN ('hold', 'hold_release') THEN json_extract(payload, '$.hold_id') END
        END
    END
) VIRTUAL;
CREATE INDEX records_by_hold_id ON records (hold_id) WHERE hold_id IS NOT NULL;

-- The append-only guard of 0006, now letting two changes through:
-- 1. an erasure, exactly as before (the kept digest stays unset);
-- 2. a retention: an event or gap row's payload becomes `null`, a packed row's stream and
--    dictionary go with it, `kept_sha256` becomes the SHA-256 of the document the row held,
--    every other column unchanged, while the head row is a retention row whose range holds
--    this seq. A row is retained once; attestations never are.
DROP TRIGGER records_append_only_update;
CREATE TRIGGER records_append_only_update BEFORE UPDATE ON records
WHEN NOT (
    OLD.kind IN ('event', 'gap')
    AND typeof(OLD.payload) = 'text' AND OLD.payload IS NOT 'null'
    AND typeof(NEW.payload) = 'text' AND NEW.payload IS 'null'
    AND NEW.payload_dict IS NULL AND NEW.payload_z IS NULL
    AND OLD.kept_sha256 IS NULL
    AND NEW.seq IS OLD.seq AND NEW.record_id IS OLD.record_id AND NEW.kind IS OLD.kind
    AND NEW.recorded_at_ns IS OLD.recorded_at_ns
    AND NEW.prev_hash IS OLD.prev_hash AND NEW.hash IS OLD.hash
    AND (
        (NEW.kept_sha256 IS NULL AND EXISTS (
            SELECT 1 FROM records AS erasure
            WHERE erasure.seq = (SELECT max(seq) FROM records)
              AND erasure.erased_seq IS OLD.seq
              AND json_extract(erasure.payload, '$.payload_sha256')
                  IS 'sha256:' || lower(hex(agentwatch_sha256(
                      CASE WHEN OLD.payload_z IS NULL THEN CAST(OLD.payload AS BLOB)
                           ELSE agentwatch_inflate(OLD.payload, OLD.payload_z,
                                (SELECT data FROM _agentwatch_dictionaries WHERE id = OLD.payload_dict))
                      END)))
        ))
        OR (NEW.kept_sha256 IS agentwatch_sha256(
                CASE WHEN OLD.payload_z IS NULL THEN CAST(OLD.payload AS BLOB)
                     ELSE agentwatch_inflate(OLD.payload, OLD.payload_z,
                          (SELECT data FROM _agentwatch_dictionaries WHERE id = OLD.payload_dict))
                END)
            AND EXISTS (
                SELECT 1 FROM records AS retention
                WHERE retention.seq = (SELECT max(seq) FROM records)
                  AND retention.retained_first <= OLD.seq AND OLD.seq <= retention.retained_last
            ))
    )
)
BEGIN SELECT RAISE(ABORT, 'records are append-only: UPDATE refused (erase and retention are the only changes allowed)'); END;
