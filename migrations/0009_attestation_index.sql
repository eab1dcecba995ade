-- 0009_attestation_index: the recorder's own rows found without reading every event.
-- Never edit after release; add a new file.
--
-- Readers look up attestation rows (integrity findings, coverage rows, the process witness's
-- rows) by `kind = 'attestation'`, which no other index serves: each lookup was a scan of the
-- whole table, the larger part of `sessions` and `show` on a store of millions of events. The
-- index is partial, so an event row costs the writer nothing more than the test of its kind.
CREATE INDEX records_attestations ON records (seq) WHERE kind = 'attestation';
