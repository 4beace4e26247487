-- bench/fleet/claim-ack.sql: one pgbench transaction pair = claim :batch jobs, then ack them.
-- The claim is the shape every peer uses (fleet-notes.md): a CTE picks rows with
-- FOR UPDATE SKIP LOCKED (MATERIALIZED so the planner cannot lock more than LIMIT),
-- then marks them taken; it commits on its own, as a worker's claim does. The ack
-- deletes them (graphile-worker deletes finished jobs too). \gset carries the ids
-- from the claim to the ack as one array; with -M prepared it is a bind parameter.
WITH picked AS MATERIALIZED (
	SELECT id FROM jobs WHERE state = 0 ORDER BY id LIMIT :batch FOR UPDATE SKIP LOCKED
), claimed AS (
	UPDATE jobs SET state = 1, locked_at = now() FROM picked WHERE jobs.id = picked.id RETURNING jobs.id
)
SELECT coalesce(array_agg(id), '{}') AS ids, count(*) AS n FROM claimed \gset
DELETE FROM jobs WHERE id = ANY (:ids::bigint[]);
