// bench/fleet/boss.js: pg-boss as the fleet benchmark's peer (see lib.js for
// the modes). pg-boss 10 has no per-worker concurrency option (teamSize went
// away in 10): a slot is one work() call, so a process with two slots calls
// work() twice. Each work() loop fetches up to batchSize jobs, hands the array
// to the handler, completes them, then sleeps out what is left of the polling
// interval, so at batchSize 1000 it is bound by its poll. Configurations:
//   defaults   batchSize 1 and the 2 s poll (for latency)
//   b1000      batchSize 1000, default 2 s poll
//   b1000-p05  batchSize 1000, pollingIntervalSeconds 0.5 (its minimum)
"use strict";

const PgBoss = require("pg-boss");
const lib = require("./lib");

const QUEUE = "bench";
const CHUNK = 10000; // jobs per insert() call (one statement each)

// onError: what an error event does; by default the run fails (the throughput and latency
// runs), the pressure runs (pressure.js) count them instead, as a service would log them.
async function open(uri, onError = (e) => lib.die(`pg-boss: ${e.message}`)) {
	const boss = new PgBoss({ connectionString: uri });
	boss.on("error", onError);
	await boss.start(); // installs or checks its schema, starts its maintenance
	return boss;
}

const adapter = {
	system: "pg-boss",
	configs: {
		defaults: {},
		b1000: { batchSize: 1000 },
		"b1000-p05": { batchSize: 1000, pollingIntervalSeconds: 0.5 },
	},

	// pg-boss 10 needs the queue created before send/insert/work.
	async setup(uri) {
		const boss = await open(uri);
		await boss.createQueue(QUEUE);
		await boss.stop({ graceful: false, wait: true });
	},

	// Its own bulk API: insert([{ name, data }]) is one INSERT ... SELECT per call.
	async bulkAdd(uri, n) {
		const boss = await open(uri);
		for (let i = 0; i < n; i += CHUNK) {
			const jobs = [];
			for (let j = i; j < Math.min(n, i + CHUNK); j++) jobs.push({ name: QUEUE, data: { i: j } });
			await boss.insert(jobs);
		}
		await boss.stop({ graceful: false, wait: true });
	},

	// Completed jobs stay in the table (state 'completed') until archived.
	async left(db) {
		const r = await db.query("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state <> 'completed'", [QUEUE]);
		return r.rows[0].n;
	},

	// start() (connect, schema check, maintenance) before "go"; the work() loops after.
	async prepareWorker(uri, config, slots, onJob, onError) {
		const boss = await open(uri, onError);
		return {
			start: async () => {
				for (let s = 0; s < slots; s++) {
					await boss.work(QUEUE, adapter.configs[config], async (jobs) => {
						for (const j of jobs) onJob(j.data);
					});
				}
			},
			stop: () => boss.stop({ graceful: false, wait: true, timeout: 1000 }),
		};
	},

	// send() per submission, as an application would.
	async submitter(uri, onError) {
		const boss = await open(uri, onError);
		return {
			submit: (payload) => boss.send(QUEUE, payload),
			close: () => boss.stop({ graceful: false, wait: true }),
		};
	},
};

if (require.main === module) lib.main(adapter, __filename);
module.exports = adapter;
