-- 0005_tool_calls_gemini_order: the fleet's tool_calls view as the local store's
-- (migrations/0008_tool_calls_gemini_order.sql): 0004's view with the same last resort for
-- Gemini CLI (the halves the first pass left alone pair again on the tool name alone, in the
-- order the hooks started). Never edit after release; add a new file.

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
    SELECT store_id, seq, harness, session_id, is_pre, key_tool, key_input, end_rank, t,
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
    SELECT store_id, seq, harness, session_id, is_pre, key_tool, t, end_rank,
        max(is_pre) OVER pair                              AS has_start,
        min(CASE WHEN is_pre = 0 THEN seq END) OVER pair   AS end_seq,
        max(end_rank) OVER pair                            AS pair_rank
    FROM numbered
    WINDOW pair AS (PARTITION BY store_id, harness, session_id, key_tool, key_input, n)
),
marked AS (
    SELECT *,
        CASE WHEN harness = 'gemini-cli'
                  AND ((is_pre = 1 AND end_seq IS NULL) OR (is_pre = 0 AND has_start = 0))
             THEN 1 ELSE 0 END AS retry
    FROM paired
),
counted_again AS (
    SELECT *,
        sum(is_pre)     OVER running AS pres_again,
        sum(1 - is_pre) OVER running AS ends_again
    FROM marked
    WINDOW running AS (PARTITION BY store_id, harness, session_id, key_tool, retry ORDER BY t, seq
                       ROWS UNBOUNDED PRECEDING)
),
numbered_again AS (
    SELECT store_id, seq, harness, session_id, is_pre, key_tool, end_rank, retry, has_start, end_seq, pair_rank,
        CASE
            WHEN retry = 0 THEN NULL
            WHEN is_pre = 1 THEN pres_again
            WHEN ends_again - pres_again - 1 >= open_max THEN -seq
            ELSE ends_again - open_max
        END AS n
    FROM (
        SELECT *,
            greatest(0, coalesce(max(ends_again - pres_again) OVER (
                PARTITION BY store_id, harness, session_id, key_tool, retry ORDER BY t, seq
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS open_max
        FROM counted_again
    ) AS with_open
),
paired_again AS (
    SELECT store_id, seq, harness, session_id, is_pre, retry, has_start, end_seq, pair_rank,
        max(is_pre) OVER pair                              AS has_start_again,
        min(CASE WHEN is_pre = 0 THEN seq END) OVER pair   AS end_seq_again,
        max(end_rank) OVER pair                            AS pair_rank_again
    FROM numbered_again
    WINDOW pair AS (PARTITION BY store_id, harness, session_id, key_tool, retry, n)
),
by_fifo AS (
    SELECT
        store_id,
        harness,
        session_id,
        NULL::text AS call_id,
        CASE WHEN is_pre = 1 THEN seq END AS start_seq,
        CASE WHEN retry = 1 THEN end_seq_again ELSE end_seq END AS end_seq,
        CASE WHEN retry = 1 THEN pair_rank_again ELSE pair_rank END AS end_rank
    FROM paired_again
    WHERE CASE WHEN retry = 1 THEN is_pre = 1 OR has_start_again = 0 ELSE is_pre = 1 OR has_start = 0 END
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
