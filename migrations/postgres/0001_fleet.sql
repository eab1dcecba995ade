-- 0001_fleet: the central copy of every source's chain, checked on arrival.
-- Runs as agentwatch_owner inside schema agentwatch (agentwatch fleet init
-- creates both, and the roles agentwatch_ship and agentwatch_read, first).
-- Never edit after release; add a new file.

-- One row per store that ever shipped here: who claimed it, from where.
CREATE TABLE agentwatch.source_claims (
    store_id      text PRIMARY KEY CHECK (store_id ~ '^[0-9a-f]{32}$'),
    chain_version int  NOT NULL CHECK (chain_version = 1),
    claimed_by    name NOT NULL,  -- the login role of the first ingest
    host          text NOT NULL,  -- the host label the first ingest sent
    first_seen    timestamptz NOT NULL DEFAULT now()
);

-- Rows as the sources recorded them: (store_id, seq) written once, never changed.
CREATE TABLE agentwatch.records (
    store_id       text   NOT NULL REFERENCES agentwatch.source_claims,
    seq            bigint NOT NULL CHECK (seq >= 1),
    record_id      text   NOT NULL,
    kind           text   NOT NULL CHECK (kind IN ('event', 'attestation', 'gap')),
    recorded_at_ns bigint NOT NULL CHECK (recorded_at_ns >= 0),
    payload        bytea  NOT NULL,  -- the stored bytes the chain hashes
    prev_hash      bytea  NOT NULL CHECK (octet_length(prev_hash) = 32),
    hash           bytea  NOT NULL CHECK (octet_length(hash) = 32),
    doc            jsonb,            -- the payload parsed, for queries (NULL when it is not JSON)
    received_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, seq),
    UNIQUE (store_id, record_id)
);
-- Payloads and their parsed form are mostly over the TOAST threshold (2 kB): compress them
-- with lz4 where the server has it, several times cheaper per row than the default pglz.
DO $$
BEGIN
    EXECUTE 'ALTER TABLE agentwatch.records ALTER COLUMN payload SET COMPRESSION lz4, '
            'ALTER COLUMN doc SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error OR invalid_parameter_value THEN
    NULL;  -- a server without lz4 (or before PostgreSQL 14) keeps its default
END $$;
CREATE INDEX records_by_time    ON agentwatch.records (recorded_at_ns);
CREATE INDEX records_by_session ON agentwatch.records ((doc ->> 'session_id'), store_id, seq);
CREATE INDEX records_by_tool    ON agentwatch.records ((doc -> 'tool' ->> 'name'), recorded_at_ns);

-- Refusals and other facts the server found: append-only, each fact once.
CREATE TABLE agentwatch.findings (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    found_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    kind         text NOT NULL CHECK (kind IN (
                     'fork', 'bad_link', 'bad_hash', 'rewrite', 'rollback', 'malformed', 'duplicate_record_id',
                     'denied', 'checkpoint_inconsistent')),
    store_id     text,
    seq          bigint,
    role         name NOT NULL,   -- the login role whose action this is
    host         text,
    detail       text NOT NULL,
    shipped_hash bytea,
    stored_hash  bytea,
    fingerprint  text NOT NULL UNIQUE  -- the same refusal, retried, is one finding
);
CREATE INDEX findings_by_source ON agentwatch.findings (store_id, id);

-- Signed checkpoints of a source's Merkle tree (docs/fleet.md): accepted only
-- when the server's own rows reproduce the root.
CREATE TABLE agentwatch.checkpoints (
    store_id    text   NOT NULL REFERENCES agentwatch.source_claims,
    tree_size   bigint NOT NULL CHECK (tree_size >= 1),
    root_hash   bytea  NOT NULL CHECK (octet_length(root_hash) = 32),
    origin      text   NOT NULL,
    note        text   NOT NULL,   -- the signed note as the source made it
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, tree_size)
);

-- What each source last said about its own head, for lag. Not evidence: it changes.
CREATE TABLE agentwatch.source_reports (
    store_id               text PRIMARY KEY REFERENCES agentwatch.source_claims,
    local_head_seq         bigint NOT NULL,
    local_head_recorded_ns bigint NOT NULL,
    reported_at            timestamptz NOT NULL
);

-- How far the server log was read for denied writes (collect_denials).
CREATE TABLE agentwatch._log_positions (
    file     text PRIMARY KEY,
    position bigint NOT NULL
);

-- The central copy never changes: even the owner cannot update or delete.
CREATE FUNCTION agentwatch._refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'agentwatch.%: % refused: the central copy is append-only', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON agentwatch.records
    FOR EACH ROW EXECUTE FUNCTION agentwatch._refuse_change();
CREATE TRIGGER records_no_truncate BEFORE TRUNCATE ON agentwatch.records
    FOR EACH STATEMENT EXECUTE FUNCTION agentwatch._refuse_change();
CREATE TRIGGER source_claims_append_only BEFORE UPDATE OR DELETE ON agentwatch.source_claims
    FOR EACH ROW EXECUTE FUNCTION agentwatch._refuse_change();
CREATE TRIGGER source_claims_no_truncate BEFORE TRUNCATE ON agentwatch.source_claims
    FOR EACH STATEMENT EXECUTE FUNCTION agentwatch._refuse_change();
CREATE TRIGGER findings_append_only BEFORE UPDATE OR DELETE ON agentwatch.findings
    FOR EACH ROW EXECUTE FUNCTION agentwatch._refuse_change();
CREATE TRIGGER findings_no_truncate BEFORE TRUNCATE ON agentwatch.findings
    FOR EACH STATEMENT EXECUTE FUNCTION agentwatch._refuse_change();
CREATE TRIGGER checkpoints_append_only BEFORE UPDATE OR DELETE ON agentwatch.checkpoints
    FOR EACH ROW EXECUTE FUNCTION agentwatch._refuse_change();
CREATE TRIGGER checkpoints_no_truncate BEFORE TRUNCATE ON agentwatch.checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION agentwatch._refuse_change();

-- Chain v1 (docs/chain.md), in SQL: SHA-256 over the framed row.
CREATE FUNCTION agentwatch.chain_v1_hash(
    store_id bytea, seq bigint, recorded_at_ns bigint, kind text, record_id text, prev_hash bytea, payload bytea
) RETURNS bytea LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT sha256(
        '\x6167656e7477617463682f636861696e2f763100'::bytea
        || store_id || int8send(seq) || int8send(recorded_at_ns)
        || int4send(octet_length(convert_to(kind, 'UTF8'))) || convert_to(kind, 'UTF8')
        || int4send(octet_length(convert_to(record_id, 'UTF8'))) || convert_to(record_id, 'UTF8')
        || prev_hash || sha256(payload))
$$;

-- The payload as jsonb for queries. jsonb cannot hold U+0000, so its escape
-- reads as U+FFFD here (the stored bytes keep it). NULL when not JSON.
CREATE FUNCTION agentwatch._doc(payload bytea) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN position('\x5c7530303030'::bytea IN payload) > 0
                THEN replace(convert_from(payload, 'UTF8'), '\u0000', '\ufffd')
                ELSE convert_from(payload, 'UTF8') END::jsonb
$$;

-- The same, NULL where the payload is not UTF-8 JSON (one subtransaction a call:
-- only for a batch the fast path refused).
CREATE FUNCTION agentwatch._doc_or_null(payload bytea) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN agentwatch._doc(payload);
EXCEPTION WHEN data_exception OR program_limit_exceeded OR character_not_in_repertoire THEN
    RETURN NULL;
END $$;

CREATE FUNCTION agentwatch._finding(
    p_kind text, p_store text, p_seq bigint, p_host text, p_detail text, p_shipped bytea, p_stored bytea
) RETURNS void LANGUAGE sql AS $$
    INSERT INTO agentwatch.findings (kind, store_id, seq, role, host, detail, shipped_hash, stored_hash, fingerprint)
    VALUES (p_kind, p_store, p_seq, session_user, p_host, p_detail, p_shipped, p_stored,
            concat_ws('|', p_kind, p_store, p_seq, session_user, p_host, encode(p_shipped, 'hex')))
    ON CONFLICT (fingerprint) DO NOTHING
$$;

-- The server's head for a source: where its shipper resumes.
CREATE FUNCTION agentwatch.head(p_store text, OUT seq bigint, OUT hash bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(max(r.seq), 0),
           coalesce((SELECT r2.hash FROM agentwatch.records r2
                     WHERE r2.store_id = p_store ORDER BY r2.seq DESC LIMIT 1), decode(repeat('00', 32), 'hex'))
    FROM agentwatch.records r WHERE r.store_id = p_store
$$;

-- The one way rows get in. Each row must extend the stored head (seq + 1,
-- prev_hash = head hash) and its hash must recompute from its fields; a row at
-- an existing seq must equal the stored one (then it is skipped: shipping is
-- idempotent). The first row that fails ends the batch: the rows before it
-- are stored, the refusal is recorded as a finding, and the call returns
-- normally so that the finding commits.
CREATE FUNCTION agentwatch.ingest(
    p_store text, p_host text, p_local_head_seq bigint, p_local_head_ns bigint,
    p_seq bigint[], p_record_id text[], p_kind text[], p_recorded_at_ns bigint[],
    p_payload bytea[], p_prev_hash bytea[], p_hash bytea[],
    OUT accepted int, OUT duplicates int, OUT head_seq bigint, OUT refused text, OUT refused_seq bigint, OUT detail text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    sid bytea;
    src agentwatch.source_claims;
    head_hash bytea;
    n int := coalesce(cardinality(p_seq), 0);
    bad record;
    first_new int;
    last_ok int;
BEGIN
    accepted := 0; duplicates := 0;
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
       OR coalesce(cardinality(p_prev_hash), 0) <> n OR coalesce(cardinality(p_hash), 0) <> n THEN
        RAISE EXCEPTION 'the row arrays differ in length' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    sid := decode(p_store, 'hex');

    -- The source: claimed by the first role and host that ship it; locked, so one
    -- ingest per source runs at a time and the head cannot move under it.
    INSERT INTO agentwatch.source_claims (store_id, chain_version, claimed_by, host)
    VALUES (p_store, 1, session_user, p_host) ON CONFLICT (store_id) DO NOTHING;
    SELECT * INTO src FROM agentwatch.source_claims WHERE store_id = p_store FOR UPDATE;
    IF src.claimed_by <> session_user OR src.host <> p_host THEN
        PERFORM agentwatch._finding('fork', p_store, NULL, p_host,
            format('store %s is claimed by role %s on host %s; role %s on host %s shipped it too',
                   p_store, src.claimed_by, src.host, session_user, p_host), NULL, NULL);
        SELECT h.seq INTO head_seq FROM agentwatch.head(p_store) h;
        refused := 'fork'; detail := 'this store_id belongs to another source';
        RETURN;
    END IF;

    SELECT h.seq, h.hash INTO head_seq, head_hash FROM agentwatch.head(p_store) h;

    INSERT INTO agentwatch.source_reports AS r VALUES (p_store, p_local_head_seq, p_local_head_ns, now())
    ON CONFLICT (store_id) DO UPDATE SET local_head_seq = excluded.local_head_seq,
        local_head_recorded_ns = excluded.local_head_recorded_ns, reported_at = excluded.reported_at;

    -- A source whose own head is below what it already shipped was rolled back
    -- (restored, replaced or truncated): nothing it sends now can be trusted to continue.
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

    -- Every row's verdict at once; the first bad one ends the batch.
    SELECT v.* INTO bad FROM (
        SELECT b.ord, b.seq, b.hash, s.hash AS stored_hash,
            CASE
                WHEN b.seq IS NULL OR b.record_id IS NULL OR b.kind IS NULL OR b.recorded_at_ns IS NULL
                     OR b.payload IS NULL OR b.prev_hash IS NULL OR b.hash IS NULL
                     OR b.kind NOT IN ('event', 'attestation', 'gap') OR b.recorded_at_ns < 0 OR b.seq < 1
                     OR b.record_id = '' OR octet_length(b.record_id) > 128
                     OR octet_length(b.prev_hash) <> 32 OR octet_length(b.hash) <> 32 THEN 'malformed'
                WHEN s.seq IS NOT NULL AND s.hash = b.hash AND s.record_id = b.record_id AND s.kind = b.kind
                     AND s.recorded_at_ns = b.recorded_at_ns AND s.prev_hash = b.prev_hash
                     AND s.payload = b.payload THEN NULL  -- already stored, identical
                WHEN s.seq IS NOT NULL THEN 'rewrite'
                WHEN b.seq <> coalesce(lag(b.seq) OVER w, head_seq) + 1
                     OR (b.seq = head_seq + 1 AND b.prev_hash <> head_hash)
                     OR (b.seq > head_seq + 1 AND b.prev_hash IS DISTINCT FROM lag(b.hash) OVER w) THEN 'bad_link'
                WHEN agentwatch.chain_v1_hash(sid, b.seq, b.recorded_at_ns, b.kind, b.record_id, b.prev_hash, b.payload)
                     <> b.hash THEN 'bad_hash'
            END AS verdict
        FROM unnest(p_seq, p_record_id, p_kind, p_recorded_at_ns, p_payload, p_prev_hash, p_hash)
             WITH ORDINALITY AS b(seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, ord)
        LEFT JOIN agentwatch.records s ON s.store_id = p_store AND s.seq = b.seq AND s.seq <= head_seq
        WINDOW w AS (ORDER BY b.ord)
    ) v WHERE v.verdict IS NOT NULL ORDER BY v.ord LIMIT 1;

    last_ok := CASE WHEN bad.ord IS NULL THEN n ELSE bad.ord - 1 END;
    SELECT count(*) INTO duplicates FROM unnest(p_seq) WITH ORDINALITY AS b(seq, ord)
    WHERE b.ord <= last_ok AND b.seq <= head_seq;

    BEGIN
        INSERT INTO agentwatch.records (store_id, seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, doc)
        SELECT p_store, b.seq, b.record_id, b.kind, b.recorded_at_ns, b.payload, b.prev_hash, b.hash,
               agentwatch._doc(b.payload)
        FROM unnest(p_seq, p_record_id, p_kind, p_recorded_at_ns, p_payload, p_prev_hash, p_hash)
             WITH ORDINALITY AS b(seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, ord)
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
                head_seq := head_seq + accepted;
                refused := 'duplicate_record_id'; refused_seq := p_seq[i];
                RETURN;
            END IF;
            INSERT INTO agentwatch.records (store_id, seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, doc)
            VALUES (p_store, p_seq[i], p_record_id[i], p_kind[i], p_recorded_at_ns[i], p_payload[i], p_prev_hash[i],
                    p_hash[i], agentwatch._doc_or_null(p_payload[i]));
            accepted := accepted + 1;
        END LOOP;
    END;
    head_seq := head_seq + accepted;

    IF bad.ord IS NOT NULL THEN
        refused := bad.verdict; refused_seq := bad.seq;
        detail := CASE bad.verdict
            WHEN 'malformed' THEN format('row %s of the batch has a missing or invalid field', bad.ord)
            WHEN 'rewrite' THEN format('seq %s is stored with hash %s; the source now ships %s',
                                       bad.seq, encode(bad.stored_hash, 'hex'), encode(bad.hash, 'hex'))
            WHEN 'bad_link' THEN format('seq %s does not extend the stored head (seq %s)', bad.seq, head_seq)
            WHEN 'bad_hash' THEN format('seq %s: the shipped hash does not recompute from the row', bad.seq)
        END;
        PERFORM agentwatch._finding(bad.verdict, p_store, bad.seq, p_host, detail, bad.hash, bad.stored_hash);
    END IF;
END $$;

-- Walks a source's stored rows in seq order, recomputing every hash and link
-- (docs/chain.md): the first row that fails, or NULL when the chain verifies.
CREATE FUNCTION agentwatch.verify_chain(
    p_store text, p_from bigint DEFAULT 1, p_prev bytea DEFAULT NULL,
    OUT rows_checked bigint, OUT head_seq bigint, OUT head_hash bytea, OUT bad_seq bigint, OUT problem text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    sid bytea := decode(p_store, 'hex');
    r record;
    expect_seq bigint := p_from;
    prev bytea := coalesce(p_prev, decode(repeat('00', 32), 'hex'));
BEGIN
    rows_checked := 0; head_seq := p_from - 1; head_hash := prev;
    FOR r IN SELECT seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash,
                    agentwatch.chain_v1_hash(sid, seq, recorded_at_ns, kind, record_id, prev_hash, payload) AS computed
             FROM agentwatch.records WHERE store_id = p_store AND seq >= p_from ORDER BY seq LOOP
        IF r.seq <> expect_seq THEN
            bad_seq := expect_seq; problem := 'missing'; RETURN;
        ELSIF r.prev_hash <> prev THEN
            bad_seq := r.seq; problem := 'bad_link'; RETURN;
        ELSIF r.computed <> r.hash THEN
            bad_seq := r.seq; problem := 'bad_hash'; RETURN;
        END IF;
        rows_checked := rows_checked + 1;
        head_seq := r.seq; head_hash := r.hash; prev := r.hash; expect_seq := r.seq + 1;
    END LOOP;
END $$;

-- RFC 6962 Merkle tree hash over leaf data, in order: leaves SHA-256(0x00 || data),
-- nodes SHA-256(0x01 || left || right), the empty tree SHA-256 of nothing.
-- Perfect subtrees are merged as they complete, then folded from the right.
CREATE FUNCTION agentwatch.merkle_root(p_leaves bytea[]) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    hashes bytea[] := '{}';
    sizes bigint[] := '{}';
    h bytea;
    s bigint;
    top int := 0;
    data bytea;
BEGIN
    IF coalesce(cardinality(p_leaves), 0) = 0 THEN
        RETURN sha256(''::bytea);
    END IF;
    FOREACH data IN ARRAY p_leaves LOOP
        h := sha256('\x00'::bytea || data);
        s := 1;
        WHILE top > 0 AND sizes[top] = s LOOP
            h := sha256('\x01'::bytea || hashes[top] || h);
            s := s * 2;
            top := top - 1;
        END LOOP;
        top := top + 1;
        hashes[top] := h;
        sizes[top] := s;
    END LOOP;
    h := hashes[top];
    FOR i IN REVERSE top - 1 .. 1 LOOP
        h := sha256('\x01'::bytea || hashes[i] || h);
    END LOOP;
    RETURN h;
END $$;

-- The root of a source's tree at `p_size`, from the row hashes the server holds
-- (the leaves are the chain v1 row hashes); NULL when it holds fewer rows.
CREATE FUNCTION agentwatch.source_root(p_store text, p_size bigint) RETURNS bytea
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN count(*) = p_size THEN agentwatch.merkle_root(array_agg(hash ORDER BY seq)) END
    FROM agentwatch.records WHERE store_id = p_store AND seq BETWEEN 1 AND p_size
$$;

-- A source's signed checkpoint (origin, tree size, root; the C2SP signed note
-- kept as sent). The server holds the rows, so it checks the root itself: a
-- root its rows do not reproduce, or a second root for a size it already
-- holds, is refused as `checkpoint_inconsistent`. Two checkpoints that both
-- match the same append-only rows are consistent with each other, so each
-- accepted one extends the one before it: the server is the source's witness.
-- A checkpoint beyond the rows shipped so far is refused without a finding
-- (`not_yet`): the rows come first. The signature is stored, not checked here.
CREATE FUNCTION agentwatch.ingest_checkpoint(
    p_store text, p_host text, p_origin text, p_tree_size bigint, p_root bytea, p_note text,
    OUT accepted boolean, OUT refused text, OUT detail text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    src agentwatch.source_claims;
    held bytea;
    computed bytea;
BEGIN
    accepted := false;
    SELECT * INTO src FROM agentwatch.source_claims WHERE store_id = p_store FOR UPDATE;
    IF NOT FOUND THEN
        refused := 'not_yet'; detail := 'no rows of this store have been shipped'; RETURN;
    END IF;
    IF src.claimed_by <> session_user OR src.host <> p_host THEN
        detail := format('store %s is claimed by role %s on host %s; role %s on host %s sent a checkpoint',
                         p_store, src.claimed_by, src.host, session_user, p_host);
        PERFORM agentwatch._finding('fork', p_store, p_tree_size, p_host, detail, p_root, NULL);
        refused := 'fork'; RETURN;
    END IF;
    IF p_tree_size IS NULL OR p_tree_size < 1 OR p_root IS NULL OR octet_length(p_root) <> 32
       OR p_origin IS DISTINCT FROM 'agentwatch.invalid/' || p_store OR p_note IS NULL THEN
        detail := format('checkpoint for size %s is malformed (origin %s)', p_tree_size, p_origin);
        PERFORM agentwatch._finding('malformed', p_store, p_tree_size, p_host, detail, p_root, NULL);
        refused := 'malformed'; RETURN;
    END IF;
    SELECT root_hash INTO held FROM agentwatch.checkpoints WHERE store_id = p_store AND tree_size = p_tree_size;
    IF held IS NOT NULL AND held = p_root THEN
        accepted := true; detail := 'already held'; RETURN;
    END IF;
    computed := agentwatch.source_root(p_store, p_tree_size);
    IF computed IS NULL THEN
        refused := 'not_yet'; detail := format('the server holds fewer than %s rows of this store', p_tree_size);
        RETURN;
    END IF;
    IF held IS NOT NULL OR computed <> p_root THEN
        detail := format('checkpoint at size %s has root %s; the rows the server holds give %s',
                         p_tree_size, encode(p_root, 'hex'), encode(computed, 'hex'));
        PERFORM agentwatch._finding('checkpoint_inconsistent', p_store, p_tree_size, p_host, detail, p_root, computed);
        refused := 'checkpoint_inconsistent'; RETURN;
    END IF;
    INSERT INTO agentwatch.checkpoints (store_id, tree_size, root_hash, origin, note)
    VALUES (p_store, p_tree_size, p_root, p_origin, p_note);
    accepted := true;
END $$;

-- Denied writes leave no row (the statement fails before any trigger), so the
-- server log is where they show: this reads the log's JSON lines (jsonlog) from
-- where it stopped and records each insufficient_privilege error of a shipping
-- role in this database as a `denied` finding.
CREATE FUNCTION agentwatch.collect_denials(OUT files_read int, OUT denials int)
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
        -- Only whole lines: the collector may be writing the last one.
        complete := substring(chunk FROM '^(.*\n)');
        CONTINUE WHEN complete IS NULL;
        WITH lines AS (
            SELECT line::jsonb AS j FROM regexp_split_to_table(complete, E'\n') AS line
            WHERE line LIKE '%"state_code":"42501"%'
        ), found AS (
            INSERT INTO agentwatch.findings (kind, store_id, role, detail, fingerprint)
            SELECT 'denied',
                   (SELECT min(c.store_id) FROM agentwatch.source_claims c WHERE c.claimed_by = j ->> 'user'
                    HAVING count(*) = 1),
                   j ->> 'user',
                   left(format('%s: %s', j ->> 'message', coalesce(j ->> 'statement', '')), 1000),
                   concat_ws('|', 'denied', j ->> 'session_id', j ->> 'line_num')
            FROM lines
            WHERE j ->> 'dbname' = current_database()
              AND j ->> 'user' IN (SELECT r.rolname FROM pg_roles r
                                   WHERE NOT r.rolsuper AND pg_has_role(r.oid, 'agentwatch_ship', 'MEMBER'))
            ON CONFLICT (fingerprint) DO NOTHING
            RETURNING 1
        ) SELECT count(*) INTO added FROM found;
        denials := denials + added;
        INSERT INTO agentwatch._log_positions VALUES (f.name, pos + octet_length(complete))
        ON CONFLICT (file) DO UPDATE SET position = excluded.position;
        files_read := files_read + 1;
    END LOOP;
END $$;

-- Forensic views: the local store's, with the source's store_id and host.
CREATE VIEW agentwatch.events AS
SELECT
    r.store_id,
    c.host,
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

-- One row per tool call: the pairing of the local store's tool_calls view
-- (migrations/0002_tool_calls.sql), within one source.
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
        CASE WHEN doc -> 'tool' ->> 'call_id' IS NULL THEN coalesce(doc -> 'tool' ->> 'input_sha256', '') END AS key_input
    FROM agentwatch.records
    WHERE kind = 'event' AND doc -> 'event' ->> 'kind' IN ('tool_pre', 'tool_post', 'tool_error')
),
counted AS (
    SELECT *,
        sum(is_pre)     OVER running AS pres,
        sum(1 - is_pre) OVER running AS ends
    FROM tool_events
    WINDOW running AS (PARTITION BY store_id, harness, session_id, call_id, key_tool, key_input
                       ORDER BY seq ROWS UNBOUNDED PRECEDING)
),
numbered AS (
    SELECT store_id, seq, harness, session_id, is_pre, call_id, key_tool, key_input,
        CASE
            WHEN is_pre = 1 THEN pres
            WHEN call_id IS NOT NULL THEN ends
            WHEN ends - pres - 1 >= open_max THEN -seq   -- an end with no open start
            ELSE ends - open_max
        END AS n
    FROM (
        SELECT *,
            greatest(0, coalesce(max(ends - pres) OVER (
                PARTITION BY store_id, harness, session_id, call_id, key_tool, key_input ORDER BY seq
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS open_max
        FROM counted
    ) AS with_open
),
paired AS (
    SELECT store_id, seq, harness, session_id, is_pre, call_id,
        max(is_pre) OVER pair AS has_start,
        max(CASE WHEN is_pre = 0 THEN seq END) OVER pair AS end_seq
    FROM numbered
    WINDOW pair AS (PARTITION BY store_id, harness, session_id, call_id, key_tool, key_input, n)
),
calls AS (
    SELECT store_id, harness, session_id, call_id,
        CASE WHEN is_pre = 1 THEN seq END AS start_seq,
        end_seq
    FROM paired
    WHERE is_pre = 1 OR has_start = 0
),
joined AS (
    SELECT
        c.*,
        coalesce(s.doc -> 'tool' ->> 'name', e.doc -> 'tool' ->> 'name') AS tool_name,
        coalesce(s.doc -> 'tool' ->> 'category', e.doc -> 'tool' ->> 'category') AS tool_category,
        coalesce(s.doc -> 'tool' ->> 'mcp_server', e.doc -> 'tool' ->> 'mcp_server') AS mcp_server,
        coalesce(s.doc ->> 'turn_id', e.doc ->> 'turn_id') AS turn_id,
        s.recorded_at_ns AS start_ns,
        e.recorded_at_ns AS end_ns,
        CASE WHEN jsonb_typeof(s.doc -> 'client' -> 'ts_observed_ns') = 'number'
             THEN (s.doc -> 'client' ->> 'ts_observed_ns')::numeric END AS start_observed_ns,
        CASE WHEN jsonb_typeof(e.doc -> 'client' -> 'ts_observed_ns') = 'number'
             THEN (e.doc -> 'client' ->> 'ts_observed_ns')::numeric END AS end_observed_ns,
        e.doc -> 'event' ->> 'kind' AS end_kind,
        coalesce(e.doc -> 'tool' -> 'is_error' = 'true'::jsonb, false) AS end_is_error,
        CASE WHEN jsonb_typeof(e.doc -> 'tool' -> 'duration_ms') = 'number'
             THEN (e.doc -> 'tool' ->> 'duration_ms')::numeric
             WHEN jsonb_typeof(s.doc -> 'tool' -> 'duration_ms') = 'number'
             THEN (s.doc -> 'tool' ->> 'duration_ms')::numeric END AS harness_ms,
        s.doc AS start_payload,
        e.doc AS end_payload
    FROM calls AS c
    LEFT JOIN agentwatch.records AS s ON s.store_id = c.store_id AND s.seq = c.start_seq
    LEFT JOIN agentwatch.records AS e ON e.store_id = c.store_id AND e.seq = c.end_seq
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
    start_seq,
    to_timestamp(start_ns / 1e9) AS start_at,
    end_seq,
    to_timestamp(end_ns / 1e9) AS end_at,
    end_kind,
    CASE
        WHEN harness_ms IS NOT NULL THEN harness_ms
        WHEN start_seq IS NULL OR end_seq IS NULL THEN NULL
        WHEN start_observed_ns IS NOT NULL AND end_observed_ns IS NOT NULL THEN
            CASE WHEN end_observed_ns >= start_observed_ns
                 THEN (end_observed_ns - start_observed_ns) / 1000000.0 END
        WHEN end_ns >= start_ns THEN (end_ns - start_ns) / 1000000.0
    END AS duration_ms,
    CASE
        WHEN harness_ms IS NOT NULL THEN 'harness'
        WHEN start_seq IS NULL OR end_seq IS NULL THEN NULL
        WHEN start_observed_ns IS NOT NULL AND end_observed_ns IS NOT NULL THEN
            CASE WHEN end_observed_ns >= start_observed_ns THEN 'observed' END
        WHEN end_ns >= start_ns THEN 'recorded'
    END AS duration_source,
    CASE
        WHEN start_seq IS NULL OR end_seq IS NULL THEN 'unpaired'
        WHEN end_kind = 'tool_error' OR end_is_error THEN 'error'
        ELSE 'ok'
    END AS outcome,
    start_payload,
    end_payload
FROM joined;

-- One row per source: its central head, how far behind its own head that is
-- (as the source last reported it), its findings and its last checkpoint.
CREATE VIEW agentwatch.sources AS
SELECT
    c.store_id,
    c.host,
    c.claimed_by,
    c.first_seen,
    coalesce(h.seq, 0) AS head_seq,
    'sha256:' || encode(coalesce(h.hash, decode(repeat('00', 32), 'hex')), 'hex') AS head_hash,
    to_timestamp(h.recorded_at_ns / 1e9) AS head_recorded_at,
    h.received_at AS last_received_at,
    rep.local_head_seq,
    greatest(coalesce(rep.local_head_seq, 0) - coalesce(h.seq, 0), 0) AS lag_rows,
    CASE WHEN rep.local_head_seq IS NULL THEN NULL
         WHEN rep.local_head_seq <= coalesce(h.seq, 0) THEN 0
         ELSE greatest(rep.local_head_recorded_ns - coalesce(h.recorded_at_ns, 0), 0) / 1e9 END AS lag_s,
    rep.reported_at,
    (SELECT count(*) FROM agentwatch.findings f WHERE f.store_id = c.store_id) AS findings,
    (SELECT f.kind FROM agentwatch.findings f WHERE f.store_id = c.store_id ORDER BY f.id DESC LIMIT 1)
        AS last_finding,
    cp.tree_size AS checkpoint_size,
    cp.received_at AS checkpoint_at
FROM agentwatch.source_claims c
LEFT JOIN LATERAL (SELECT r.seq, r.hash, r.recorded_at_ns, r.received_at FROM agentwatch.records r
                   WHERE r.store_id = c.store_id ORDER BY r.seq DESC LIMIT 1) h ON true
LEFT JOIN agentwatch.source_reports rep ON rep.store_id = c.store_id
LEFT JOIN LATERAL (SELECT k.tree_size, k.received_at FROM agentwatch.checkpoints k
                   WHERE k.store_id = c.store_id ORDER BY k.tree_size DESC LIMIT 1) cp ON true;

-- The chain as auditors read it.
CREATE VIEW agentwatch.chain AS
SELECT store_id, seq, record_id, kind, recorded_at_ns,
       'sha256:' || encode(prev_hash, 'hex') AS prev_hash,
       'sha256:' || encode(hash, 'hex') AS hash
FROM agentwatch.records;

-- Who may do what. Functions are executable by PUBLIC unless revoked, now and in later migrations.
REVOKE ALL ON ALL TABLES IN SCHEMA agentwatch FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA agentwatch FROM PUBLIC;
ALTER DEFAULT PRIVILEGES FOR ROLE agentwatch_owner IN SCHEMA agentwatch REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
GRANT USAGE ON SCHEMA agentwatch TO agentwatch_ship, agentwatch_read;
GRANT EXECUTE ON FUNCTION agentwatch.ingest(text, text, bigint, bigint, bigint[], text[], text[], bigint[],
                                            bytea[], bytea[], bytea[]) TO agentwatch_ship;
GRANT EXECUTE ON FUNCTION agentwatch.head(text) TO agentwatch_ship;
GRANT EXECUTE ON FUNCTION agentwatch.ingest_checkpoint(text, text, text, bigint, bytea, text) TO agentwatch_ship;
GRANT SELECT ON agentwatch._migrations, agentwatch.records, agentwatch.findings, agentwatch.checkpoints, agentwatch.source_claims,
                agentwatch.source_reports, agentwatch.events, agentwatch.tool_calls, agentwatch.sources,
                agentwatch.chain TO agentwatch_read;
GRANT EXECUTE ON FUNCTION agentwatch.chain_v1_hash(bytea, bigint, bigint, text, text, bytea, bytea),
                          agentwatch.verify_chain(text, bigint, bytea),
                          agentwatch.merkle_root(bytea[]), agentwatch.source_root(text, bigint),
                          agentwatch.collect_denials() TO agentwatch_read;
