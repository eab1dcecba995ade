-- 0003_witness: the fleet server as a witness in the C2SP tlog-witness sense
-- (agentwatch/fleet/witness.py). A witness says which checkpoint it holds
-- before it is handed the next one; a shipping login may not read the tables,
-- so this tells it the largest checkpoint held for a store it claims itself
-- (from this host), and nothing about any other store. No row held: NULLs.
-- Never edit after release; add a new file.

CREATE FUNCTION agentwatch.held_checkpoint(p_store text, p_host text, OUT tree_size bigint, OUT root_hash bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT k.tree_size, k.root_hash
    FROM agentwatch.checkpoints k
    JOIN agentwatch.source_claims c ON c.store_id = k.store_id
    WHERE k.store_id = p_store AND c.claimed_by = session_user AND c.host = p_host
    ORDER BY k.tree_size DESC
    LIMIT 1
$$;

-- A schema's default privileges cannot take back the global EXECUTE for PUBLIC: revoke it here.
REVOKE ALL ON FUNCTION agentwatch.held_checkpoint(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION agentwatch.held_checkpoint(text, text) TO agentwatch_ship;
