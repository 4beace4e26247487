// bench/fleet/uniq.js: the peers' submit throughput with a unique key per job against
// without (issue 37), the same shape as chute's usubmit:
//
//   node uniq.js gw|boss|boss12 URI N CONC plain|keyed
//
// N single-job submits, CONC at a time over one client (one pool), each job with a
// distinct key (keyed) or none (plain), into a fresh database whose schema and queue are
// made beforehand (untimed):
//   gw      WorkerUtils.addJob(task, payload, { jobKey: "u<i>" }) against addJob(task,
//           payload); graphile-worker's default jobKeyMode (replace)
//   boss    pg-boss 10 send(queue, data, { singletonKey: "u<i>" }) into a queue of policy
//           "short" (its unique index on (name, singleton_key) of created jobs: without a
//           policy pg-boss 10 does not hold a singletonKey unique at all), against plain
//           send() into a "standard" queue (a short queue lets one keyless created job in)
//   boss12  the same with pg-boss 12
// Then counts the jobs in the peer's table: anything but exactly N fails the run (a lost
// or a doubled insert). Prints one JSON line: seconds, jobs_per_s, jobs counted.
//
//   node uniq.js boss12-after URI K [FLOW_S]
//
// pg-boss 12's dependencies (flow(): jobs with ref and dependsOn; pg-boss 10 has none): one
// job A and K jobs depending on it in one flow() (untimed), A fetched, then timed:
// complete(A) (complete_ms), and from its return to no dependent left blocked (wake_ms),
// polled every 5 ms over a connection of its own. pg-boss 12 does not unblock in the
// completion: its background resolver does it, out of band (plans.js, completeJobs), every
// flowIntervalSeconds (default 5, at least 1): FLOW_S sets it.
"use strict";

const lib = require("./lib");
const { Client } = require("pg");

const TASK = "bench", QUEUE = "bench";

async function gw(uri, keyed) {
	const { makeWorkerUtils, runMigrations } = require("graphile-worker");
	await runMigrations({ connectionString: uri });
	const utils = await makeWorkerUtils({ connectionString: uri });
	return {
		submit: (i) => keyed ? utils.addJob(TASK, { i }, { jobKey: `u${i}` }) : utils.addJob(TASK, { i }),
		close: () => utils.release(),
		count: "SELECT count(*)::int AS n FROM graphile_worker._private_jobs",
	};
}

async function boss(uri, keyed, mod) {
	const PgBoss = mod === "pg-boss-12" ? (await import(mod)).PgBoss : require(mod);
	const b = new PgBoss({ connectionString: uri });
	b.on("error", (e) => lib.die(`${mod}: ${e.message}`));
	await b.start();
	await b.createQueue(QUEUE, { policy: keyed ? "short" : "standard" });
	return {
		submit: async (i) => {
			const id = keyed ? await b.send(QUEUE, { i }, { singletonKey: `u${i}` }) : await b.send(QUEUE, { i });
			if (!id) lib.die(`${mod}: send ${i} made no job`);
		},
		close: () => b.stop({ graceful: false, wait: true }),
		count: `SELECT count(*)::int AS n FROM pgboss.job WHERE name = '${QUEUE}'`,
	};
}

async function boss12After(uri, k, flowS) {
	const { PgBoss } = await import("pg-boss-12");
	const b = new PgBoss(flowS ? { connectionString: uri, flowIntervalSeconds: flowS } : { connectionString: uri });
	b.on("error", (e) => lib.die(`pg-boss-12: ${e.message}`));
	await b.start();
	await b.createQueue(QUEUE);
	const jobs = [{ ref: "a", name: QUEUE, data: { i: 0 } }];
	for (let i = 1; i <= k; i++) jobs.push({ ref: `d${i}`, name: QUEUE, data: { i }, dependsOn: ["a"] });
	await b.flow(jobs);
	const db = new Client({ connectionString: uri });
	await db.connect();
	const blocked = async () => (await db.query("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND blocked", [QUEUE])).rows[0].n;
	if ((await blocked()) !== k) lib.die(`boss12-after: not ${k} blocked jobs after flow()`);
	const got = await b.fetch(QUEUE);
	if (!got || got.length !== 1 || got[0].data.i !== 0) lib.die("boss12-after: fetch did not give A alone");
	const t0 = lib.nowMs();
	await b.complete(QUEUE, got[0].id);
	const t1 = lib.nowMs();
	while ((await blocked()) > 0) {
		if (lib.nowMs() - t1 > 1000 * Number(process.env.FLEET_TIMEOUT || 600)) lib.die("boss12-after: dependents still blocked");
		await lib.sleep(5);
	}
	const t2 = lib.nowMs();
	await db.end();
	await b.stop({ graceful: false, wait: true });
	process.stdout.write(JSON.stringify({ system: "pg-boss-12", woken: k, flow_s: flowS || 5, complete_ms: t1 - t0, wake_ms: t2 - t1 }) + "\n");
	process.exit(0);
}

async function main() {
	if (process.argv[2] === "boss12-after") return boss12After(process.argv[3], Number(process.argv[4]), Number(process.argv[5] || 0));
	const [peer, uri, nArg, concArg, mode] = process.argv.slice(2);
	const n = Number(nArg), conc = Number(concArg), keyed = mode === "keyed";
	if (!Number.isInteger(n) || n < 1 || !Number.isInteger(conc) || conc < 1 || !["plain", "keyed"].includes(mode))
		lib.die("usage: node uniq.js gw|boss|boss12 URI N CONC plain|keyed");
	const t = setTimeout(() => lib.die("timed out"), 1000 * Number(process.env.FLEET_TIMEOUT || 600));
	t.unref();
	const s = peer === "gw" ? await gw(uri, keyed)
		: peer === "boss" ? await boss(uri, keyed, "pg-boss")
		: peer === "boss12" ? await boss(uri, keyed, "pg-boss-12")
		: lib.die(`unknown peer ${peer}`);
	await s.submit(-1); // warm the pool's first connection and the statement (not counted below)
	const db = new Client({ connectionString: uri });
	await db.connect();
	await db.query(s.count.replace("count(*)::int AS n FROM", "count(*) FROM").replace(/^SELECT count\(\*\) FROM (\S+).*$/, "DELETE FROM $1"));
	let next = 0;
	const t0 = lib.nowMs();
	await Promise.all(Array.from({ length: conc }, async () => {
		while (next < n) await s.submit(next++);
	}));
	const seconds = (lib.nowMs() - t0) / 1000;
	const counted = (await db.query(s.count)).rows[0].n;
	await db.end();
	await s.close();
	if (counted !== n) lib.die(`${peer} ${mode}: ${counted} jobs in the table after ${n} submits`);
	const system = { gw: "graphile-worker", boss: "pg-boss", boss12: "pg-boss-12" }[peer];
	process.stdout.write(JSON.stringify({ system, mode, jobs: n, conc, seconds, jobs_per_s: n / seconds, counted }) + "\n");
	process.exit(0);
}

main().catch((e) => lib.die(e.stack || String(e)));
