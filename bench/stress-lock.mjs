// The slot lock under attack, against the built code (dist/run/lock; `npm run build` first):
//   1. contention: N processes × G GPUs × S slots, each running pipelines with mixed memory
//      reservations and now and then an exclusive step; counted outside the lock under test
//      (a counter file per GPU under its own flock): over-subscriptions, exclusive overlaps,
//      memory-budget violations, deadlocks (a process that does not finish in time);
//   2. kill -9 storm: K holders (each with a child that inherited its slot, as a step does) and
//      waiters on the same GPUs, killed at random — holders, their children and waiters in line;
//      then the slots and lines left held (stale), and whether every GPU is free at once.
//   node bench/stress-lock.mjs [--procs 32] [--gpus 3] [--slots 4] [--rounds 20] [--kills 150]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = join(fileURLToPath(import.meta.url), "../..");
const worker = join(root, "fixtures/run/lock/worker.mjs");
const { values } = parseArgs({
  options: {
    procs: { type: "string", default: "32" },
    gpus: { type: "string", default: "3" },
    slots: { type: "string", default: "4" },
    rounds: { type: "string", default: "20" },
    kills: { type: "string", default: "150" },
  },
});
const procs = Number(values.procs);
const slots = Number(values.slots);
const rounds = Number(values.rounds);
const kills = Number(values.kills);
const BUDGET = 1000;
const gpus = Array.from({ length: Number(values.gpus) }, (_, n) => ({
  uuid: `GPU-${String(n).padStart(8, "0")}-stress-0000-0000-000000000000`,
  name: `cuda:${n}`,
  slots,
  budget: BUDGET,
}));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const { createSlotLock } = await import(pathToFileURL(join(root, "dist/run/lock/index.js")).href);

function start(config) {
  const child = spawn(process.execPath, [worker, JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    err += d;
  });
  const done = new Promise((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, out, err })),
  );
  return { child, done, line: () => out.split("\n")[0] };
}

const base = mkdtempSync(join(tmpdir(), "gpuplan-stress-lock-"));
try {
  // 1. Contention.
  const dir = join(base, "locks");
  const counterDir = join(base, "counters");
  mkdirSync(counterDir);
  const t0 = performance.now();
  const runs = Array.from({ length: procs }, (_, id) =>
    start({ mode: "contend", id, dir, counterDir, gpus, iterations: rounds, exclusiveEvery: 5 }),
  );
  const deadline = sleep(120_000).then(() => "timeout");
  const results = await Promise.all(runs.map((r) => Promise.race([r.done, deadline])));
  const seconds = (performance.now() - t0) / 1000;
  let deadlocks = 0;
  const breaches = [];
  let upgrades = 0;
  for (const [i, r] of results.entries()) {
    if (r === "timeout" || r.code !== 0) {
      deadlocks++;
      runs[i].child.kill("SIGKILL");
      continue;
    }
    const parsed = JSON.parse(r.out);
    breaches.push(...parsed.breaches);
    upgrades += parsed.upgrades;
  }
  const over = breaches.filter((b) => b.startsWith("shared")).length;
  const overlaps = breaches.filter((b) => b.startsWith("exclusive")).length;
  const memory = breaches.filter((b) => b.startsWith("reservations")).length;
  console.log(
    `contention: ${procs} processes × ${gpus.length} GPUs × ${slots} slots, ${procs * rounds} pipelines (${upgrades} exclusive steps), mixed reservations (15% / 70% of the budget) in ${seconds.toFixed(1)} s`,
  );
  console.log(
    `  over-subscriptions ${over}, exclusive overlaps ${overlaps}, memory-budget violations ${memory}, deadlocks ${deadlocks}`,
  );

  // 2. kill -9 storm.
  const stormDir = join(base, "storm");
  const victims = [];
  let killed = 0;
  const t1 = performance.now();
  for (let id = 0; killed < kills; id++) {
    // Keep about twice as many victims as slots alive: holders and waiters in line.
    while (victims.filter((v) => !v.dead).length < gpus.length * slots * 2) {
      const v = start({
        mode: "victim",
        id,
        dir: stormDir,
        gpus,
        gpu: id % gpus.length,
        reservation: Math.random() < 0.2 ? BUDGET * 0.7 : BUDGET * 0.15,
      });
      v.dead = false;
      victims.push(v);
      id++;
    }
    await sleep(5 + Math.random() * 20);
    const alive = victims.filter((v) => !v.dead);
    const v = alive[Math.floor(Math.random() * alive.length)];
    const holder = v.line() ? JSON.parse(v.line()) : null;
    v.child.kill("SIGKILL");
    // Half the time the step dies too; else it lives on a while, holding the slot, and dies later.
    if (holder) {
      const die = () => {
        try {
          process.kill(holder.childPid, "SIGKILL");
        } catch {}
      };
      if (Math.random() < 0.5) die();
      else setTimeout(die, Math.random() * 200);
    }
    v.dead = true;
    killed++;
  }
  for (const v of victims) {
    try {
      process.kill(-v.child.pid, "SIGKILL");
    } catch {}
    v.child.kill("SIGKILL");
    const holder = v.line() ? JSON.parse(v.line()) : null;
    if (holder)
      try {
        process.kill(holder.childPid, "SIGKILL");
      } catch {}
  }
  await Promise.all(victims.map((v) => v.done));
  await sleep(400);
  const lock = createSlotLock({ dir: stormDir });
  const state = await lock.inspectGpus();
  const stale = state.reduce((n, g) => n + g.slots.length, 0);
  const staleWaiters = state.reduce((n, g) => n + g.waiters, 0);
  let freeAtOnce = 0;
  for (const g of gpus) {
    const lease = await lock
      .acquire({
        uuid: g.uuid,
        gpu: g.name,
        maxPipelines: g.slots,
        holder: { pid: process.pid, run: "stress", pipeline: "after", step: null, since: "" },
        wait: false,
      })
      .catch(() => null);
    if (lease) {
      await lease.upgrade({ wait: false }).then(
        () => freeAtOnce++,
        () => {},
      );
      lease.release();
    }
  }
  console.log(
    `kill -9 storm: ${kills} kills of ${victims.length} holders and waiters (${gpus.length} GPUs × ${slots} slots) in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
  );
  console.log(
    `  stale slots ${stale}, stale waiters ${staleWaiters}, GPUs free to an exclusive step at once ${freeAtOnce} of ${gpus.length}`,
  );
  process.exitCode =
    over + overlaps + memory + deadlocks + stale + staleWaiters === 0 && freeAtOnce === gpus.length ? 0 : 1;
} finally {
  rmSync(base, { recursive: true, force: true });
}
