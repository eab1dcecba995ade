-- 0008_tool_calls_gemini_order: the tool_calls view of 0003, with one more step for
-- Gemini CLI. Its calls pair FIFO on the tool name plus the digest of the arguments, which
-- AfterTool carries too, so parallel calls keep their own outcomes (docs/record.md, "Tool
-- calls"). Only when a BeforeTool hook rewrote the arguments do the two digests differ:
-- then, as the last resort, the halves left alone pair again on the tool name alone, in the
-- order the hooks started. Everything else is 0003's, unchanged.
-- Never edit after release; add a new file.
DROP VIEW tool_calls;

CREATE VIEW tool_calls AS
WITH tool_events AS (
    SELECT
        seq,
        harness,
        session_id,
        event_kind = 'tool_pre' AS is_pre,
        json_extract(payload, '$.tool.call_id') AS call_id,
        CASE WHEN json_extract(payload, '$.tool.call_id') IS NULL
             THEN coalesce(tool_name, '') END AS key_tool,
        CASE WHEN json_extract(payload, '$.tool.call_id') IS NULL
             THEN coalesce(json_extract(payload, '$.tool.input_sha256'), '') END AS key_input,
        CASE WHEN json_extract(payload, '$.tool.call_id') IS NULL
             THEN coalesce(json_extract(payload, '$.client.ts_observed_ns'), recorded_at_ns) END AS t,
        CASE
            WHEN event_kind = 'tool_pre' THEN NULL
            ELSE CASE coalesce(json_extract(payload, '$.tool.outcome'),
                               CASE WHEN event_kind = 'tool_error' OR json_extract(payload, '$.tool.is_error')
                                    THEN 'error' ELSE 'ok' END)
                     WHEN 'denied' THEN 4 WHEN 'interrupted' THEN 3 WHEN 'error' THEN 2 ELSE 1 END
        END AS end_rank
    FROM records
    WHERE kind = 'event' AND event_kind IN ('tool_pre', 'tool_post', 'tool_error')
),
by_id AS (
    SELECT
        harness,
        session_id,
        call_id,
        min(CASE WHEN is_pre THEN seq END)     AS start_seq,
        min(CASE WHEN NOT is_pre THEN seq END) AS end_seq,
        max(end_rank)                          AS end_rank
    FROM tool_events
    WHERE call_id IS NOT NULL
    GROUP BY harness, session_id, call_id
),
counted AS (
    SELECT *,
        sum(is_pre)     OVER running AS pres,
        sum(1 - is_pre) OVER running AS ends
    FROM tool_events
    WHERE call_id IS NULL
    WINDOW running AS (PARTITION BY harness, session_id, key_tool, key_input
                       ORDER BY t, seq ROWS UNBOUNDED PRECEDING)
),
numbered AS (
    SELECT seq, harness, session_id, is_pre, key_tool, key_input, end_rank, t,
        CASE
            WHEN is_pre THEN pres
            WHEN ends - pres - 1 >= open_max THEN -seq   -- an end with no open start
            ELSE ends - open_max
        END AS n
    FROM (
        SELECT *,
            max(0, coalesce(max(ends - pres) OVER (
                PARTITION BY harness, session_id, key_tool, key_input ORDER BY t, seq
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS open_max
        FROM counted
    )
),
paired AS (
    SELECT seq, harness, session_id, is_pre, key_tool, t, end_rank,
        max(is_pre) OVER pair                            AS has_start,
        min(CASE WHEN NOT is_pre THEN seq END) OVER pair AS end_seq,
        max(end_rank) OVER pair                          AS pair_rank
    FROM numbered
    WINDOW pair AS (PARTITION BY harness, session_id, key_tool, key_input, n)
),
-- Gemini CLI only, the last resort: the halves the first pass left alone (`retry`) pair again
-- on the tool name alone, FIFO in the order the hooks started, the same way. A BeforeTool hook
-- may have rewritten the arguments AfterTool reports, so such a call's halves carry different
-- digests. One chain of windows, each partitioned by session_id, so a session filter still
-- reaches the records_by_session index (a CTE read twice would be materialized whole).
marked AS (
    SELECT *,
        CASE WHEN harness = 'gemini-cli'
                  AND ((is_pre AND end_seq IS NULL) OR (NOT is_pre AND NOT has_start))
             THEN 1 ELSE 0 END AS retry
    FROM paired
),
counted_again AS (
    SELECT *,
        sum(is_pre)     OVER running AS pres_again,
        sum(1 - is_pre) OVER running AS ends_again
    FROM marked
    WINDOW running AS (PARTITION BY harness, session_id, key_tool, retry ORDER BY t, seq
                       ROWS UNBOUNDED PRECEDING)
),
numbered_again AS (
    SELECT seq, harness, session_id, is_pre, key_tool, end_rank, retry, has_start, end_seq, pair_rank,
        CASE
            WHEN NOT retry THEN NULL
            WHEN is_pre THEN pres_again
            WHEN ends_again - pres_again - 1 >= open_max THEN -seq
            ELSE ends_again - open_max
        END AS n
    FROM (
        SELECT *,
            max(0, coalesce(max(ends_again - pres_again) OVER (
                PARTITION BY harness, session_id, key_tool, retry ORDER BY t, seq
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS open_max
        FROM counted_again
    )
),
paired_again AS (
    SELECT seq, harness, session_id, is_pre, retry, has_start, end_seq, pair_rank,
        max(is_pre) OVER pair                            AS has_start_again,
        min(CASE WHEN NOT is_pre THEN seq END) OVER pair AS end_seq_again,
        max(end_rank) OVER pair                          AS pair_rank_again
    FROM numbered_again
    WINDOW pair AS (PARTITION BY harness, session_id, key_tool, retry, n)
),
by_fifo AS (
    -- Windows, not GROUP BY: a session filter is pushed through windows partitioned by
    -- session_id, but stops at an aggregate.
    SELECT
        harness,
        session_id,
        NULL AS call_id,
        CASE WHEN is_pre THEN seq END AS start_seq,
        CASE WHEN retry THEN end_seq_again ELSE end_seq END AS end_seq,
        CASE WHEN retry THEN pair_rank_again ELSE pair_rank END AS end_rank
    FROM paired_again
    WHERE CASE WHEN retry THEN is_pre OR NOT has_start_again ELSE is_pre OR NOT has_start END
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
        coalesce(s.tool_name, e.tool_name) AS tool_name,
        coalesce(json_extract(s.payload, '$.tool.category'), json_extract(e.payload, '$.tool.category'))
            AS tool_category,
        coalesce(json_extract(s.payload, '$.tool.mcp_server'), json_extract(e.payload, '$.tool.mcp_server'))
            AS mcp_server,
        coalesce(json_extract(s.payload, '$.turn_id'), json_extract(e.payload, '$.turn_id')) AS turn_id,
        coalesce(json_extract(s.payload, '$.client.ts_observed_ns'), s.recorded_at_ns) AS start_ns,
        coalesce(json_extract(e.payload, '$.client.ts_observed_ns'), e.recorded_at_ns) AS end_ns,
        json_extract(s.payload, '$.client.ts_observed_ns') AS start_observed_ns,
        json_extract(e.payload, '$.client.ts_observed_ns') AS end_observed_ns,
        s.recorded_at_ns AS start_recorded_ns,
        e.recorded_at_ns AS end_recorded_ns,
        coalesce(json_extract(e.payload, '$.tool.duration_ms'), json_extract(s.payload, '$.tool.duration_ms'))
            AS harness_ms,
        CASE WHEN c.end_seq IS NULL AND EXISTS (
            SELECT 1 FROM records AS i
            WHERE i.session_id = c.session_id AND i.seq > c.start_seq AND i.kind = 'event'
              AND i.harness = c.harness
              AND json_extract(i.payload, '$.interrupt') = 1
              AND (json_extract(i.payload, '$.turn_id') IS NULL
                   OR json_extract(s.payload, '$.turn_id') IS NULL
                   OR json_extract(i.payload, '$.turn_id') = json_extract(s.payload, '$.turn_id'))
        ) THEN 1 ELSE 0 END AS interrupted_later
    FROM calls AS c
    LEFT JOIN records AS s ON s.seq = c.start_seq
    LEFT JOIN records AS e ON e.seq = c.end_seq
)
SELECT
    coalesce(start_seq, end_seq) AS first_seq,
    harness,
    session_id,
    turn_id,
    tool_name,
    tool_category,
    mcp_server,
    call_id,
    CASE WHEN call_id IS NOT NULL THEN 'call_id' ELSE 'fifo' END AS paired_by,
    CASE WHEN start_seq IS NOT NULL
         THEN strftime('%Y-%m-%dT%H:%M:%fZ', start_ns / 1000000000.0, 'unixepoch') END AS started_at,
    CASE WHEN end_seq IS NOT NULL
         THEN strftime('%Y-%m-%dT%H:%M:%fZ', end_ns / 1000000000.0, 'unixepoch') END AS ended_at,
    CASE
        WHEN harness_ms IS NOT NULL THEN harness_ms
        WHEN start_seq IS NULL OR end_seq IS NULL THEN NULL
        WHEN start_observed_ns IS NOT NULL AND end_observed_ns IS NOT NULL THEN
            CASE WHEN end_observed_ns >= start_observed_ns
                 THEN (end_observed_ns - start_observed_ns) / 1000000.0 END
        WHEN end_recorded_ns >= start_recorded_ns THEN (end_recorded_ns - start_recorded_ns) / 1000000.0
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
         THEN CAST(unixepoch('subsec') * 1000 AS INTEGER) - start_ns / 1000000 END AS age_ms,
    start_seq,
    end_seq,
    start_record_id,
    end_record_id
FROM joined;
