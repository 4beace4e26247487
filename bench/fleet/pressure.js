// bench/fleet/pressure.js: one cell of the pressure benchmark (issue 24): one system,
// a steady producer, and one pressure in the middle, sampled every second. Run by
// pressure.sh, which gives every cell a fresh database in one throwaway cluster.
//
//   node pressure.js cell SYSTEM CONFIG CELL URI WORKDIR
//       SYSTEM chute | graphile-worker | pg-boss; CONFIG as in gw.js and boss.js ("-" for chute);
//       CELL   xmin | readers | high | kill | idle | none.  Writes WORKDIR/seconds.tsv (one row a
//       second) and prints the cell's summary as one JSON line.
//   node pressure.js worker SYSTEM CONFIG URI STAMPS     (internal) one peer worker process
//
// A cell: the workers are started (2 processes x 2 slots, as lib.js runs the peers) and a probe
// job is run through them; then the producer submits jobs at PRESSURE_RATE per second on a fixed
// schedule, one call of the system's own single-job API per job (chute: the statement of `chute
// submit`, over a pool of connections as the peers' APIs use), for PRESSURE_WARM_S (not counted)
// and PRESSURE_BASE_S (the baseline); then the pressure runs for PRESSURE_STRESS_S; then the
// baseline again until the queue has recovered (below) or PRESSURE_RECOVER_MAX_S have passed
// (at least PRESSURE_RECOVER_MIN_S). The producer stops, the queue is drained (at most
// PRESSURE_DRAIN_S), and every submitted job is looked for among the handler runs.
//
// The pressures (on connections of their own to the system's database; application_name
// "pressure-*", which the backend kill spares, as it spares the producer's):
//   xmin     one session holds an XID: BEGIN; SELECT txid_current(); left open
//   readers  PRESSURE_READERS (4) sessions, each in one REPEATABLE READ transaction for the
//            whole pressure, scanning the system's queue table(s) (count(*)) every 100 ms
//   high     the producer at PRESSURE_HIGH (1.5) times the baseline rate
//   kill     pg_terminate_backend of every other client backend of the database (the system's
//            workers), PRESSURE_KILL_HZ (3) times a second
//   idle     PRESSURE_IDLE_CONNS (300) idle connections opened and held
//   none     nothing (a control)
//
// Claim latency: the time from just before the submit call (wall clock, as lib.js and psubmit
// take it) to the handler's start (its own stamp), of the job's first run. Completion rate: handler
// starts per second. Queue depth: the system's unfinished jobs (waiting or running), from its
// table, counted 10 times a second and averaged over each second (once a second would alias with
// pg-boss's 0.5 s polls: its count swings with the phase of its fetches). Recovered: the first second after the pressure's end from which the depth stays at or
// under the baseline's p99 depth times PRESSURE_RECOVER_MARGIN (1.2; at least 2 more than the p99)
// for PRESSURE_HOLD_S (10) seconds; the recovery time is that second minus the pressure's end.
// A worker process that exits is started again after 1 s, as systemd's Restart= would, and counted.
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const { fork, spawn, spawnSync } = require("child_process");
const { performance } = require("perf_hooks");
const pg = require("pg");

const nowMs = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const num = (k, d) => (process.env[k] !== undefined && process.env[k] !== "" ? Number(process.env[k]) : d);

const P = {
	rate: num("PRESSURE_RATE", 200),
	warm: num("PRESSURE_WARM_S", 5),
	base: num("PRESSURE_BASE_S", 20),
	stress: num("PRESSURE_STRESS_S", 30),
	recMin: num("PRESSURE_RECOVER_MIN_S", 15),
	recMax: num("PRESSURE_RECOVER_MAX_S", 75),
	hold: num("PRESSURE_HOLD_S", 10),
	margin: num("PRESSURE_RECOVER_MARGIN", 1.2),
	high: num("PRESSURE_HIGH", 1.5),
	killHz: num("PRESSURE_KILL_HZ", 3),
	idle: num("PRESSURE_IDLE_CONNS", 300),
	readers: num("PRESSURE_READERS", 4),
	drain: num("PRESSURE_DRAIN_S", 60),
	inflight: num("PRESSURE_INFLIGHT", 8), // submits in flight at most (the peers' pools hold 10)
};
const PROCS = 2, SLOTS = 2;
const CELLS = ["xmin", "readers", "high", "kill", "idle", "none"];

function die(msg) {
	process.stderr.write(`pressure.js: ${msg}\n`);
	process.exit(1);
}

// A connection of the harness's own: named so that the backend kill spares it, and with an
// error listener (a terminated or failed connection must not end the process).
function withApp(uri, app) {
	return uri + (uri.includes("?") ? "&" : "?") + "application_name=" + app;
}
async function harnessClient(uri, app, onError) {
	const c = new pg.Client({ connectionString: withApp(uri, app) });
	c.on("error", (e) => onError && onError(e));
	await c.connect();
	return c;
}

// Nearest-rank percentile of a sorted array (as lib.js).
function pct(sorted, p) {
	if (!sorted.length) return null;
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

// ---- CPU: the server (the postmaster and its children), the workers (their process trees), this
// process, and the whole machine, in seconds since boot; differences give the share of each.

function procTable() {
	const t = new Map();
	for (const d of fs.readdirSync("/proc")) {
		if (!/^\d+$/.test(d)) continue;
		try {
			const f = fs.readFileSync(`/proc/${d}/stat`, "utf8").replace(/^.*\) /, "").split(" ");
			// From "state" on: ppid 1, utime 11, stime 12, cutime 13, cstime 14 (ticks of 1/100 s).
			t.set(Number(d), { ppid: +f[1], own: +f[11] + +f[12], reaped: +f[13] + +f[14] });
		} catch (_) { /* exited */ }
	}
	return t;
}
// CPU seconds of the trees under roots: each root's own and reaped children's, each live
// descendant's own.
function treeCpu(t, roots) {
	const kids = new Map();
	for (const [pid, p] of t) {
		if (!kids.has(p.ppid)) kids.set(p.ppid, []);
		kids.get(p.ppid).push(pid);
	}
	let ticks = 0;
	const walk = (pid, root) => {
		const p = t.get(pid);
		if (!p) return;
		ticks += p.own + (root ? p.reaped : 0);
		for (const k of kids.get(pid) || []) walk(k, false);
	};
	for (const r of roots) walk(r, true);
	return ticks / 100;
}
function machineCpu() {
	const f = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
	return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / 100; // user nice system irq softirq steal
}
function selfCpu() {
	const u = process.cpuUsage();
	return (u.user + u.system) / 1e6;
}

// ---- the systems: schema, producer, workers, depth, tables

const CHUTE_SUBMIT = // src/chute-pgsql/pg_cmd_submit.c, the statement of `chute submit URL FILE`
	"WITH b AS MATERIALIZED (SELECT * FROM unnest($2::text[], $3::bytea[])" +
	" WITH ORDINALITY AS b(id, body, n))," +
	" p AS (INSERT INTO chute.payloads (queue, id, body)" +
	" SELECT $1, id, body FROM b ORDER BY n ON CONFLICT DO NOTHING RETURNING id)," +
	" j AS (INSERT INTO chute.live (queue, id, state, run_at, size)" +
	" SELECT $1, b.id, CASE WHEN $4::bigint IS NULL AND $5::bigint IS NULL" +
	" THEN 'new' ELSE 'defer' END," +
	" CASE WHEN $5::bigint IS NOT NULL THEN to_timestamp($5::bigint / 1000.0)" +
	" WHEN $4::bigint IS NOT NULL THEN now() + $4::bigint * interval" +
	" '1 millisecond' ELSE now() END, octet_length(b.body) FROM b" +
	" JOIN p ON p.id = b.id ORDER BY b.n RETURNING id)," +
	" w AS (SELECT pg_notify('chute', $1) FROM (SELECT FROM j LIMIT 1) x)" +
	" SELECT b.n FROM b JOIN j ON j.id = b.id" +
	" WHERE (SELECT count(*) FROM w) >= 0 ORDER BY b.n";

const HOST = os.hostname().split(".")[0];

const systems = {
	chute: {
		schema: "chute",
		hot: ["chute.live", "chute.finished"],
		depthSql: "SELECT count(*)::int FROM chute.live WHERE queue = 'default' AND state IN ('new', 'cur', 'defer')",
		async setup(uri) {
			const r = spawnSync(process.env.CHUTE, ["init", uri], { stdio: ["ignore", "ignore", "inherit"] });
			if (r.status !== 0) die(`chute init failed (${r.status})`);
		},
		// key: the job's ID, shaped like a generated one (time, pid, counter, host).
		async submitter(uri, onError) {
			const pool = new pg.Pool({ connectionString: withApp(uri, "pressure-producer"), max: P.inflight });
			pool.on("error", onError);
			return {
				submit: async (i) => {
					const t = Date.now();
					const id = `${Math.floor(t / 1000)}.${String((t % 1000) * 1000).padStart(6, "0")}.` +
						`${String(process.pid).padStart(7, "0")}_${String(i).padStart(6, "0")}.${HOST}`;
					const r = await pool.query(CHUTE_SUBMIT, ["default", [id], [Buffer.from(`{"i":${i}}`)], null, null]);
					if (r.rows.length !== 1) throw new Error(`${id}: job exists`);
					return id;
				},
				close: () => pool.end(),
			};
		},
		// As contrib/chute-worker@.service runs it: local copies in a RuntimeDirectory on a tmpfs.
		spawnWorker(uri, config, stamps, errFile, rtdir) {
			return spawn(process.env.CHUTE, ["run", uri, "--persistent", "-j", String(SLOTS), "--",
				path.join(process.env.FLEET_BIN, "pstamp"), stamps], {
				stdio: ["ignore", "ignore", fs.openSync(errFile, "a")],
				env: { ...process.env, RUNTIME_DIRECTORY: rtdir },
			});
		},
	},
	"graphile-worker": {
		schema: "graphile_worker",
		hot: ["graphile_worker._private_jobs"],
		depthSql: "SELECT count(*)::int FROM graphile_worker._private_jobs", // finished jobs are deleted
		adapter: () => require("./gw"),
	},
	"pg-boss": {
		schema: "pgboss",
		hot: ["pgboss.job"],
		depthSql: "SELECT count(*)::int FROM pgboss.job WHERE name = 'bench' AND state IN ('created', 'retry', 'active')",
		adapter: () => require("./boss"),
	},
};
// The peers: their adapters' setup and submitter (key: the payload's i); workers are forked.
for (const name of ["graphile-worker", "pg-boss"]) {
	const s = systems[name];
	s.setup = (uri) => s.adapter().setup(uri);
	s.submitter = async (uri, onError) => {
		const sub = await s.adapter().submitter(withApp(uri, "pressure-producer"), onError);
		return { submit: async (i) => { await sub.submit({ i }); return String(i); }, close: () => sub.close() };
	};
	s.spawnWorker = (uri, config, stamps, errFile) =>
		fork(__filename, ["worker", name, config, uri, stamps], { stdio: ["ignore", "ignore", fs.openSync(errFile, "a"), "ipc"] });
}

// ---- a peer's worker process: its adapter's worker, each handler run stamped "KEY MS" on one
// write(2) to STAMPS (O_APPEND, shared by the processes, as pstamp does for chute).

async function workerMain(system, config, uri, stamps) {
	process.on("disconnect", () => process.exit(0));
	const fd = fs.openSync(stamps, "a");
	const onJob = (payload) => {
		const t = nowMs();
		fs.writeSync(fd, `${payload.i} ${t.toFixed(3)}\n`);
	};
	// Errors a service would log: counted on stderr, the worker goes on (pg-boss emits them for
	// each failed poll; graphile-worker logs its own).
	const onError = (e) => process.stderr.write(`${new Date().toISOString()} error event: ${e.message}\n`);
	const w = await systems[system].adapter().prepareWorker(uri, config, SLOTS, onJob, onError);
	await w.start();
}

// ---- the cell

class Workers {
	constructor(sys, uri, config, dir, log) {
		Object.assign(this, { sys, uri, config, dir, log, procs: [], exits: [], stopping: false });
		this.stamps = path.join(dir, "stamps");
		fs.writeFileSync(this.stamps, "");
	}
	start() {
		for (let k = 0; k < PROCS; k++) this.spawn(k);
	}
	spawn(k) {
		let rtdir = null;
		if (this.sys === systems.chute) rtdir = fs.mkdtempSync("/dev/shm/chute-pressure.");
		const c = this.sys.spawnWorker(this.uri, this.config, this.stamps, path.join(this.dir, `worker${k}.err`), rtdir);
		c.rtdir = rtdir;
		this.procs[k] = c;
		c.on("exit", (code, sig) => {
			if (rtdir) fs.rmSync(rtdir, { recursive: true, force: true });
			if (this.stopping) return;
			this.exits.push({ t: nowMs(), k, how: code ?? sig });
			this.log(`worker ${k} exited (${code ?? sig}); started again in 1 s`);
			setTimeout(() => { if (!this.stopping) this.spawn(k); }, 1000);
		});
	}
	pids() {
		return this.procs.filter((c) => c && c.exitCode === null && c.signalCode === null).map((c) => c.pid);
	}
	async stop() {
		this.stopping = true;
		const live = this.procs.filter((c) => c.exitCode === null && c.signalCode === null);
		for (const c of live) c.kill("SIGTERM");
		const t = Date.now();
		while (live.some((c) => c.exitCode === null && c.signalCode === null) && Date.now() - t < 15000) await sleep(50);
		for (const c of live) { try { c.kill("SIGKILL"); } catch (_) { /* gone */ } }
	}
	// KEY -> handler start times (ms), from the stamps file.
	read() {
		const m = new Map();
		for (const line of fs.readFileSync(this.stamps, "utf8").split("\n")) {
			const sp = line.indexOf(" ");
			if (sp < 1) continue;
			const k = line.slice(0, sp), t = Number(line.slice(sp + 1));
			if (!m.has(k)) m.set(k, []);
			m.get(k).push(t);
		}
		return m;
	}
}

// The pressures: start(uri, ctx) -> stop(); ctx.rateMul is the producer's multiplier.
const pressures = {
	none: async () => async () => ({}),
	xmin: async (uri, ctx) => {
		const c = await harnessClient(uri, "pressure-xmin", ctx.onError);
		await c.query("BEGIN");
		const x = (await c.query("SELECT txid_current() AS x")).rows[0].x;
		ctx.log(`holding xid ${x}`);
		return async () => { await c.query("ROLLBACK").catch(() => {}); await c.end().catch(() => {}); return { xid: x }; };
	},
	readers: async (uri, ctx) => {
		let stop = false, scans = 0;
		const loops = [];
		for (let k = 0; k < P.readers; k++) {
			const c = await harnessClient(uri, "pressure-reader", ctx.onError);
			await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
			loops.push((async () => {
				while (!stop) {
					for (const t of ctx.sys.hot) {
						await c.query(`SELECT count(*) FROM ${t}`).catch((e) => ctx.onError(e));
						scans++;
					}
					await sleep(100);
				}
				await c.query("COMMIT").catch(() => {});
				await c.end().catch(() => {});
			})());
		}
		return async () => { stop = true; await Promise.all(loops); return { scans }; };
	},
	high: async (uri, ctx) => {
		ctx.rateMul = P.high;
		return async () => { ctx.rateMul = 1; return { rate_mul: P.high }; };
	},
	kill: async (uri, ctx) => {
		const c = await harnessClient(uri, "pressure-killer", ctx.onError);
		let stop = false, kills = 0, rounds = 0;
		const loop = (async () => {
			const gap = 1000 / P.killHz;
			let next = nowMs();
			while (!stop) {
				const r = await c.query("SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid)" +
					" FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()" +
					" AND backend_type = 'client backend'" +
					" AND coalesce(application_name, '') NOT LIKE 'pressure-%') k").catch((e) => { ctx.onError(e); return null; });
				if (r) kills += r.rows[0].n;
				rounds++;
				next += gap;
				await sleep(Math.max(0, next - nowMs()));
			}
		})();
		return async () => { stop = true; await loop; await c.end().catch(() => {}); return { kills, kill_rounds: rounds }; };
	},
	idle: async (uri, ctx) => {
		const conns = [];
		let failed = 0, why = "";
		for (let k = 0; k < P.idle; k += 20) {
			const batch = [];
			for (let j = k; j < Math.min(P.idle, k + 20); j++) {
				batch.push(harnessClient(uri, "pressure-idle", ctx.onError).then((c) => conns.push(c))
					.catch((e) => { failed++; why = e.message; }));
			}
			await Promise.all(batch);
		}
		ctx.log(`${conns.length} idle connections open${failed ? `, ${failed} refused: ${why}` : ""}`);
		return async () => { await Promise.all(conns.map((c) => c.end().catch(() => {}))); return { idle_open: conns.length, idle_refused: failed }; };
	},
};

async function cellMain(system, config, cell, uri, dir) {
	const sys = systems[system];
	if (!sys) die(`unknown system ${system}`);
	if (!pressures[cell]) die(`unknown cell ${cell}; have ${CELLS}`);
	const log = (m) => process.stderr.write(`  ${system} ${config} ${cell}: ${m}\n`);
	let errors = 0, firstError = "";
	const onError = (e) => { errors++; firstError = firstError || e.message; };
	await sys.setup(uri);

	const dataDir = await (async () => {
		const c = await harnessClient(uri, "pressure-setup", onError);
		const d = (await c.query("SHOW data_directory")).rows[0].data_directory;
		await c.end();
		return d;
	})();
	const postmaster = Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);

	const workers = new Workers(sys, uri, config, dir, log);
	const sub = await sys.submitter(uri, onError);
	const sampler = await harnessClient(uri, "pressure-sampler", onError);
	await sampler.query("SET statement_timeout = '5s'");
	let stopping = false;
	const bail = async (msg) => { await workers.stop(); die(msg); };
	process.on("SIGTERM", () => { workers.stop().then(() => process.exit(1)); });

	// Started, and a probe job through them (bounded); then 1 s of rest, as lib.js gives the peers.
	workers.start();
	const probe = await sub.submit(-1).catch((e) => bail(`probe submit: ${e.message}`));
	for (let t = Date.now(); !workers.read().has(probe); await sleep(50))
		if (Date.now() - t > 60000) await bail("the probe job did not run within 60 s");
	await sleep(1000);

	// ---- the producer: job i at its due time on a fixed schedule, P.inflight calls at most at once
	const ctx = { sys, log, onError, rateMul: 1 };
	const subs = [];	// [key, start_ms, end_ms]
	let submitErrors = 0, firstSubmitError = "", inflight = 0, produce = true, slot = null;
	const t0 = nowMs();
	const producer = (async () => {
		let next = t0;
		for (let i = 0; produce; i++) {
			const d = next - nowMs();
			if (d > 1) await sleep(d - 0.5);
			while (inflight >= P.inflight) await new Promise((r) => { slot = r; });
			inflight++;
			const ts = nowMs();
			sub.submit(i).then((key) => subs.push([key, ts, nowMs()]))
				.catch((e) => { submitErrors++; firstSubmitError = firstSubmitError || e.message; })
				.finally(() => { inflight--; if (slot) { const r = slot; slot = null; r(); } });
			next += 1000 / (P.rate * ctx.rateMul);
		}
		while (inflight > 0) await sleep(5);
	})();

	// ---- the sampler: every second on the cell's clock
	const samples = [];
	const statsSql = "SELECT coalesce(sum(n_dead_tup), 0)::bigint AS dead," +
		" coalesce(sum(n_live_tup), 0)::bigint AS live, coalesce(sum(pg_table_size(relid)), 0)::bigint AS tbytes," +
		" coalesce(sum(pg_indexes_size(relid)), 0)::bigint AS ibytes," +
		" coalesce(sum(autovacuum_count), 0)::int AS autovacuums FROM pg_stat_user_tables WHERE schemaname = $1";
	let cpuPrev = null;
	const cpuNow = () => {
		const t = procTable();
		return { server: treeCpu(t, [postmaster]), workers: treeCpu(t, workers.pids()), self: selfCpu(), machine: machineCpu() };
	};
	const sampleAt = async (k) => {
		const ts = nowMs();
		const row = { t: k };
		try {
			const r = (await sampler.query(statsSql, [sys.schema])).rows[0];
			Object.assign(row, { dead: +r.dead, live: +r.live, tbytes: +r.tbytes, ibytes: +r.ibytes, autovacuums: r.autovacuums });
		} catch (e) { onError(e); }
		const d = depths.filter(([t]) => t > (k - 1) * 1000 && t <= k * 1000).map(([, n]) => n);
		if (d.length) Object.assign(row, { depth: d.reduce((a, b) => a + b, 0) / d.length, depth_max: Math.max(...d) });
		row.sample_ms = nowMs() - ts;
		const c = cpuNow();
		if (cpuPrev) {
			// Shares of one core over the last second; a worker that exited takes its last second with it.
			const d = (k2) => Math.max(0, c[k2] - cpuPrev[k2]) * 100;
			Object.assign(row, { cpu_server: d("server"), cpu_workers: d("workers"), cpu_harness: d("self"), cpu_machine: d("machine") });
		}
		cpuPrev = c;
		samples.push(row);
		return row;
	};
	const cpu0 = cpuNow(), load0 = os.loadavg();
	cpuPrev = cpu0;
	// The depth, every 100 ms on the cell's clock, on a connection of its own: [ms since t0, jobs].
	const depths = [];
	let counting = true;
	const depthClient = await harnessClient(uri, "pressure-depth", onError);
	await depthClient.query("SET statement_timeout = '5s'");
	const counter = (async () => {
		for (let j = 1; counting; j++) {
			await sleep(Math.max(0, t0 + j * 100 - nowMs()));
			const r = await depthClient.query(sys.depthSql).catch((e) => { onError(e); return null; });
			if (r) depths.push([nowMs() - t0, r.rows[0].count]);
		}
	})();

	// ---- the phases
	const W = P.warm, B = P.base, S = P.stress;
	const stressAt = t0 + (W + B) * 1000, stressEnd = stressAt + S * 1000;
	let stopPressure = null, pressureOut = {}, baseThr = null, recoveredAt = null, k = 1;
	const phaseOf = (sec) => (sec < W ? "warm" : sec < W + B ? "base" : sec < W + B + S ? "stress" : "recover");
	for (; ; k++) {
		await sleep(Math.max(0, t0 + k * 1000 - nowMs()));
		if (stopPressure === null && nowMs() >= stressAt) {
			// The baseline's p99 depth, from its samples, before anything presses.
			const d = samples.filter((s) => s.t > W && s.t <= W + B && s.depth !== undefined).map((s) => s.depth).sort((a, b) => a - b);
			const p99 = pct(d, 99) ?? 0;
			baseThr = Math.max(p99 * P.margin, p99 + 2);
			log(`baseline depth p99 ${p99}, recovered at <= ${baseThr.toFixed(1)}; pressure ${cell} for ${S} s`);
			stopPressure = await pressures[cell](uri, ctx).catch((e) => bail(`pressure ${cell}: ${e.message}`));
		}
		if (stopPressure && !pressureOut.done && nowMs() >= stressEnd) {
			pressureOut = Object.assign(await stopPressure(), { done: true });
			log(`pressure ended; ${JSON.stringify(pressureOut)}`);
		}
		const row = await sampleAt(k);
		if (pressureOut.done) {
			const since = k - (W + B + S);
			const ok = row.depth !== undefined && row.depth <= baseThr;
			if (!ok) recoveredAt = null;
			else if (recoveredAt === null) recoveredAt = k;
			if (since >= P.recMax || (since >= P.recMin && recoveredAt !== null && k - recoveredAt >= P.hold)) break;
		}
	}
	produce = false;
	await producer;
	const tProduced = nowMs();
	counting = false;
	await counter;
	await depthClient.end().catch(() => {});
	const cpu1 = cpuNow(), load1 = os.loadavg();

	// ---- drain: every submitted job handled and the system's table empty of unfinished jobs
	const keys = new Set(subs.map((s) => s[0]));
	let left = -1, seen = null;
	for (const t = Date.now(); Date.now() - t < P.drain * 1000; await sleep(250)) {
		left = (await sampler.query(sys.depthSql).catch((e) => { onError(e); return { rows: [{ count: -1 }] }; })).rows[0].count;
		seen = workers.read();
		if (left === 0 && [...keys].every((x) => seen.has(x))) break;
	}
	const drainS = (nowMs() - tProduced) / 1000;
	await workers.stop();
	seen = workers.read();
	left = (await sampler.query(sys.depthSql).catch(() => ({ rows: [{ count: -1 }] }))).rows[0].count;
	await sampler.end().catch(() => {});
	await sub.close().catch(() => {});

	// ---- the seconds and the summary
	let lost = 0, dupRuns = 0, extra = 0;
	const lat = { warm: [], base: [], stress: [], recover: [] };
	const perSec = new Map();
	const sec = (t) => Math.floor((t - t0) / 1000);
	const bucket = (s) => { if (!perSec.has(s)) perSec.set(s, { offered: 0, handled: 0, lat: [] }); return perSec.get(s); };
	for (const [key, ts] of subs) {
		const runs = seen.get(key);
		const s = sec(ts);
		bucket(s).offered++;
		if (!runs) { lost++; continue; }
		dupRuns += runs.length - 1;
		const l = Math.min(...runs) - ts;
		bucket(s).lat.push(l);
		lat[phaseOf(s)].push(l);
	}
	for (const [key, runs] of seen) {
		if (key === probe) continue;
		if (!keys.has(key)) extra += runs.length;
		for (const t of runs) bucket(sec(t)).handled++;
	}
	for (const v of Object.values(lat)) v.sort((a, b) => a - b);
	const lines = [];
	for (const s of samples) {
		const b = perSec.get(s.t - 1) || { offered: 0, handled: 0, lat: [] };	// the second that ends at s.t
		b.lat.sort((x, y) => x - y);
		const f = (x, d) => (x === undefined || x === null ? "-" : Number(x).toFixed(d));
		lines.push([system, config, cell, s.t, phaseOf(s.t - 1), b.offered, b.handled, f(pct(b.lat, 50), 1), f(pct(b.lat, 99), 1),
			f(s.depth, 1), f(s.depth_max, 0), f(s.dead, 0), f(s.live, 0), f(s.tbytes, 0), f(s.ibytes, 0), f(s.autovacuums, 0), f(s.sample_ms, 1),
			f(s.cpu_server, 0), f(s.cpu_workers, 0), f(s.cpu_harness, 0), f(s.cpu_machine, 0)].join("\t"));
	}
	fs.writeFileSync(path.join(dir, "seconds.tsv"), lines.join("\n") + "\n");

	// Recovery, from the samples (the loop above decided when to stop with the same rule).
	const endS = W + B + S;
	const after = samples.filter((s) => s.t >= endS);
	let recovery = null;
	for (let i = 0; i < after.length; i++) {
		const run = after.slice(i).filter((s) => s.t < after[i].t + P.hold);
		if (run.length >= P.hold && run.every((s) => s.depth !== undefined && s.depth <= baseThr)) { recovery = after[i].t - endS; break; }
	}
	const inPhase = (ph) => samples.filter((s) => phaseOf(s.t - 1) === ph);
	const rateOf = (ph) => { const x = [...perSec].filter(([s]) => phaseOf(s) === ph).map(([, b]) => b.handled); return x.length ? x.reduce((a, b) => a + b, 0) / x.length : null; };
	const max = (a, f) => a.reduce((m, s) => (s[f] !== undefined && s[f] > m ? s[f] : m), 0);
	const produced = (tProduced - t0) / 1000, ncpu = os.cpus().length;
	const cpuS = (f) => cpu1[f] - cpu0[f];
	const other = Math.max(0, cpuS("machine") - cpuS("server") - cpuS("workers") - cpuS("self"));
	const out = {
		system, config, cell, rate: P.rate, stress_rate: cell === "high" ? P.rate * P.high : P.rate,
		submitted: subs.length, submit_errors: submitErrors, handled_jobs: subs.length - lost, lost, dup_runs: dupRuns, extra_runs: extra,
		left_in_db: left, completed_all: left === 0 && lost === 0, drain_s: drainS, seconds: produced,
		clean_p50: pct(lat.base, 50), clean_p99: pct(lat.base, 99), stress_p50: pct(lat.stress, 50), stress_p99: pct(lat.stress, 99),
		recover_p99: pct(lat.recover, 99), max_latency: Math.max(0, ...Object.values(lat).map((v) => v.length ? v[v.length - 1] : 0)),
		base_rate: rateOf("base"), stress_rate_handled: rateOf("stress"),
		base_depth_thr: baseThr, recovery_s: recovery, recover_window_s: Math.max(0, samples.length ? samples[samples.length - 1].t - endS : 0),
		max_depth: max(samples, "depth_max"), max_dead: max(samples, "dead"), max_bytes: Math.max(0, ...samples.map((s) => (s.tbytes || 0) + (s.ibytes || 0))),
		base_bytes: max(inPhase("base"), "tbytes") + max(inPhase("base"), "ibytes"), base_dead: max(inPhase("base"), "dead"),
		end_bytes: samples.length ? (samples[samples.length - 1].tbytes || 0) + (samples[samples.length - 1].ibytes || 0) : null,
		worker_exits: workers.exits.length, harness_errors: errors, first_error: firstError || firstSubmitError || "",
		cpu_server_us: (1e6 * cpuS("server")) / Math.max(1, subs.length), cpu_workers_us: (1e6 * cpuS("workers")) / Math.max(1, subs.length),
		other_load_pct: (100 * other) / (ncpu * produced), load_start: load0[0], load_end: load1[0],
		...pressureOut,
	};
	delete out.done;
	process.stdout.write(JSON.stringify(out) + "\n");
	process.exit(0);
}

async function main() {
	const [mode, ...a] = process.argv.slice(2);
	if (mode === "cell" && a.length === 5) return cellMain(...a);
	if (mode === "worker" && a.length === 4) return workerMain(...a);
	die("usage: pressure.js cell SYSTEM CONFIG CELL URI WORKDIR | worker SYSTEM CONFIG URI STAMPS");
}
main().catch((e) => die(e.stack || e.message));
