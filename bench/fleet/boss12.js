// bench/fleet/boss12.js: pg-boss 12 as the scheduling rows' peer (issue 36; lib.js
// sched mode only). pg-boss 10.4.2, the other rows' (boss.js), has no per-group limit:
// `groupConcurrency` (work() option: at most N active jobs per group across every node,
// counted in the database at each fetch; its docs: "may be slightly exceeded") came in
// pg-boss 12. package.json installs 12.38.1 beside 10.4.2 under the alias pg-boss-12;
// its `engines` asks for node >= 22.12, and it runs on this machine's node 20 (an ES
// module, loaded with import()). A job's key is its group ({ group: { id } }), its
// priority pg-boss's (higher runs first, as chute's). Configurations:
//   b20-burst   localConcurrency 2 (lib.js's slots: 2 processes x 2 workers), batchSize
//               20, pollingIntervalSeconds 0.5 (its minimum), burstWhenBatchFull (fetch
//               again at once while batches come back full, else wait out the poll)
// Each work() worker hands its batch to the handler, which runs the batch's jobs at once
// (each the witness's handler): up to 4 x 20 jobs run together, as pg-boss runs them.
"use strict";

const lib = require("./lib");

const QUEUE = "bench";
const CHUNK = 10000;

let PgBoss;
async function open(uri, onError = (e) => lib.die(`pg-boss 12: ${e.message}`)) {
	if (!PgBoss) ({ PgBoss } = await import("pg-boss-12"));
	const boss = new PgBoss({ connectionString: uri });
	boss.on("error", onError);
	await boss.start();
	return boss;
}

const adapter = {
	system: "pg-boss-12",
	configs: {
		"b20-burst": { batchSize: 20, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
	},
	groupLimitN: true,

	async setup(uri) {
		const boss = await open(uri);
		await boss.createQueue(QUEUE);
		await boss.stop({ graceful: false, wait: true });
	},

	// insert(name, jobs): one statement per call; group and priority per job.
	async bulkAddSched(uri, n, spec) {
		const boss = await open(uri);
		for (let i = 0; i < n; i += CHUNK) {
			const jobs = [];
			for (let j = i; j < Math.min(n, i + CHUNK); j++) {
				const s = spec(j), job = { data: { i: j } };
				if (s.k !== undefined) { job.data.k = s.k; job.group = { id: s.k }; }
				if (s.prio) job.priority = s.prio;
				jobs.push(job);
			}
			await boss.insert(QUEUE, jobs);
		}
		await boss.stop({ graceful: false, wait: true });
	},

	async left(db) {
		const r = await db.query("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state <> 'completed'", [QUEUE]);
		return r.rows[0].n;
	},

	// One work() with localConcurrency = slots; groupConcurrency = the mix's limit.
	async prepareWorker(uri, config, slots, onJob, onError, sched) {
		const boss = await open(uri, onError);
		const opts = { ...adapter.configs[config], localConcurrency: slots };
		if (sched && sched.limit) opts.groupConcurrency = sched.limit;
		return {
			start: async () => {
				await boss.work(QUEUE, opts, async (jobs) => {
					await Promise.all(jobs.map((j) => onJob(j.data)));
				});
			},
			stop: () => boss.stop({ graceful: false, wait: true, timeout: 1000 }),
		};
	},
};

if (require.main === module) lib.main(adapter, __filename);
module.exports = adapter;
