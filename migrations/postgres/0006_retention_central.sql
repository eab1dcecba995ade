-- 0006_retention_central: a retention row removes, centrally too, the payloads its source
-- retained (docs/retention.md, "The fleet tier"). Never edit after release; add a new file.
--
-- A source's retention row lists the seqs it retained ("seqs": [first, last] runs; the rows
-- a legal hold kept are not among them). A row retained before it ships arrives `null` with
-- its kept digest (0004). A row that shipped first is cleared here when the retention row
-- arrives: its payload becomes `null`, its parsed form NULL, and it keeps the digest of the
-- payload it had, under that retention row's seq, as an erased row keeps its erasure's.

-- The seqs a retention row lists, from its parsed payload; nothing for anything else.
CREATE FUNCTION agentwatch._retained_seqs(p_doc jsonb) RETURNS SETOF bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT generate_series((r ->> 0)::bigint, (r ->> 1)::bigint)
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_doc) = 'object' AND p_doc ->> 'type' = 'retention'
                                        AND jsonb_typeof(p_doc -> 'seqs') = 'array'
                                   THEN p_doc -> 'seqs' ELSE '[]'::jsonb END) AS run(r)
    WHERE jsonb_typeof(r) = 'array' AND jsonb_array_length(r) = 2
      AND (r ->> 0) ~ '^[0-9]{1,18}$' AND (r ->> 1) ~ '^[0-9]{1,18}$'
      AND (r ->> 0)::bigint <= (r ->> 1)::bigint
$$;

-- The append-only guard of 0004, now also letting a retention row's listed rows be cleared.
CREATE OR REPLACE FUNCTION agentwatch._records_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    named record;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.payload_sha256 IS NULL AND NEW.payload = '\x6e756c6c'::bytea AND NEW.doc IS NULL
       AND NEW.payload_sha256 = sha256(OLD.payload) AND OLD.kind IN ('event', 'gap')
       AND NEW.erasure_seq > OLD.seq
       AND (NEW.store_id, NEW.seq, NEW.record_id, NEW.kind, NEW.recorded_at_ns, NEW.prev_hash, NEW.hash,
            NEW.received_at)
           IS NOT DISTINCT FROM (OLD.store_id, OLD.seq, OLD.record_id, OLD.kind, OLD.recorded_at_ns, OLD.prev_hash,
                                 OLD.hash, OLD.received_at) THEN
        SELECT n.* INTO named FROM agentwatch.records e,
            LATERAL agentwatch._erasure_named(e.seq, e.kind, e.doc) n
        WHERE e.store_id = OLD.store_id AND e.seq = NEW.erasure_seq;
        IF named.erased_seq = OLD.seq AND named.digest = NEW.payload_sha256 THEN
            RETURN NEW;
        END IF;
        IF EXISTS (SELECT 1 FROM agentwatch.records e
                   WHERE e.store_id = OLD.store_id AND e.seq = NEW.erasure_seq AND e.kind = 'attestation'
                     AND OLD.seq IN (SELECT agentwatch._retained_seqs(e.doc))) THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'agentwatch.records: % refused: the central copy is append-only (only an erasure or retention row naming it may clear a payload)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;

-- When a retention row arrives, the rows it lists that the server holds with their payload
-- are cleared in the same transaction.
CREATE FUNCTION agentwatch._apply_retention() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE agentwatch.records r
    SET payload = '\x6e756c6c'::bytea, doc = NULL, payload_sha256 = sha256(r.payload), erasure_seq = NEW.seq
    WHERE r.store_id = NEW.store_id AND r.seq < NEW.seq AND r.payload_sha256 IS NULL AND r.kind IN ('event', 'gap')
      AND r.seq IN (SELECT agentwatch._retained_seqs(NEW.doc));
    RETURN NULL;
END $$;
CREATE TRIGGER records_apply_retention AFTER INSERT ON agentwatch.records
    FOR EACH ROW WHEN (NEW.kind = 'attestation' AND NEW.doc ->> 'type' = 'retention')
    EXECUTE FUNCTION agentwatch._apply_retention();

-- A schema's default privileges cannot take back the global EXECUTE for PUBLIC: revoke it here.
REVOKE ALL ON FUNCTION agentwatch._retained_seqs(jsonb), agentwatch._apply_retention() FROM PUBLIC;
