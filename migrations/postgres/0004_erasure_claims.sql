-- 0004_erasure_claims: erased rows, verified identity, claims an administrator
-- can move or retire, findings attributed and rate-limited per login, and a
-- head only for the caller's own stores (docs/fleet.md). Never edit after
-- release; add a new file.

-- Erasure (docs/erasure.md) and retention (docs/retention.md). An erased or
-- retained row keeps its hash; the server keeps the digest its hash covers
-- (payload_sha256: the one its erasure row names, or the one the source kept
-- for a retained row) and the seq of the row that accounts for it (erasure_seq:
-- the erasure row, or the retention row whose range holds it), and holds `null`
-- as its payload.
ALTER TABLE agentwatch.records
    ADD COLUMN payload_sha256 bytea CHECK (payload_sha256 IS NULL OR octet_length(payload_sha256) = 32),
    ADD COLUMN erasure_seq bigint;
CREATE INDEX records_erased ON agentwatch.records (store_id, erasure_seq) WHERE payload_sha256 IS NOT NULL;

-- A claim may be retired (it takes no more rows); who claimed it is the verified identity.
ALTER TABLE agentwatch.source_claims ADD COLUMN retired_at timestamptz;

ALTER TABLE agentwatch.findings DROP CONSTRAINT findings_kind_check;
ALTER TABLE agentwatch.findings ADD CONSTRAINT findings_kind_check CHECK (kind IN (
    'fork', 'bad_link', 'bad_hash', 'rewrite', 'rollback', 'malformed', 'duplicate_record_id',
    'denied', 'checkpoint_inconsistent',
    'bad_erasure', 'empty_claim', 'host_taken', 'retired', 'rate_limited'));
CREATE INDEX findings_by_role ON agentwatch.findings (role, found_at);

-- Every change of a claim, made by an administrator (move_claim, retire_claim): append-only.
CREATE TABLE agentwatch.claim_changes (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    changed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    store_id   text NOT NULL REFERENCES agentwatch.source_claims,
    action     text NOT NULL CHECK (action IN ('move', 'retire')),
    old_role   name NOT NULL,
    old_host   text NOT NULL,
    new_role   name NOT NULL,
    new_host   text NOT NULL,
    by_role    name NOT NULL,   -- the administrator's login
    reason     text NOT NULL CHECK (reason <> '')
);
CREATE TRIGGER claim_changes_append_only BEFORE UPDATE OR DELETE ON agentwatch.claim_changes
    FOR EACH ROW EXECUTE FUNCTION agentwatch._refuse_change();
CREATE TRIGGER claim_changes_no_truncate BEFORE TRUNCATE ON agentwatch.claim_changes
    FOR EACH STATEMENT EXECUTE FUNCTION agentwatch._refuse_change();

-- Chain v1 with the payload's digest given (an erased row's kept digest).
CREATE FUNCTION agentwatch.chain_v1_hash_digest(
    store_id bytea, seq bigint, recorded_at_ns bigint, kind text, record_id text, prev_hash bytea, digest bytea
) RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT sha256(
        '\x6167656e7477617463682f636861696e2f763100'::bytea
        || store_id || int8send(seq) || int8send(recorded_at_ns)
        || int4send(octet_length(convert_to(kind, 'UTF8'))) || convert_to(kind, 'UTF8')
        || int4send(octet_length(convert_to(record_id, 'UTF8'))) || convert_to(record_id, 'UTF8')
        || prev_hash || digest)
$$;

-- What an erasure row names, as the local verifiers read it (store/erasure.py,
-- parse_erasure): an attestation whose payload is an object with type
-- "erasure", an integer erased_seq in 1..seq-1 and payload_sha256 in display
-- form. NULLs for any other row.
CREATE FUNCTION agentwatch._erasure_named(p_seq bigint, p_kind text, p_doc jsonb,
                                          OUT erased_seq bigint, OUT digest bytea)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT n.erased_seq, n.digest FROM (SELECT
        CASE WHEN p_kind = 'attestation' AND jsonb_typeof(p_doc) = 'object' AND p_doc ->> 'type' = 'erasure'
                  AND jsonb_typeof(p_doc -> 'erased_seq') = 'number' AND (p_doc ->> 'erased_seq') ~ '^[0-9]{1,18}$'
             THEN (p_doc ->> 'erased_seq')::bigint END AS erased_seq,
        CASE WHEN jsonb_typeof(p_doc) = 'object' AND jsonb_typeof(p_doc -> 'payload_sha256') = 'string'
                  AND (p_doc ->> 'payload_sha256') ~ '^sha256:[0-9a-f]{64}$'
             THEN decode(substr(p_doc ->> 'payload_sha256', 8), 'hex') END AS digest) AS n
    WHERE n.erased_seq BETWEEN 1 AND p_seq - 1 AND n.digest IS NOT NULL
$$;

-- The seq range a retention row covers (store/retention.py, retained_ranges):
-- an attestation whose payload is an object with type "retention" and integer
-- first_seq <= last_seq < its own seq. NULLs for any other row.
CREATE FUNCTION agentwatch._retention_range(p_seq bigint, p_kind text, p_doc jsonb,
                                            OUT first_seq bigint, OUT last_seq bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT n.first_seq, n.last_seq FROM (SELECT
        CASE WHEN p_kind = 'attestation' AND jsonb_typeof(p_doc) = 'object' AND p_doc ->> 'type' = 'retention'
                  AND jsonb_typeof(p_doc -> 'first_seq') = 'number' AND (p_doc ->> 'first_seq') ~ '^[0-9]{1,18}$'
             THEN (p_doc ->> 'first_seq')::bigint END AS first_seq,
        CASE WHEN p_kind = 'attestation' AND jsonb_typeof(p_doc) = 'object' AND p_doc ->> 'type' = 'retention'
                  AND jsonb_typeof(p_doc -> 'last_seq') = 'number' AND (p_doc ->> 'last_seq') ~ '^[0-9]{1,18}$'
             THEN (p_doc ->> 'last_seq')::bigint END AS last_seq) AS n
    WHERE n.first_seq <= n.last_seq AND n.last_seq < p_seq
$$;

-- Whether the row at `p_seq` accounts for the removed payload of row `p_target`
-- with digest `p_digest`: an erasure row naming both, or a retention row whose
-- range holds the row (the digest the source kept is authenticated by the row's hash).
CREATE FUNCTION agentwatch._accounts_for(p_seq bigint, p_kind text, p_doc jsonb, p_target bigint, p_digest bytea)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce((SELECT n.erased_seq = p_target AND n.digest = p_digest
                     FROM agentwatch._erasure_named(p_seq, p_kind, p_doc) n), false)
        OR coalesce((SELECT p_target BETWEEN r.first_seq AND r.last_seq
                     FROM agentwatch._retention_range(p_seq, p_kind, p_doc) r), false)
$$;

-- Rows stay as they arrived, with one exception: the erasure of a row, which
-- the server makes itself when the erasure row naming it arrives. Its payload
-- becomes `null`, its parsed form NULL, and it keeps the digest of the payload
-- it had; every other column is unchanged, and an erasure row of the same
-- source must name this seq and that digest. Anything else is refused, for the
-- owner too. A row is erased once.
CREATE FUNCTION agentwatch._records_change() RETURNS trigger LANGUAGE plpgsql AS $$
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
    END IF;
    RAISE EXCEPTION 'agentwatch.records: % refused: the central copy is append-only (only an erasure its erasure row names may clear a payload)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;
DROP TRIGGER records_append_only ON agentwatch.records;
CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON agentwatch.records
    FOR EACH ROW EXECUTE FUNCTION agentwatch._records_change();

-- A claim changes only as the latest claim_changes row of its store says.
CREATE FUNCTION agentwatch._claims_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ch agentwatch.claim_changes;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.store_id = OLD.store_id AND NEW.chain_version = OLD.chain_version
       AND NEW.first_seen = OLD.first_seen AND OLD.retired_at IS NULL THEN
        SELECT * INTO ch FROM agentwatch.claim_changes WHERE store_id = OLD.store_id ORDER BY id DESC LIMIT 1;
        IF ch.old_role = OLD.claimed_by AND ch.old_host = OLD.host AND ch.new_role = NEW.claimed_by
           AND ch.new_host = NEW.host
           AND ((ch.action = 'retire' AND NEW.retired_at IS NOT NULL)
                OR (ch.action = 'move' AND NEW.retired_at IS NULL)) THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'agentwatch.source_claims: % refused: the central copy is append-only (a claim changes only through move_claim or retire_claim)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;
DROP TRIGGER source_claims_append_only ON agentwatch.source_claims;
CREATE TRIGGER source_claims_append_only BEFORE UPDATE OR DELETE ON agentwatch.source_claims
    FOR EACH ROW EXECUTE FUNCTION agentwatch._claims_change();

-- An administrator's (agentwatch_owner's) recovery: give a claim to another
-- login and host (a host renamed, a store_id squatted by another login), or
-- retire it (the store is gone: it takes no more rows). Recorded in
-- claim_changes; findings before the change stay, and the source's verdict
-- counts the ones after it.
CREATE FUNCTION agentwatch.move_claim(p_store text, p_role name, p_host text, p_reason text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    src agentwatch.source_claims;
    id bigint;
BEGIN
    SELECT * INTO src FROM agentwatch.source_claims WHERE store_id = p_store FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no claim for store %', p_store USING ERRCODE = 'no_data_found';
    END IF;
    IF src.retired_at IS NOT NULL THEN
        RAISE EXCEPTION 'store % was retired at %', p_store, src.retired_at USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_role IS NULL OR NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = p_role) THEN
        RAISE EXCEPTION 'no login %', p_role USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_host IS NULL OR p_host = '' OR length(p_host) > 256 OR coalesce(p_reason, '') = '' THEN
        RAISE EXCEPTION 'a host (1-256 characters) and a reason are required' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO agentwatch.claim_changes (store_id, action, old_role, old_host, new_role, new_host, by_role, reason)
    VALUES (p_store, 'move', src.claimed_by, src.host, p_role, p_host, session_user, p_reason) RETURNING claim_changes.id INTO id;
    UPDATE agentwatch.source_claims SET claimed_by = p_role, host = p_host WHERE store_id = p_store;
    RETURN id;
END $$;

CREATE FUNCTION agentwatch.retire_claim(p_store text, p_reason text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    src agentwatch.source_claims;
    id bigint;
BEGIN
    SELECT * INTO src FROM agentwatch.source_claims WHERE store_id = p_store FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no claim for store %', p_store USING ERRCODE = 'no_data_found';
    END IF;
    IF src.retired_at IS NOT NULL THEN
        RAISE EXCEPTION 'store % was retired at %', p_store, src.retired_at USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF coalesce(p_reason, '') = '' THEN
        RAISE EXCEPTION 'a reason is required' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO agentwatch.claim_changes (store_id, action, old_role, old_host, new_role, new_host, by_role, reason)
    VALUES (p_store, 'retire', src.claimed_by, src.host, src.claimed_by, src.host, session_user, p_reason)
    RETURNING claim_changes.id INTO id;
    UPDATE agentwatch.source_claims SET retired_at = clock_timestamp() WHERE store_id = p_store;
    RETURN id;
END $$;

-- Findings are attributed to the login whose action they are (session_user)
-- and limited per login: beyond 20 in a minute, that login's further findings
-- of the minute are one `rate_limited` finding. So no login can bury the
-- findings table, and what it does is still on record.
CREATE OR REPLACE FUNCTION agentwatch._finding(
    p_kind text, p_store text, p_seq bigint, p_host text, p_detail text, p_shipped bytea, p_stored bytea
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    recent int;
    window_start bigint;
BEGIN
    SELECT count(*), min(f.id) INTO recent, window_start FROM agentwatch.findings f
    WHERE f.role = session_user AND f.found_at > clock_timestamp() - interval '1 minute' AND f.kind <> 'rate_limited';
    IF recent >= 20 THEN
        -- One per window, the window named by its first finding.
        INSERT INTO agentwatch.findings (kind, store_id, seq, role, host, detail, fingerprint)
        VALUES ('rate_limited', p_store, p_seq, session_user, p_host,
                format('more than 20 findings by login %s within a minute; the rest are not recorded one by one'
                       ' (first left out: %s)', session_user, p_kind),
                concat_ws('|', 'rate_limited', session_user, window_start))
        ON CONFLICT (fingerprint) DO NOTHING;
        RETURN;
    END IF;
    INSERT INTO agentwatch.findings (kind, store_id, seq, role, host, detail, shipped_hash, stored_hash, fingerprint)
    VALUES (p_kind, p_store, p_seq, session_user, p_host, p_detail, p_shipped, p_stored,
            concat_ws('|', p_kind, p_store, p_seq, session_user, p_host, encode(p_shipped, 'hex')))
    ON CONFLICT (fingerprint) DO NOTHING;
END $$;

-- The server's head for a source, for the server's own functions.
CREATE FUNCTION agentwatch._head(p_store text, OUT seq bigint, OUT hash bytea)
LANGUAGE sql STABLE AS $$
    SELECT coalesce(max(r.seq), 0),
           coalesce((SELECT r2.hash FROM agentwatch.records r2
                     WHERE r2.store_id = p_store ORDER BY r2.seq DESC LIMIT 1), decode(repeat('00', 32), 'hex'))
    FROM agentwatch.records r WHERE r.store_id = p_store
$$;

-- Where a shipper resumes: only for a store the calling login claims. Any
-- other store reads as empty (seq 0, genesis), so a login learns nothing of
-- another's rows; shipping to it is then refused as a fork.
CREATE OR REPLACE FUNCTION agentwatch.head(p_store text, OUT seq bigint, OUT hash bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT h.seq, h.hash FROM agentwatch._head(p_store) h
    WHERE EXISTS (SELECT 1 FROM agentwatch.source_claims c WHERE c.store_id = p_store AND c.claimed_by = session_user)
    UNION ALL
    SELECT 0, decode(repeat('00', 32), 'hex')
    WHERE NOT EXISTS (SELECT 1 FROM agentwatch.source_claims c
                      WHERE c.store_id = p_store AND c.claimed_by = session_user)
$$;

-- The one way rows get in (agentwatch.ingest, extended): an erased row is
-- shipped with its payload `null`, the digest its erasure row names
-- (p_payload_sha256) and that erasure row's seq (p_erasure_seq); NULL for any
-- other row. Its hash is checked with that digest, and the erasure row, when it
-- arrives, must name the same digest. An erasure row naming a row the server
-- holds unerased makes the server erase it: its payload bytes leave the row.
-- `erased` counts the rows this call erased.
--
-- A new claim: refused as `host_taken` when another login already claims a
-- store from that host; a claim made with no rows is an `empty_claim` finding.
-- A retired claim takes no rows (`retired`).
CREATE FUNCTION agentwatch.ingest_rows(
    p_store text, p_host text, p_local_head_seq bigint, p_local_head_ns bigint,
    p_seq bigint[], p_record_id text[], p_kind text[], p_recorded_at_ns bigint[],
    p_payload bytea[], p_prev_hash bytea[], p_hash bytea[], p_payload_sha256 bytea[], p_erasure_seq bigint[],
    OUT accepted int, OUT duplicates int, OUT head_seq bigint, OUT refused text, OUT refused_seq bigint,
    OUT detail text, OUT erased int)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    sid bytea;
    src agentwatch.source_claims;
    head_hash bytea;
    n int := coalesce(cardinality(p_seq), 0);
    bad record;
    e record;
    t record;
    last_ok int;
    created boolean := false;
    other agentwatch.source_claims;
BEGIN
    accepted := 0; duplicates := 0; erased := 0;
    IF p_store IS NULL OR p_store !~ '^[0-9a-f]{32}$' THEN
        RAISE EXCEPTION 'store_id must be 32 lowercase hex digits' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_host IS NULL OR p_host = '' OR length(p_host) > 256 THEN
        RAISE EXCEPTION 'host must be 1-256 characters' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_local_head_seq IS NULL OR p_local_head_ns IS NULL THEN
        RAISE EXCEPTION 'the source''s own head (seq and time) is required' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF n > 10000 THEN
        RAISE EXCEPTION 'at most 10000 rows per call' USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF coalesce(cardinality(p_record_id), 0) <> n OR coalesce(cardinality(p_kind), 0) <> n
       OR coalesce(cardinality(p_recorded_at_ns), 0) <> n OR coalesce(cardinality(p_payload), 0) <> n
       OR coalesce(cardinality(p_prev_hash), 0) <> n OR coalesce(cardinality(p_hash), 0) <> n
       OR coalesce(cardinality(p_payload_sha256), n) <> n OR coalesce(cardinality(p_erasure_seq), n) <> n THEN
        RAISE EXCEPTION 'the row arrays differ in length' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    sid := decode(p_store, 'hex');

    -- The claim: made by the first login and host that ship the store, unless
    -- another login holds a claim from that host already.
    SELECT * INTO src FROM agentwatch.source_claims WHERE store_id = p_store;
    IF NOT FOUND THEN
        SELECT * INTO other FROM agentwatch.source_claims c
        WHERE c.host = p_host AND c.claimed_by <> session_user AND c.retired_at IS NULL
        ORDER BY c.first_seen LIMIT 1;
        IF FOUND THEN
            detail := format('host %s is claimed by login %s (store %s); login %s may not ship as that host',
                             p_host, other.claimed_by, other.store_id, session_user);
            PERFORM agentwatch._finding('host_taken', p_store, NULL, p_host, detail, NULL, NULL);
            refused := 'host_taken'; refused_seq := p_seq[1]; head_seq := 0;
            RETURN;
        END IF;
        INSERT INTO agentwatch.source_claims (store_id, chain_version, claimed_by, host)
        VALUES (p_store, 1, session_user, p_host) ON CONFLICT (store_id) DO NOTHING;
        created := FOUND;
    END IF;
    -- Locked, so one ingest per source runs at a time and the head cannot move under it.
    SELECT * INTO src FROM agentwatch.source_claims WHERE store_id = p_store FOR UPDATE;
    IF src.claimed_by <> session_user OR src.host <> p_host THEN
        PERFORM agentwatch._finding('fork', p_store, NULL, p_host,
            format('store %s is claimed by login %s on host %s; login %s on host %s shipped it too',
                   p_store, src.claimed_by, src.host, session_user, p_host), NULL, NULL);
        head_seq := CASE WHEN src.claimed_by = session_user THEN (SELECT h.seq FROM agentwatch._head(p_store) h) END;
        refused := 'fork'; refused_seq := p_seq[1]; detail := 'this store_id belongs to another source';
        RETURN;
    END IF;
    IF src.retired_at IS NOT NULL THEN
        detail := format('store %s was retired at %s', p_store, src.retired_at);
        PERFORM agentwatch._finding('retired', p_store, NULL, p_host, detail, NULL, NULL);
        SELECT h.seq INTO head_seq FROM agentwatch._head(p_store) h;
        refused := 'retired'; refused_seq := p_seq[1];
        RETURN;
    END IF;
    IF created AND n = 0 THEN
        PERFORM agentwatch._finding('empty_claim', p_store, NULL, p_host,
            format('login %s claimed store %s from host %s without shipping a row', session_user, p_store, p_host),
            NULL, NULL);
    END IF;

    SELECT h.seq, h.hash INTO head_seq, head_hash FROM agentwatch._head(p_store) h;

    INSERT INTO agentwatch.source_reports AS r VALUES (p_store, p_local_head_seq, p_local_head_ns, now())
    ON CONFLICT (store_id) DO UPDATE SET local_head_seq = excluded.local_head_seq,
        local_head_recorded_ns = excluded.local_head_recorded_ns, reported_at = excluded.reported_at;

    IF p_local_head_seq < head_seq THEN
        detail := format('the source reports its head at seq %s; the server holds it up to seq %s',
                         p_local_head_seq, head_seq);
        PERFORM agentwatch._finding('rollback', p_store, p_local_head_seq, p_host, detail, NULL, head_hash);
        refused := 'rollback'; refused_seq := p_local_head_seq;
        RETURN;
    END IF;

    IF n = 0 THEN
        RETURN;
    END IF;

    -- Every row's verdict at once; the first bad one ends the batch. A row's
    -- digest is its payload's SHA-256, or for an erased row the digest shipped with it.
    SELECT v.* INTO bad FROM (
        SELECT b.ord, b.seq, b.hash, s.hash AS stored_hash,
            CASE
                WHEN b.seq IS NULL OR b.record_id IS NULL OR b.kind IS NULL OR b.recorded_at_ns IS NULL
                     OR b.payload IS NULL OR b.prev_hash IS NULL OR b.hash IS NULL
                     OR b.kind NOT IN ('event', 'attestation', 'gap') OR b.recorded_at_ns < 0 OR b.seq < 1
                     OR b.record_id = '' OR octet_length(b.record_id) > 128
                     OR octet_length(b.prev_hash) <> 32 OR octet_length(b.hash) <> 32
                     OR (b.digest IS NOT NULL AND (octet_length(b.digest) <> 32 OR b.payload <> '\x6e756c6c'::bytea
                         OR b.kind NOT IN ('event', 'gap') OR b.erasure_seq IS NULL OR b.erasure_seq <= b.seq))
                     THEN 'malformed'
                WHEN s.seq IS NOT NULL AND s.hash = b.hash AND s.record_id = b.record_id AND s.kind = b.kind
                     AND s.recorded_at_ns = b.recorded_at_ns AND s.prev_hash = b.prev_hash
                     AND ((s.payload = b.payload AND b.digest IS NULL AND s.payload_sha256 IS NULL)
                          OR (b.digest IS NOT NULL AND b.digest = coalesce(s.payload_sha256, sha256(s.payload)))
                          OR (b.digest IS NULL AND s.payload_sha256 = sha256(b.payload)))
                     THEN NULL  -- already stored, the same row (erased on either side, or both)
                WHEN s.seq IS NOT NULL THEN 'rewrite'
                WHEN b.seq <> coalesce(lag(b.seq) OVER w, head_seq) + 1
                     OR (b.seq = head_seq + 1 AND b.prev_hash <> head_hash)
                     OR (b.seq > head_seq + 1 AND b.prev_hash IS DISTINCT FROM lag(b.hash) OVER w) THEN 'bad_link'
                WHEN agentwatch.chain_v1_hash_digest(sid, b.seq, b.recorded_at_ns, b.kind, b.record_id, b.prev_hash,
                                                     coalesce(b.digest, sha256(b.payload))) <> b.hash THEN 'bad_hash'
            END AS verdict
        FROM unnest(p_seq, p_record_id, p_kind, p_recorded_at_ns, p_payload, p_prev_hash, p_hash, p_payload_sha256,
                    p_erasure_seq)
             WITH ORDINALITY AS b(seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, digest, erasure_seq, ord)
        -- Only a row at a seq the server holds is looked up (a one-time filter per row: no
        -- index probe for the new ones).
        LEFT JOIN LATERAL (SELECT r.* FROM agentwatch.records r
                           WHERE b.seq <= head_seq AND r.store_id = p_store AND r.seq = b.seq) s ON true
        WINDOW w AS (ORDER BY b.ord)
    ) v WHERE v.verdict IS NOT NULL ORDER BY v.ord LIMIT 1;

    last_ok := CASE WHEN bad.ord IS NULL THEN n ELSE bad.ord - 1 END;

    -- Erasure rows among the new ones: each must name a row of this source
    -- (stored, or earlier in the batch) that is an event or gap whose digest
    -- it names; a row shipped erased must name this erasure row. The first one
    -- that does not is refused as `bad_erasure`, and ends the batch there.
    -- (Materialized first: only these few rows are parsed, one subtransaction each.)
    FOR e IN WITH candidates AS MATERIALIZED (
                 SELECT b.ord, b.seq, b.kind, b.payload
                 FROM unnest(p_seq, p_kind, p_payload) WITH ORDINALITY AS b(seq, kind, payload, ord)
                 WHERE b.ord <= last_ok AND b.seq > head_seq AND b.kind = 'attestation'
                   AND position('\x226572617375726522'::bytea IN b.payload) > 0)  -- "erasure"
             SELECT c.ord, c.seq, x.erased_seq, x.digest FROM candidates c,
                  LATERAL agentwatch._erasure_named(c.seq, c.kind, agentwatch._doc_or_null(c.payload)) x
             ORDER BY c.ord LOOP
        SELECT k.kind, k.digest, k.erasure_seq INTO t FROM (
            SELECT r.kind, coalesce(r.payload_sha256, sha256(r.payload)) AS digest, r.erasure_seq
            FROM agentwatch.records r WHERE r.store_id = p_store AND r.seq = e.erased_seq
            UNION ALL
            SELECT b.kind, coalesce(b.digest, sha256(b.payload)), CASE WHEN b.digest IS NOT NULL THEN b.erasure_seq END
            FROM unnest(p_seq, p_kind, p_payload, p_payload_sha256, p_erasure_seq) WITH ORDINALITY
                 AS b(seq, kind, payload, digest, erasure_seq, ord)
            WHERE b.seq = e.erased_seq AND b.seq > head_seq AND b.ord < e.ord
        ) k LIMIT 1;
        CONTINUE WHEN t.erasure_seq IS NOT NULL AND t.erasure_seq <> e.seq;  -- a later erasure row: the first counts
        IF t.kind IS NULL OR t.kind NOT IN ('event', 'gap') OR t.digest <> e.digest THEN
            IF bad.ord IS NULL OR e.ord < bad.ord THEN
                bad := NULL;
                SELECT e.ord AS ord, e.seq AS seq, p_hash[e.ord] AS hash, NULL::bytea AS stored_hash,
                       'bad_erasure'::text AS verdict INTO bad;
                last_ok := e.ord - 1;
            END IF;
            EXIT;
        END IF;
    END LOOP;
    -- The row at the erasure seq a row was shipped erased (or retained) with, in this
    -- batch or an earlier one, must account for it: an erasure row naming that row and
    -- its digest, or a retention row whose range holds it.
    IF last_ok > 0 THEN
        SELECT x.ord, x.seq, x.hash, NULL::bytea AS stored_hash, 'bad_erasure'::text AS verdict INTO t
        FROM (
            SELECT b.seq AS erased_seq, b.digest, b.erasure_seq
            FROM unnest(p_seq, p_payload_sha256, p_erasure_seq) AS b(seq, digest, erasure_seq)
            WHERE b.digest IS NOT NULL AND b.seq > head_seq
            UNION ALL
            SELECT r.seq, r.payload_sha256, r.erasure_seq FROM agentwatch.records r
            WHERE r.store_id = p_store AND r.payload_sha256 IS NOT NULL AND r.erasure_seq > head_seq
        ) er
        JOIN unnest(p_seq, p_kind, p_payload, p_hash) WITH ORDINALITY AS x(seq, kind, payload, hash, ord)
             ON x.seq = er.erasure_seq
        WHERE x.ord <= last_ok
          AND NOT agentwatch._accounts_for(x.seq, x.kind, agentwatch._doc_or_null(x.payload), er.erased_seq, er.digest)
        ORDER BY x.ord LIMIT 1;
        IF t.ord IS NOT NULL AND (bad.ord IS NULL OR t.ord < bad.ord) THEN
            bad := t;
            last_ok := t.ord - 1;
        END IF;
    END IF;

    SELECT count(*) INTO duplicates FROM unnest(p_seq) WITH ORDINALITY AS b(seq, ord)
    WHERE b.ord <= last_ok AND b.seq <= head_seq;

    BEGIN
        INSERT INTO agentwatch.records (store_id, seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, doc,
                                        payload_sha256, erasure_seq)
        SELECT p_store, b.seq, b.record_id, b.kind, b.recorded_at_ns, b.payload, b.prev_hash, b.hash,
               CASE WHEN b.digest IS NULL THEN agentwatch._doc(b.payload) END, b.digest,
               CASE WHEN b.digest IS NOT NULL THEN b.erasure_seq END
        FROM unnest(p_seq, p_record_id, p_kind, p_recorded_at_ns, p_payload, p_prev_hash, p_hash, p_payload_sha256,
                    p_erasure_seq)
             WITH ORDINALITY AS b(seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, digest, erasure_seq, ord)
        WHERE b.ord <= last_ok AND b.seq > head_seq
        ORDER BY b.ord;
        GET DIAGNOSTICS accepted = ROW_COUNT;
    EXCEPTION WHEN unique_violation OR data_exception OR program_limit_exceeded OR character_not_in_repertoire THEN
        -- A record_id stored before, or a payload that is not JSON: row by row, the
        -- rows before a repeated record_id stored and that one refused.
        accepted := 0;
        FOR i IN 1 .. last_ok LOOP
            CONTINUE WHEN p_seq[i] <= head_seq;
            IF EXISTS (SELECT 1 FROM agentwatch.records WHERE store_id = p_store AND record_id = p_record_id[i]) THEN
                detail := format('record_id %s is already stored at another seq', p_record_id[i]);
                PERFORM agentwatch._finding('duplicate_record_id', p_store, p_seq[i], p_host, detail, p_hash[i], NULL);
                refused := 'duplicate_record_id'; refused_seq := p_seq[i];
                last_ok := i - 1;
                bad := NULL;
                EXIT;
            END IF;
            INSERT INTO agentwatch.records (store_id, seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash,
                                            doc, payload_sha256, erasure_seq)
            VALUES (p_store, p_seq[i], p_record_id[i], p_kind[i], p_recorded_at_ns[i], p_payload[i], p_prev_hash[i],
                    p_hash[i], CASE WHEN p_payload_sha256[i] IS NULL THEN agentwatch._doc_or_null(p_payload[i]) END,
                    p_payload_sha256[i], CASE WHEN p_payload_sha256[i] IS NOT NULL THEN p_erasure_seq[i] END);
            accepted := accepted + 1;
        END LOOP;
    END;
    head_seq := head_seq + accepted;

    -- The erasures this call brought: a row held unerased loses its payload bytes now.
    FOR e IN SELECT r.seq, x.erased_seq, x.digest FROM agentwatch.records r,
                 LATERAL agentwatch._erasure_named(r.seq, r.kind, r.doc) x
             WHERE r.store_id = p_store AND r.seq > head_seq - accepted AND r.seq <= head_seq
               AND r.kind = 'attestation' AND r.doc ->> 'type' = 'erasure'
             ORDER BY r.seq LOOP
        UPDATE agentwatch.records SET payload = '\x6e756c6c'::bytea, doc = NULL, payload_sha256 = e.digest,
                                      erasure_seq = e.seq
        WHERE store_id = p_store AND seq = e.erased_seq AND payload_sha256 IS NULL AND sha256(payload) = e.digest;
        IF FOUND THEN
            erased := erased + 1;
        END IF;
    END LOOP;

    IF refused IS NULL AND bad.ord IS NOT NULL THEN
        refused := bad.verdict; refused_seq := bad.seq;
        detail := CASE bad.verdict
            WHEN 'malformed' THEN format('row %s of the batch has a missing or invalid field', bad.ord)
            WHEN 'rewrite' THEN format('seq %s is stored with hash %s; the source now ships %s',
                                       bad.seq, encode(bad.stored_hash, 'hex'), encode(bad.hash, 'hex'))
            WHEN 'bad_link' THEN format('seq %s does not extend the stored head (seq %s)', bad.seq, head_seq)
            WHEN 'bad_hash' THEN format('seq %s: the shipped hash does not recompute from the row', bad.seq)
            WHEN 'bad_erasure' THEN format('seq %s: the erasure and the row it names do not agree'
                                           ' (kind, digest or erasure seq)', bad.seq)
        END;
        PERFORM agentwatch._finding(bad.verdict, p_store, bad.seq, p_host, detail, bad.hash, bad.stored_hash);
    END IF;
END $$;

-- The earlier entry point, for shippers from before erasure: no row shipped erased.
CREATE OR REPLACE FUNCTION agentwatch.ingest(
    p_store text, p_host text, p_local_head_seq bigint, p_local_head_ns bigint,
    p_seq bigint[], p_record_id text[], p_kind text[], p_recorded_at_ns bigint[],
    p_payload bytea[], p_prev_hash bytea[], p_hash bytea[],
    OUT accepted int, OUT duplicates int, OUT head_seq bigint, OUT refused text, OUT refused_seq bigint, OUT detail text)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT i.accepted, i.duplicates, i.head_seq, i.refused, i.refused_seq, i.detail
    FROM agentwatch.ingest_rows(p_store, p_host, p_local_head_seq, p_local_head_ns, p_seq, p_record_id, p_kind,
                                p_recorded_at_ns, p_payload, p_prev_hash, p_hash, NULL, NULL) i
$$;

-- verify_chain, erasure-aware: an erased or retained row hashes with its kept
-- digest, holds `null`, and once the row accounting for it is on the server
-- (its erasure row, or its retention row) that row does (else `bad_erasure`).
CREATE OR REPLACE FUNCTION agentwatch.verify_chain(
    p_store text, p_from bigint DEFAULT 1, p_prev bytea DEFAULT NULL,
    OUT rows_checked bigint, OUT head_seq bigint, OUT head_hash bytea, OUT bad_seq bigint, OUT problem text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    sid bytea := decode(p_store, 'hex');
    r record;
    expect_seq bigint := p_from;
    prev bytea := coalesce(p_prev, decode(repeat('00', 32), 'hex'));
    top bigint := (SELECT max(seq) FROM agentwatch.records WHERE store_id = p_store);
BEGIN
    rows_checked := 0; head_seq := p_from - 1; head_hash := prev;
    FOR r IN SELECT seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, payload_sha256, erasure_seq,
                    agentwatch.chain_v1_hash_digest(sid, seq, recorded_at_ns, kind, record_id, prev_hash,
                                                    coalesce(payload_sha256, sha256(payload))) AS computed
             FROM agentwatch.records WHERE store_id = p_store AND seq >= p_from ORDER BY seq LOOP
        IF r.seq <> expect_seq THEN
            bad_seq := expect_seq; problem := 'missing'; RETURN;
        ELSIF r.prev_hash <> prev THEN
            bad_seq := r.seq; problem := 'bad_link'; RETURN;
        ELSIF r.computed <> r.hash THEN
            bad_seq := r.seq; problem := 'bad_hash'; RETURN;
        ELSIF r.payload_sha256 IS NOT NULL THEN
            IF r.payload <> '\x6e756c6c'::bytea OR r.erasure_seq IS NULL OR r.erasure_seq <= r.seq THEN
                bad_seq := r.seq; problem := 'bad_erasure'; RETURN;
            END IF;
            IF r.erasure_seq <= top AND NOT coalesce(
                    (SELECT agentwatch._accounts_for(e.seq, e.kind, e.doc, r.seq, r.payload_sha256)
                     FROM agentwatch.records e WHERE e.store_id = p_store AND e.seq = r.erasure_seq), false) THEN
                bad_seq := r.seq; problem := 'bad_erasure'; RETURN;
            END IF;
        END IF;
        rows_checked := rows_checked + 1;
        head_seq := r.seq; head_hash := r.hash; prev := r.hash; expect_seq := r.seq + 1;
    END LOOP;
END $$;

-- Refused direct writes, attributed: to the store the statement names when the
-- login claims it, else to every store the login claims (each its owner's
-- action), else to the login alone.
CREATE OR REPLACE FUNCTION agentwatch.collect_denials(OUT files_read int, OUT denials int)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    f record;
    pos bigint;
    chunk text;
    complete text;
    added int;
BEGIN
    files_read := 0; denials := 0;
    FOR f IN SELECT name, size FROM pg_ls_logdir() WHERE name LIKE '%.json' ORDER BY modification, name LOOP
        pos := coalesce((SELECT position FROM agentwatch._log_positions WHERE file = f.name), 0);
        CONTINUE WHEN f.size <= pos;
        chunk := pg_read_file(current_setting('log_directory') || '/' || f.name, pos, f.size - pos);
        complete := substring(chunk FROM '^(.*\n)');
        CONTINUE WHEN complete IS NULL;
        WITH lines AS (
            SELECT line::jsonb AS j FROM regexp_split_to_table(complete, E'\n') AS line
            WHERE line LIKE '%"state_code":"42501"%'
        ), denied AS (
            SELECT j FROM lines
            WHERE j ->> 'dbname' = current_database()
              AND j ->> 'user' IN (SELECT r.rolname FROM pg_roles r
                                   WHERE NOT r.rolsuper AND pg_has_role(r.oid, 'agentwatch_ship', 'MEMBER'))
        ), attributed AS (
            SELECT d.j, s.store_id FROM denied d
            LEFT JOIN LATERAL (
                SELECT c.store_id FROM agentwatch.source_claims c
                WHERE c.claimed_by = d.j ->> 'user'
                  AND (position(c.store_id IN coalesce(d.j ->> 'statement', '')) > 0
                       OR NOT EXISTS (SELECT 1 FROM agentwatch.source_claims c2
                                      WHERE c2.claimed_by = d.j ->> 'user'
                                        AND position(c2.store_id IN coalesce(d.j ->> 'statement', '')) > 0))
            ) s ON true
        ), ranked AS (
            -- rn counts on from the login's findings of the last minute, as _finding does.
            SELECT a.*, row_number() OVER (PARTITION BY a.j ->> 'user' ORDER BY a.j ->> 'timestamp', a.store_id)
                        + (SELECT count(*) FROM agentwatch.findings r
                           WHERE r.role = a.j ->> 'user' AND r.found_at > clock_timestamp() - interval '1 minute'
                             AND r.kind <> 'rate_limited') AS rn
            FROM attributed a
        ), found AS (
            INSERT INTO agentwatch.findings (kind, store_id, role, detail, fingerprint)
            SELECT 'denied', store_id, j ->> 'user',
                   left(format('%s: %s', j ->> 'message', coalesce(j ->> 'statement', '')), 1000),
                   concat_ws('|', 'denied', j ->> 'session_id', j ->> 'line_num', store_id)
            FROM ranked WHERE rn <= 20
            ON CONFLICT (fingerprint) DO NOTHING
            RETURNING 1
        ), limited AS (
            -- As for every finding: at most 20 a login a minute, the rest of this read one `rate_limited`.
            INSERT INTO agentwatch.findings (kind, role, detail, fingerprint)
            SELECT 'rate_limited', j ->> 'user',
                   format('%s more denied writes by login %s in %s, not recorded one by one', count(*),
                          j ->> 'user', f.name),
                   concat_ws('|', 'rate_limited', 'denied', j ->> 'user', f.name, pos)
            FROM ranked WHERE rn > 20 GROUP BY j ->> 'user'
            ON CONFLICT (fingerprint) DO NOTHING
            RETURNING 1
        ) SELECT (SELECT count(*) FROM found) + (SELECT count(*) FROM limited) INTO added;
        denials := denials + added;
        INSERT INTO agentwatch._log_positions VALUES (f.name, pos + octet_length(complete))
        ON CONFLICT (file) DO UPDATE SET position = excluded.position;
        files_read := files_read + 1;
    END LOOP;
END $$;

-- The forensic views with the verified identity: `login` (the login that
-- claimed the source) beside `host` (the label that login gave).
DROP VIEW agentwatch.events;
CREATE VIEW agentwatch.events AS
SELECT
    r.store_id,
    c.host,
    c.claimed_by AS login,
    r.seq,
    r.record_id,
    r.recorded_at_ns,
    to_timestamp(r.recorded_at_ns / 1e9) AS recorded_at,
    r.doc ->> 'harness' AS harness,
    r.doc ->> 'session_id' AS session_id,
    r.doc -> 'event' ->> 'name' AS event_name,
    r.doc -> 'event' ->> 'kind' AS event_kind,
    r.doc -> 'tool' ->> 'name' AS tool_name,
    r.doc -> 'tool' ->> 'category' AS tool_category,
    r.doc ->> 'turn_id' AS turn_id,
    r.doc ->> 'cwd' AS cwd,
    r.doc ->> 'model' AS model,
    CASE WHEN jsonb_typeof(r.doc -> 'client' -> 'pid') = 'number' THEN (r.doc -> 'client' ->> 'pid')::numeric END
        AS client_pid,
    CASE WHEN jsonb_typeof(r.doc -> 'client' -> 'ts_observed_ns') = 'number'
         THEN (r.doc -> 'client' ->> 'ts_observed_ns')::numeric END AS observed_at_ns,
    r.doc AS payload
FROM agentwatch.records r
JOIN agentwatch.source_claims c USING (store_id)
WHERE r.kind = 'event';

-- Sources: lag_s is NULL while the server holds none of the source's rows
-- (not the age of the epoch); last_report_at is when the source last called
-- ingest; retired_at when an administrator retired it.
DROP VIEW agentwatch.sources;
CREATE VIEW agentwatch.sources AS
SELECT
    c.store_id,
    c.host,
    c.claimed_by AS login,
    c.first_seen,
    coalesce(h.seq, 0) AS head_seq,
    'sha256:' || encode(coalesce(h.hash, decode(repeat('00', 32), 'hex')), 'hex') AS head_hash,
    to_timestamp(h.recorded_at_ns / 1e9) AS head_recorded_at,
    h.received_at AS last_received_at,
    rep.local_head_seq,
    greatest(coalesce(rep.local_head_seq, 0) - coalesce(h.seq, 0), 0) AS lag_rows,
    CASE WHEN rep.local_head_seq IS NULL OR h.seq IS NULL THEN NULL
         WHEN rep.local_head_seq <= h.seq THEN 0
         ELSE greatest(rep.local_head_recorded_ns - h.recorded_at_ns, 0) / 1e9 END AS lag_s,
    rep.reported_at AS last_report_at,
    (SELECT count(*) FROM agentwatch.findings f WHERE f.store_id = c.store_id) AS findings,
    (SELECT f.kind FROM agentwatch.findings f WHERE f.store_id = c.store_id ORDER BY f.id DESC LIMIT 1)
        AS last_finding,
    cp.tree_size AS checkpoint_size,
    cp.received_at AS checkpoint_at,
    c.retired_at
FROM agentwatch.source_claims c
LEFT JOIN LATERAL (SELECT r.seq, r.hash, r.recorded_at_ns, r.received_at FROM agentwatch.records r
                   WHERE r.store_id = c.store_id ORDER BY r.seq DESC LIMIT 1) h ON true
LEFT JOIN agentwatch.source_reports rep ON rep.store_id = c.store_id
LEFT JOIN LATERAL (SELECT k.tree_size, k.received_at FROM agentwatch.checkpoints k
                   WHERE k.store_id = c.store_id ORDER BY k.tree_size DESC LIMIT 1) cp ON true;

-- Events recorded under one store_id whose record_id an earlier-claimed source
-- holds: another machine's rows re-chained under a fresh store_id. One row per
-- copy: the later source, the earlier one, and how many record_ids they share.
CREATE VIEW agentwatch.cross_source_duplicates AS
SELECT later.store_id, earlier.store_id AS duplicates_of, count(*) AS record_ids
FROM agentwatch.records b
JOIN agentwatch.records a ON a.record_id = b.record_id AND a.store_id <> b.store_id AND a.kind = 'event'
JOIN agentwatch.source_claims later ON later.store_id = b.store_id
JOIN agentwatch.source_claims earlier ON earlier.store_id = a.store_id
WHERE b.kind = 'event'
  AND (earlier.first_seen, earlier.store_id) < (later.first_seen, later.store_id)
GROUP BY later.store_id, earlier.store_id;

-- tool_calls with duration_ms of the same JSON type as the local view's: a
-- harness's own duration as it wrote it (an integer stays an integer), a
-- computed one as a double (numeric carrying the double's shortest exact
-- digits, with a fractional digit even when it is whole). Otherwise the view
-- of 0002, unchanged.
CREATE FUNCTION agentwatch._ms(ms float8) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN ms = trunc(ms) THEN trunc(ms::numeric, 1) ELSE ms::text::numeric END
$$;

DROP VIEW agentwatch.tool_calls;
CREATE VIEW agentwatch.tool_calls AS
WITH tool_events AS (
    SELECT
        store_id,
        seq,
        doc ->> 'harness' AS harness,
        doc ->> 'session_id' AS session_id,
        CASE WHEN doc -> 'event' ->> 'kind' = 'tool_pre' THEN 1 ELSE 0 END AS is_pre,
        doc -> 'tool' ->> 'call_id' AS call_id,
        CASE WHEN doc -> 'tool' ->> 'call_id' IS NULL THEN coalesce(doc -> 'tool' ->> 'name', '') END AS key_tool,
        CASE WHEN doc -> 'tool' ->> 'call_id' IS NULL
             THEN coalesce(doc -> 'tool' ->> 'input_sha256', '') END AS key_input,
        CASE WHEN doc -> 'tool' ->> 'call_id' IS NULL
             THEN coalesce(CASE WHEN jsonb_typeof(doc -> 'client' -> 'ts_observed_ns') = 'number'
                                THEN (doc -> 'client' ->> 'ts_observed_ns')::numeric END,
                           recorded_at_ns) END AS t,
        CASE
            WHEN doc -> 'event' ->> 'kind' = 'tool_pre' THEN NULL
            ELSE CASE coalesce(doc -> 'tool' ->> 'outcome',
                               CASE WHEN doc -> 'event' ->> 'kind' = 'tool_error'
                                         OR CASE jsonb_typeof(doc -> 'tool' -> 'is_error')
                                                WHEN 'boolean' THEN (doc -> 'tool' ->> 'is_error')::boolean
                                                WHEN 'number' THEN (doc -> 'tool' ->> 'is_error')::numeric <> 0
                                            END
                                    THEN 'error' ELSE 'ok' END)
                     WHEN 'denied' THEN 4 WHEN 'interrupted' THEN 3 WHEN 'error' THEN 2 ELSE 1 END
        END AS end_rank
    FROM agentwatch.records
    WHERE kind = 'event' AND doc -> 'event' ->> 'kind' IN ('tool_pre', 'tool_post', 'tool_error')
),
by_id AS (
    SELECT
        store_id,
        harness,
        session_id,
        call_id,
        min(CASE WHEN is_pre = 1 THEN seq END) AS start_seq,
        min(CASE WHEN is_pre = 0 THEN seq END) AS end_seq,
        max(end_rank)                          AS end_rank
    FROM tool_events
    WHERE call_id IS NOT NULL
    GROUP BY store_id, harness, session_id, call_id
),
counted AS (
    SELECT *,
        sum(is_pre)     OVER running AS pres,
        sum(1 - is_pre) OVER running AS ends
    FROM tool_events
    WHERE call_id IS NULL
    WINDOW running AS (PARTITION BY store_id, harness, session_id, key_tool, key_input
                       ORDER BY t, seq ROWS UNBOUNDED PRECEDING)
),
numbered AS (
    SELECT store_id, seq, harness, session_id, is_pre, key_tool, key_input, end_rank,
        CASE
            WHEN is_pre = 1 THEN pres
            WHEN ends - pres - 1 >= open_max THEN -seq   -- an end with no open start
            ELSE ends - open_max
        END AS n
    FROM (
        SELECT *,
            greatest(0, coalesce(max(ends - pres) OVER (
                PARTITION BY store_id, harness, session_id, key_tool, key_input ORDER BY t, seq
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS open_max
        FROM counted
    ) AS with_open
),
paired AS (
    SELECT store_id, seq, harness, session_id, is_pre,
        max(is_pre) OVER pair                              AS has_start,
        min(CASE WHEN is_pre = 0 THEN seq END) OVER pair   AS end_seq,
        max(end_rank) OVER pair                            AS pair_rank
    FROM numbered
    WINDOW pair AS (PARTITION BY store_id, harness, session_id, key_tool, key_input, n)
),
by_fifo AS (
    SELECT
        store_id,
        harness,
        session_id,
        NULL::text AS call_id,
        CASE WHEN is_pre = 1 THEN seq END AS start_seq,
        end_seq,
        pair_rank AS end_rank
    FROM paired
    WHERE is_pre = 1 OR has_start = 0
),
calls AS (
    SELECT * FROM by_id
    UNION ALL
    SELECT * FROM by_fifo
),
joined AS (
    SELECT
        c.*,
        s.record_id AS start_record_id,
        e.record_id AS end_record_id,
        coalesce(s.doc -> 'tool' ->> 'name', e.doc -> 'tool' ->> 'name') AS tool_name,
        coalesce(s.doc -> 'tool' ->> 'category', e.doc -> 'tool' ->> 'category') AS tool_category,
        coalesce(s.doc -> 'tool' ->> 'mcp_server', e.doc -> 'tool' ->> 'mcp_server') AS mcp_server,
        coalesce(s.doc ->> 'turn_id', e.doc ->> 'turn_id') AS turn_id,
        coalesce(o.start_observed_ns, s.recorded_at_ns) AS start_ns,
        coalesce(o.end_observed_ns, e.recorded_at_ns) AS end_ns,
        o.start_observed_ns,
        o.end_observed_ns,
        s.recorded_at_ns AS start_recorded_ns,
        e.recorded_at_ns AS end_recorded_ns,
        CASE WHEN jsonb_typeof(e.doc -> 'tool' -> 'duration_ms') = 'number'
             THEN (e.doc -> 'tool' ->> 'duration_ms')::numeric
             WHEN jsonb_typeof(s.doc -> 'tool' -> 'duration_ms') = 'number'
             THEN (s.doc -> 'tool' ->> 'duration_ms')::numeric END AS harness_ms,
        c.end_seq IS NULL AND EXISTS (
            SELECT 1 FROM agentwatch.records AS i
            WHERE i.doc ->> 'session_id' = c.session_id AND i.store_id = c.store_id AND i.seq > c.start_seq
              AND i.kind = 'event'
              AND i.doc ->> 'harness' = c.harness
              AND i.doc -> 'interrupt' IN ('true'::jsonb, '1'::jsonb)
              AND (i.doc ->> 'turn_id' IS NULL
                   OR s.doc ->> 'turn_id' IS NULL
                   OR i.doc ->> 'turn_id' = s.doc ->> 'turn_id')
        ) AS interrupted_later,
        s.doc AS start_payload,
        e.doc AS end_payload
    FROM calls AS c
    LEFT JOIN agentwatch.records AS s ON s.store_id = c.store_id AND s.seq = c.start_seq
    LEFT JOIN agentwatch.records AS e ON e.store_id = c.store_id AND e.seq = c.end_seq
    CROSS JOIN LATERAL (SELECT
        CASE WHEN jsonb_typeof(s.doc -> 'client' -> 'ts_observed_ns') = 'number'
             THEN (s.doc -> 'client' ->> 'ts_observed_ns')::numeric END AS start_observed_ns,
        CASE WHEN jsonb_typeof(e.doc -> 'client' -> 'ts_observed_ns') = 'number'
             THEN (e.doc -> 'client' ->> 'ts_observed_ns')::numeric END AS end_observed_ns) AS o
)
SELECT
    store_id,
    coalesce(start_seq, end_seq) AS first_seq,
    harness,
    session_id,
    turn_id,
    tool_name,
    tool_category,
    mcp_server,
    call_id,
    CASE WHEN call_id IS NOT NULL THEN 'call_id' ELSE 'fifo' END AS paired_by,
    CASE WHEN start_seq IS NOT NULL THEN agentwatch._iso_ms(start_ns) END AS started_at,
    CASE WHEN end_seq IS NOT NULL THEN agentwatch._iso_ms(end_ns) END AS ended_at,
    CASE
        WHEN harness_ms IS NOT NULL THEN harness_ms
        WHEN start_seq IS NULL OR end_seq IS NULL THEN NULL
        WHEN start_observed_ns IS NOT NULL AND end_observed_ns IS NOT NULL THEN
            CASE WHEN end_observed_ns >= start_observed_ns
                 THEN agentwatch._ms((end_observed_ns - start_observed_ns)::float8 / 1000000.0::float8) END
        WHEN end_recorded_ns >= start_recorded_ns
            THEN agentwatch._ms((end_recorded_ns - start_recorded_ns)::float8 / 1000000.0::float8)
    END AS duration_ms,
    CASE
        WHEN harness_ms IS NOT NULL THEN 'harness'
        WHEN start_seq IS NULL OR end_seq IS NULL THEN NULL
        WHEN start_observed_ns IS NOT NULL AND end_observed_ns IS NOT NULL THEN
            CASE WHEN end_observed_ns >= start_observed_ns THEN 'observed' END
        WHEN end_recorded_ns >= start_recorded_ns THEN 'recorded'
    END AS duration_source,
    CASE
        WHEN end_seq IS NULL THEN CASE WHEN interrupted_later THEN 'interrupted' ELSE 'open' END
        WHEN end_rank = 4 THEN 'denied'
        WHEN end_rank = 3 THEN 'interrupted'
        WHEN end_rank = 2 THEN 'error'
        ELSE 'ok'
    END AS outcome,
    CASE WHEN end_seq IS NULL AND NOT interrupted_later
         THEN floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint - div(start_ns, 1000000)::bigint
    END AS age_ms,
    start_seq,
    end_seq,
    start_record_id,
    end_record_id,
    start_payload,
    end_payload
FROM joined;
GRANT SELECT ON agentwatch.tool_calls TO agentwatch_read;
REVOKE ALL ON FUNCTION agentwatch._ms(float8) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION agentwatch._ms(float8) TO agentwatch_read;

-- A schema's default privileges cannot take back the global EXECUTE for PUBLIC: revoke it here.
REVOKE ALL ON FUNCTION agentwatch.chain_v1_hash_digest(bytea, bigint, bigint, text, text, bytea, bytea),
                       agentwatch._erasure_named(bigint, text, jsonb), agentwatch._records_change(),
                       agentwatch._retention_range(bigint, text, jsonb),
                       agentwatch._accounts_for(bigint, text, jsonb, bigint, bytea),
                       agentwatch._claims_change(), agentwatch.move_claim(text, name, text, text),
                       agentwatch.retire_claim(text, text), agentwatch._head(text),
                       agentwatch.ingest_rows(text, text, bigint, bigint, bigint[], text[], text[], bigint[],
                                              bytea[], bytea[], bytea[], bytea[], bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION agentwatch.ingest_rows(text, text, bigint, bigint, bigint[], text[], text[], bigint[],
                                                 bytea[], bytea[], bytea[], bytea[], bigint[]) TO agentwatch_ship;
GRANT EXECUTE ON FUNCTION agentwatch.chain_v1_hash_digest(bytea, bigint, bigint, text, text, bytea, bytea),
                          agentwatch._erasure_named(bigint, text, jsonb), agentwatch._retention_range(bigint, text, jsonb),
                          agentwatch._accounts_for(bigint, text, jsonb, bigint, bytea) TO agentwatch_read;
GRANT SELECT ON agentwatch.events, agentwatch.sources, agentwatch.claim_changes, agentwatch.cross_source_duplicates
    TO agentwatch_read;
