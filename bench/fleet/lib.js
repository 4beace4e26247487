// bench/fleet/lib.js: the measuring harness shared by the peer runners (gw.js,
// boss.js). A runner is an "adapter" object; this file does the rest the same
// way for every peer:
//
//   node RUNNER throughput URI N CONFIG   bulk-add N jobs, then time 2 worker
//                                         processes x 2 slots until all are done
//   node RUNNER latency URI COUNT RATE CONFIG
//                                         start the workers, submit COUNT jobs at
//                                         RATE/s, submit-to-handler-start p50/p99
//   node RUNNER sched URI CONFIG MIX      the scheduling rows (issue 36): bulk-add
//                                         the jobs of MIX (sched_mix below), time 2
//                                         worker processes x 2 slots with the
//                                         witness's handler (FLEET_WITNESS, FLEET_HOLD_US)
//   node RUNNER worker URI CONFIG MODE    (internal) one worker process
//
// Prints one JSON line on stdout. Every wait is bounded (FLEET_TIMEOUT seconds,
// default 600, for the whole run) and the worker processes are killed on any exit.
"use strict";

const fs = require("fs");
const { fork } = require("child_process");
const { performance } = require("perf_hooks");
const { Client } = require("pg");

const PROCS = 2; // worker processes
const SLOTS = 2; // concurrent jobs per process
const TIMEOUT_MS = 1000 * Number(process.env.FLEET_TIMEOUT || 600);

// Wall-clock milliseconds with sub-ms resolution, comparable across processes
// on this machine: the process's start time plus a monotonic offset.
const nowMs = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function die(msg) {
	process.stderr.write(`${process.argv[1].replace(/.*\//, "")}: ${msg}\n`);
	process.exit(1);
}

// Nearest-rank percentile of a sorted array.
function pct(sorted, p) {
	const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
	return sorted[i];
}

// CPU seconds used so far by the server: the postmaster, its live children and
// those it has reaped (/proc: utime, stime, cutime, cstime). With the workers'
// own CPU this gives CPU per job, a figure that other load on the machine
// disturbs much less than jobs/s. null where /proc or the data directory is
// not readable.
function serverCpu(dataDir) {
	try {
		const hz = 100; // USER_HZ: 100 on Linux whatever CONFIG_HZ is
		const pm = Number(fs.readFileSync(`${dataDir}/postmaster.pid`, "utf8").split("\n")[0]);
		const stat = (pid) => fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ");
		const f = stat(pm); // fields from "state" on: utime is index 11
		let ticks = +f[11] + +f[12] + +f[13] + +f[14];
		for (const d of fs.readdirSync("/proc")) {
			if (!/^\d+$/.test(d)) continue;
			try { const c = stat(d); if (+c[1] === pm) ticks += +c[11] + +c[12]; } catch (_) { /* exited */ }
		}
		return ticks / hz;
	} catch (_) {
		return null;
	}
}

// CPU seconds the whole machine has spent busy (not idle, not iowait), from
// /proc/stat: with the workers' and the server's CPU it shows how much of the
// run went to other load on the machine.
function machineCpu() {
	try {
		const f = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
		return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / 100; // user nice system irq softirq steal
	} catch (_) {
		return null;
	}
}

// ---- the scheduling rows (issue 36)
//
// A mix is the jobs bulk-added before a sched run, and what it waits for:
//   plain:N         N jobs, no priority, no key
//   prio:N          N jobs, priorities -2..2 mixed (i * 7 mod 5 - 2)
//   keys:N:K:L      N jobs over K keys k0..k(K-1) in turn, at most L running per key
//   both:N:K:L      keys:N:K:L with prio:N's priorities
//   hot:H:O         H jobs of key "hot" first, then O jobs of keys o0..o(O-1), at most 1
//                   running per key; the run ends when the O others are done
//   hotbase:O       the O others alone (hot's baseline)
// spec(i) gives job i's { i, prio, k } (prio 0 and k undefined where none); a peer puts k
// in the payload too, where the witness's handler reads it.
function schedMix(mix) {
	const p = mix.split(":"), num = (x) => {
		const v = Number(x);
		if (!Number.isInteger(v) || v < 1) die(`mix ${mix}: ${x} is not a positive integer`);
		return v;
	};
	const prio = (i) => ((i * 7) % 5) - 2;
	switch (p[0]) {
	case "plain": return { n: num(p[1]), limit: null, wait: num(p[1]), spec: (i) => ({ i, prio: 0 }) };
	case "prio": return { n: num(p[1]), limit: null, wait: num(p[1]), spec: (i) => ({ i, prio: prio(i) }) };
	case "keys": case "both": {
		const n = num(p[1]), k = num(p[2]), l = num(p[3]), pr = p[0] === "both";
		return { n, limit: l, wait: n, spec: (i) => ({ i, prio: pr ? prio(i) : 0, k: `k${i % k}` }) };
	}
	case "hot": {
		const h = num(p[1]), o = num(p[2]);
		return { n: h + o, limit: 1, wait: o, others: "o", spec: (i) => ({ i, prio: 0, k: i < h ? "hot" : `o${i - h}` }) };
	}
	case "hotbase": {
		const o = num(p[1]);
		return { n: o, limit: 1, wait: o, others: "o", spec: (i) => ({ i, prio: 0, k: `o${i}` }) };
	}
	default: die(`unknown mix ${mix}: plain:N prio:N keys:N:K:L both:N:K:L hot:H:O hotbase:O`);
	}
}

// CLOCK_MONOTONIC in microseconds (libuv's hrtime), the clock of bench/witness.c.
const monoUs = () => process.hrtime.bigint() / 1000n;

// The witness's handler: stamp, hold FLEET_HOLD_US (the job's length; setTimeout's
// resolution is 1 ms, so it holds at least that), stamp, one line "KEY START END"
// appended to FLEET_WITNESS with one write on an O_APPEND descriptor.
function witnessHandler(onDone) {
	const file = process.env.FLEET_WITNESS;
	if (!file) die("sched: FLEET_WITNESS (the witness file) is not set");
	const fd = fs.openSync(file, "a");
	const holdMs = Number(process.env.FLEET_HOLD_US || 1000) / 1000;
	return async (payload) => {
		const t0 = monoUs();
		if (holdMs > 0) await sleep(holdMs);
		fs.writeSync(fd, `${payload.k || "-"} ${t0} ${monoUs()}\n`);
		onDone(payload);
	};
}

// ---- worker process side -------------------------------------------------

async function workerMain(adapter, uri, config, mode) {
	// Die with the parent (no orphans if the driver is killed).
	process.on("disconnect", () => process.exit(0));
	let handled = 0, sent = 0, others = 0;
	// Throughput: report the count of handled jobs at most every 10 ms, so that
	// IPC costs nothing per job. Latency: report each job's start time at once.
	// Sched: the witness's handler; the mix's others (hot:H:O) counted apart.
	const mix = mode.startsWith("sched=") ? schedMix(mode.slice(6)) : null;
	const onJob = mode === "latency"
		? (payload) => { const t = nowMs(); handled++; process.send({ lat: [payload.t, t] }); }
		: mix ? witnessHandler((p) => { handled++; if (mix.others && p.k && p.k.startsWith(mix.others)) others++; })
		: () => { handled++; };
	const tick = setInterval(() => {
		if (handled !== sent) { sent = handled; process.send({ handled, others }); }
	}, 10);
	tick.unref();
	const w = await adapter.prepareWorker(uri, config, SLOTS, onJob, undefined, mix ? { limit: mix.limit } : null);
	process.send({ ready: true });
	await new Promise((r) => process.once("message", r)); // "go"
	const cpu0 = process.cpuUsage();
	await w.start();
	process.send({ started: true });
	await new Promise((r) => process.once("message", r)); // "stop"
	clearInterval(tick);
	const cpu = process.cpuUsage(cpu0);
	process.send({ handled, cpu: (cpu.user + cpu.system) / 1e6 });
	// A peer's graceful stop can hang on in-flight work; bound it.
	await Promise.race([w.stop(), sleep(5000)]);
	process.exit(0);
}

// ---- driver side ------------------------------------------------------------

const children = new Set();
function killChildren() {
	for (const c of children) { try { c.kill("SIGKILL"); } catch (_) { /* gone */ } }
}
process.on("exit", killChildren);
for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(s, () => { killChildren(); process.exit(1); });

// Start the worker processes and wait until each is loaded and connected.
async function spawnWorkers(script, uri, config, mode, onMsg) {
	const procs = [];
	for (let i = 0; i < PROCS; i++) {
		// Workers' stdout (graphile-worker logs to the console) is dropped unless
		// FLEET_WORKER_LOG is set; stderr goes through.
		const c = fork(script, ["worker", uri, config, mode], {
			stdio: ["ignore", process.env.FLEET_WORKER_LOG ? "inherit" : "ignore", "inherit", "ipc"],
		});
		children.add(c);
		c.handled = 0;
		c.on("message", (m) => {
			if (m.handled !== undefined) c.handled = m.handled;
			if (m.others !== undefined) c.others = m.others;
			if (m.cpu !== undefined) c.cpu = m.cpu;
			if (m.ready) c.ready = true;
			if (m.started) c.started = true;
			onMsg && onMsg(m);
		});
		c.on("exit", (code, sig) => {
			children.delete(c);
			if (!c.stopping) die(`worker process exited early (${code ?? sig})`);
		});
		procs.push(c);
	}
	await waitFor(() => procs.every((c) => c.ready), 60000, "worker processes ready");
	return procs;
}

async function stopWorkers(procs) {
	for (const c of procs) { c.stopping = true; c.send("stop"); }
	const t = Date.now();
	while (procs.some((c) => c.exitCode === null && c.signalCode === null) && Date.now() - t < 10000) await sleep(20);
	killChildren();
}

async function waitFor(cond, ms, what, every = 5) {
	const t = Date.now();
	while (!(await cond())) {
		if (Date.now() - t > ms) die(`timed out after ${ms} ms waiting for ${what}`);
		await sleep(every);
	}
}

async function throughput(adapter, script, uri, n, config) {
	await adapter.setup(uri);
	const tAdd = nowMs();
	await adapter.bulkAdd(uri, n);
	const addS = (nowMs() - tAdd) / 1000;
	const db = new Client({ connectionString: uri });
	await db.connect();
	// Analyze after the bulk insert, as autovacuum would soon do on its own, so
	// that the first claims do not run on the statistics of an empty table; and
	// checkpoint, so that the fill's dirty pages are not written during the run.
	await db.query("ANALYZE");
	await db.query("CHECKPOINT");
	const left0 = await adapter.left(db);
	if (left0 !== n) die(`expected ${n} queued jobs, found ${left0}`);

	const dataDir = (await db.query("SHOW data_directory")).rows[0].data_directory;
	const tSpawn = nowMs();
	const procs = await spawnWorkers(script, uri, config, "throughput");
	// Node's start, loading the peer's module and connecting are not timed:
	// they are reported apart (startup_s), as they are no part of a claim loop.
	const startupS = (nowMs() - tSpawn) / 1000;
	const handled = () => procs.reduce((s, c) => s + c.handled, 0);
	const srv0 = serverCpu(dataDir), mach0 = machineCpu();
	const t0 = nowMs();
	for (const c of procs) c.send("go");
	// Cheap wait on the workers' own counts first, then poll the peer's table
	// every 5 ms until it says every job is finished: the end of the run is
	// when the database agrees, not when the last handler returned.
	await waitFor(() => handled() >= n, TIMEOUT_MS, `${n} jobs handled (have ${handled()})`, 5);
	await waitFor(async () => (await adapter.left(db)) === 0, 60000, "jobs completed in the database", 5);
	const t1 = nowMs();
	const srv1 = serverCpu(dataDir), mach1 = machineCpu();
	await stopWorkers(procs);
	await db.end();
	// Workers' CPU runs to their stop message, a few ms past t1.
	const wcpu = procs.every((c) => c.cpu !== undefined) ? procs.reduce((s, c) => s + c.cpu, 0) : null;
	const total = handled();
	if (total !== n) die(`handlers ran ${total} times for ${n} jobs`);
	const seconds = (t1 - t0) / 1000;
	return {
		system: adapter.system, config, jobs: n, seconds, jobs_per_s: n / seconds, bulk_add_s: addS, startup_s: startupS,
		worker_cpu_s: wcpu, server_cpu_s: srv0 === null || srv1 === null ? null : srv1 - srv0,
		machine_cpu_s: mach0 === null ? null : mach1 - mach0,
	};
}

// A sched run: as throughput, with the mix's jobs and the witness's handler. Ends when
// every job is finished in the peer's table, or for hot:H:O when the O others have run
// (the hot key's jobs are left waiting); t0_us is the go, on the witness's clock.
async function sched(adapter, script, uri, config, mixName) {
	const mix = schedMix(mixName);
	if (mix.limit > 1 && !adapter.groupLimitN) die(`${adapter.system} has no per-key limit above 1`);
	await adapter.setup(uri);
	const tAdd = nowMs();
	await adapter.bulkAddSched(uri, mix.n, mix.spec);
	const addS = (nowMs() - tAdd) / 1000;
	const db = new Client({ connectionString: uri });
	await db.connect();
	await db.query("ANALYZE");
	await db.query("CHECKPOINT");
	const left0 = await adapter.left(db);
	if (left0 !== mix.n) die(`expected ${mix.n} queued jobs, found ${left0}`);
	const dataDir = (await db.query("SHOW data_directory")).rows[0].data_directory;
	const tSpawn = nowMs();
	const procs = await spawnWorkers(script, uri, config, `sched=${mixName}`);
	const startupS = (nowMs() - tSpawn) / 1000;
	const count = () => procs.reduce((s, c) => s + (mix.others ? c.others || 0 : c.handled), 0);
	const srv0 = serverCpu(dataDir), mach0 = machineCpu();
	const t0us = monoUs();
	const t0 = nowMs();
	for (const c of procs) c.send("go");
	await waitFor(() => count() >= mix.wait, TIMEOUT_MS, `${mix.wait} jobs handled (have ${count()})`, 5);
	if (!mix.others) await waitFor(async () => (await adapter.left(db)) === 0, 60000, "jobs completed in the database", 5);
	const t1 = nowMs();
	const srv1 = serverCpu(dataDir), mach1 = machineCpu();
	await stopWorkers(procs);
	await db.end();
	const wcpu = procs.every((c) => c.cpu !== undefined) ? procs.reduce((s, c) => s + c.cpu, 0) : null;
	const total = procs.reduce((s, c) => s + c.handled, 0);
	if (!mix.others && total !== mix.n) die(`handlers ran ${total} times for ${mix.n} jobs`);
	const seconds = (t1 - t0) / 1000;
	return {
		system: adapter.system, config, mix: mixName, jobs: mix.wait, seconds, jobs_per_s: mix.wait / seconds,
		handled: total, t0_us: String(t0us), bulk_add_s: addS, startup_s: startupS,
		worker_cpu_s: wcpu, server_cpu_s: srv0 === null || srv1 === null ? null : srv1 - srv0,
		machine_cpu_s: mach0 === null ? null : mach1 - mach0,
	};
}

async function latency(adapter, script, uri, count, rate, config) {
	await adapter.setup(uri);
	const lats = [];
	const procs = await spawnWorkers(script, uri, config, "latency", (m) => {
		if (m.lat) lats.push(m.lat[1] - m.lat[0]);
	});
	for (const c of procs) c.send("go");
	await waitFor(() => procs.every((c) => c.started), 30000, "workers started");
	// Let the workers settle into their idle state (LISTEN, first empty poll).
	await sleep(1000);
	const sub = await adapter.submitter(uri);
	// One job every 1000/rate ms on a fixed schedule (no drift): the submit time
	// is taken just before the peer's own add call, and travels in the payload.
	const gap = 1000 / rate;
	const tStart = nowMs();
	for (let i = 0; i < count; i++) {
		const due = tStart + i * gap;
		const d = due - nowMs();
		if (d > 0) await sleep(d);
		await sub.submit({ i, t: nowMs() });
	}
	await waitFor(() => lats.length >= count, 30000, `${count} handler starts (have ${lats.length})`, 10);
	await sub.close();
	await stopWorkers(procs);
	if (lats.length !== count) die(`handlers started ${lats.length} times for ${count} jobs`);
	lats.sort((a, b) => a - b);
	return {
		system: adapter.system, config, jobs: count, rate,
		p50_ms: pct(lats, 50), p99_ms: pct(lats, 99), max_ms: lats[lats.length - 1],
	};
}

async function main(adapter, script) {
	const [mode, uri, ...rest] = process.argv.slice(2);
	if (!uri) die("usage: throughput URI N CONFIG | latency URI COUNT RATE CONFIG | sched URI CONFIG MIX | worker URI CONFIG MODE");
	if (mode === "worker") return workerMain(adapter, uri, rest[0], rest[1]);
	const overall = setTimeout(() => die(`gave up after ${TIMEOUT_MS} ms`), TIMEOUT_MS);
	overall.unref();
	let r;
	if (mode === "throughput") {
		const [n, config] = rest;
		if (!adapter.configs[config]) die(`unknown config ${config}; have ${Object.keys(adapter.configs)}`);
		r = await throughput(adapter, script, uri, Number(n), config);
	} else if (mode === "latency") {
		const [count, rate, config] = rest;
		if (!adapter.configs[config]) die(`unknown config ${config}; have ${Object.keys(adapter.configs)}`);
		r = await latency(adapter, script, uri, Number(count), Number(rate), config);
	} else if (mode === "sched") {
		const [config, mix] = rest;
		if (!adapter.configs[config]) die(`unknown config ${config}; have ${Object.keys(adapter.configs)}`);
		if (!adapter.bulkAddSched) die(`${adapter.system}: no scheduling rows`);
		r = await sched(adapter, script, uri, config, mix);
	} else die(`unknown mode ${mode}`);
	process.stdout.write(JSON.stringify(r) + "\n");
	process.exit(0);
}

module.exports = { main, nowMs, sleep, die, schedMix };
