-- 0002_tool_calls: one row per tool call, its tool_pre paired with the
-- tool_post or tool_error that ends it (docs/record.md, "Tool calls").
-- Never edit after release; add a new file.
--
-- Pairing key, within (harness, session_id):
--   * the harness's call id (tool.call_id) where it sends one: the n-th start
--     with an id pairs with the n-th end with that id, whatever their order;
--   * otherwise (Cursor, Copilot, Gemini, Cline, OpenHands) the tool name plus
--     tool.input_sha256, matched FIFO: an end pairs with the oldest start of its
--     key still open before it. An end with no open start, and a start that no
--     end closes, stay visible as rows with outcome 'unpaired'.
-- FIFO with window functions: with running counts `pres` and `ends` over the
-- key in seq order and d = ends - pres, an end is unmatched exactly when d - 1
-- reaches the maximum of d over the earlier rows (floored at 0); otherwise it
-- is the m-th matched end, m = ends - that maximum, and pairs with start m.
--
-- The windows run over narrow rows (seq and the key); the wide columns are read
-- once per call by seq at the end. Every window partitions by session_id, so a
-- filter on session_id reaches the records_by_session index.
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
             THEN coalesce(json_extract(payload, '$.tool.input_sha256'), '') END AS key_input
    FROM records
    WHERE kind = 'event' AND event_kind IN ('tool_pre', 'tool_post', 'tool_error')
),
counted AS (
    SELECT *,
        sum(is_pre)     OVER running AS pres,
        sum(1 - is_pre) OVER running AS ends
    FROM tool_events
    WINDOW running AS (PARTITION BY harness, session_id, call_id, key_tool, key_input
                       ORDER BY seq ROWS UNBOUNDED PRECEDING)
),
numbered AS (
    SELECT seq, harness, session_id, is_pre, call_id, key_tool, key_input,
        CASE
            WHEN is_pre THEN pres
            WHEN call_id IS NOT NULL THEN ends
            WHEN ends - pres - 1 >= open_max THEN -seq   -- an end with no open start
            ELSE ends - open_max
        END AS n
    FROM (
        SELECT *,
            max(0, coalesce(max(ends - pres) OVER (
                PARTITION BY harness, session_id, call_id, key_tool, key_input ORDER BY seq
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS open_max
        FROM counted
    )
),
paired AS (
    SELECT seq, harness, session_id, is_pre, call_id,
        max(is_pre) OVER pair                      AS has_start,
        max(CASE WHEN NOT is_pre THEN seq END) OVER pair AS end_seq
    FROM numbered
    WINDOW pair AS (PARTITION BY harness, session_id, call_id, key_tool, key_input, n)
),
calls AS (
    SELECT
        harness,
        session_id,
        call_id,
        CASE WHEN is_pre THEN seq END AS start_seq,
        end_seq
    FROM paired
    WHERE is_pre OR NOT has_start
),
joined AS (
    SELECT
        c.*,
        coalesce(s.tool_name, e.tool_name) AS tool_name,
        coalesce(json_extract(s.payload, '$.tool.category'), json_extract(e.payload, '$.tool.category'))
            AS tool_category,
        coalesce(json_extract(s.payload, '$.tool.mcp_server'), json_extract(e.payload, '$.tool.mcp_server'))
            AS mcp_server,
        coalesce(json_extract(s.payload, '$.turn_id'), json_extract(e.payload, '$.turn_id')) AS turn_id,
        s.recorded_at_ns AS start_ns,
        e.recorded_at_ns AS end_ns,
        json_extract(s.payload, '$.client.ts_observed_ns') AS start_observed_ns,
        json_extract(e.payload, '$.client.ts_observed_ns') AS end_observed_ns,
        e.event_kind AS end_kind,
        json_extract(e.payload, '$.tool.is_error') AS end_is_error,
        coalesce(json_extract(e.payload, '$.tool.duration_ms'), json_extract(s.payload, '$.tool.duration_ms'))
            AS harness_ms
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
    start_seq,
    strftime('%Y-%m-%dT%H:%M:%fZ', start_ns / 1000000000.0, 'unixepoch') AS start_at,
    end_seq,
    strftime('%Y-%m-%dT%H:%M:%fZ', end_ns / 1000000000.0, 'unixepoch') AS end_at,
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
    END AS outcome
FROM joined;
