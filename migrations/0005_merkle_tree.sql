-- 0005_merkle_tree: the RFC 6962 Merkle tree over the row hashes (docs/chain.md, "The tree").
-- Never edit after release; add a new file.
--
-- The writer keeps both tables in its append transaction. _agentwatch_tree holds the
-- compact range of the tree over rows 1..size (the perfect subtree roots, left to right,
-- 32 bytes each), which is all the tree needs to grow and to give its root.
-- _agentwatch_tree_nodes holds the hashes of complete subtrees at levels 8, 16, 24, ...
-- (one per 256 leaves, one per 65,536, ...), so a proof reads at most a few hundred
-- hashes. Nothing here is trusted by a verifier: proofs are checked against signed roots,
-- and `verify --full` recomputes the tree from the rows.
CREATE TABLE _agentwatch_tree (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    size  INTEGER NOT NULL CHECK (size >= 0),
    nodes BLOB    NOT NULL,
    root  BLOB    NOT NULL CHECK (length(root) = 32)
) STRICT;

CREATE TABLE _agentwatch_tree_nodes (
    level INTEGER NOT NULL,
    idx   INTEGER NOT NULL,
    hash  BLOB    NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (level, idx)
) STRICT, WITHOUT ROWID;
