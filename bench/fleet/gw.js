// bench/fleet/gw.js: graphile-worker as the fleet benchmark's peer (see lib.js
// for the modes). Configurations:
//   defaults  concurrency 2, everything else at graphile-worker's defaults
//   batched   + preset.worker.localQueue.size 100 and completeJobBatchDelay 0,
//             the batching options of its performance docs (0.17)
// The scheduling rows (lib.js sched): a job's key is its named queue (queueName: one job
// of a queue runs at a time, graphile-worker's only per-key limit, so no limit above 1),
// its priority graphile-worker's priority, negated (there a smaller number runs first).
"use strict";

// graphile-worker logs one info line per completed job unless NO_LOG_SUCCESS
// is set (its documented switch), so that a no-op handler does not pay for
// console formatting. It is read when the module loads: set it before require.
// FLEET_GW_LOG=1 keeps its default.
if (!process.env.FLEET_GW_LOG) process.env.NO_LOG_SUCCESS = "1";

const { run, makeWorkerUtils, runMigrations } = require("graphile-worker");
const lib = require("./lib");

const TASK = "bench";
const CHUNK = 10000; // jobs per add_jobs call (one statement each)

const adapter = {
	system: "graphile-worker",
	configs: {
		defaults: {},
		batched: { worker: { localQueue: { size: 100 }, completeJobBatchDelay: 0 } },
	},

	// Install graphile-worker's schema (what `graphile-worker --schema-only` does).
	async setup(uri) {
		await runMigrations({ connectionString: uri });
	},

	// Its own bulk API: WorkerUtils.addJobs -> graphile_worker.add_jobs(job_spec[]).
	async bulkAdd(uri, n) {
		const utils = await makeWorkerUtils({ connectionString: uri });
		try {
			for (let i = 0; i < n; i += CHUNK) {
				const specs = [];
				for (let j = i; j < Math.min(n, i + CHUNK); j++) specs.push({ identifier: TASK, payload: { i: j } });
				await utils.addJobs(specs);
			}
		} finally {
			await utils.release();
		}
	},

	// The same through addJobs, with each job's queue and priority (lib.js schedMix).
	async bulkAddSched(uri, n, spec) {
		const utils = await makeWorkerUtils({ connectionString: uri });
		try {
			for (let i = 0; i < n; i += CHUNK) {
				const specs = [];
				for (let j = i; j < Math.min(n, i + CHUNK); j++) {
					const s = spec(j), job = { identifier: TASK, payload: { i: j } };
					if (s.k !== undefined) { job.payload.k = s.k; job.queueName = s.k; }
					if (s.prio) job.priority = -s.prio;
					specs.push(job);
				}
				await utils.addJobs(specs);
			}
		} finally {
			await utils.release();
		}
	},
	groupLimitN: false,

	// Finished jobs are deleted; failed ones would stay (with attempts > 0).
	async left(db) {
		const r = await db.query("SELECT count(*)::int AS n FROM graphile_worker._private_jobs");
		return r.rows[0].n;
	},

	// One runner per process, `slots` concurrent jobs, a no-op task. run() makes
	// its own pool from the connection string (maxPoolSize 10), as users do.
	// With sched (lib.js), onJob is the witness's async handler, awaited.
	async prepareWorker(uri, config, slots, onJob, onError, sched) {
		let runner;
		const task = sched ? async (payload) => { await onJob(payload); } : async (payload) => { onJob(payload); };
		return {
			start: async () => {
				runner = await run({
					connectionString: uri,
					concurrency: slots,
					noHandleSignals: true,
					taskList: { [TASK]: task },
					preset: adapter.configs[config],
				});
			},
			stop: async () => { if (runner) await runner.stop(); },
		};
	},

	// add_job per submission, as an application would; its trigger NOTIFYs the workers.
	async submitter(uri) {
		const utils = await makeWorkerUtils({ connectionString: uri });
		return {
			submit: (payload) => utils.addJob(TASK, payload),
			close: () => utils.release(),
		};
	},
};

if (require.main === module) lib.main(adapter, __filename);
module.exports = adapter;
