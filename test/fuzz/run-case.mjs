// One fuzz input through the real CLI (`node bin/gpuplan.js compile …`), with its wall time, CPU
// time and peak RSS, judged against what #11 asks of every input: no crash (no internal error,
// no stack trace, no signal), located problems, no raw control characters on a terminal, well
// under 5 s of CPU and 1 GB of memory.
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url);
const BIN = new URL("bin/gpuplan.js", ROOT).pathname;
const PROBE = new URL("bench/peak-rss.mjs", ROOT).href;

/** Seconds of CPU and bytes of memory an input may cost (#11). */
export const LIMITS = { cpuMs: 5000, rssMb: 1024 };
/** A run still going after this long is a hang (it is killed). */
const HANG_MS = 120_000;
/** Output kept per run: enough to judge it, bounded so a flood cannot exhaust the campaign. */
const KEEP = 64 * 1024 * 1024;

// Anything a terminal acts on: C0 controls but the newline, DEL, C1 controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const CRASH =
  /internal error|this is a bug in gpuplan|\n\s+at .+:\d+:\d+\)?\n|TypeError|ReferenceError|RangeError|FATAL ERROR|Allocation failed/;

/**
 * Runs one input in `dir`; `format` "json" checks every problem's location, "human" checks what
 * reaches a terminal.
 */
export function runCase(input, dir, format) {
  const pipeline = join(dir, `case-${input.id}.yaml`);
  writeFileSync(pipeline, input.pipeline);
  const inventory = input.inventory ? join(dir, `case-${input.id}-inventory.yaml`) : undefined;
  if (inventory) writeFileSync(inventory, input.inventory);
  const rssFile = join(dir, `case-${input.id}.rss`);
  const args = [
    "--import",
    PROBE,
    BIN,
    "compile",
    pipeline,
    ...(inventory ? ["--inventory", inventory] : ["--target", input.target]),
    "--format",
    format,
  ];
  const env = { ...process.env, GPUPLAN_BENCH_RSS_FILE: rssFile, NO_COLOR: "1" };
  delete env.FORCE_COLOR;
  // Node parses this CA bundle at every start; it is no part of what compile costs.
  delete env.NODE_EXTRA_CA_CERTS;
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    const out = { stdout: [], stderr: [], size: 0 };
    for (const name of ["stdout", "stderr"]) {
      child[name].on("data", (chunk) => {
        if (out.size < KEEP) out[name].push(chunk);
        out.size += chunk.length;
      });
    }
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, HANG_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
      let usage;
      try {
        usage = JSON.parse(readFileSync(rssFile, "utf8"));
      } catch {
        usage = undefined;
      }
      const result = {
        id: input.id,
        category: input.category,
        describe: input.describe,
        format,
        exitCode: code,
        signal,
        wallMs,
        cpuMs: usage ? (usage.user + usage.system) / 1000 : Number.NaN,
        rssMb: usage ? usage.maxRSS / 1024 : Number.NaN,
        stdout: Buffer.concat(out.stdout).toString("utf8"),
        stderr: Buffer.concat(out.stderr).toString("utf8"),
        hung,
        truncated: out.size > KEEP,
      };
      result.violations = judge(result, [pipeline, inventory].filter(Boolean));
      for (const f of [pipeline, inventory, rssFile]) if (f) rmSync(f, { force: true });
      resolve(result);
    });
  });
}

/** What is wrong with a run, as short phrases; empty when it did what #11 asks. */
export function judge(r, files) {
  const v = [];
  if (r.hung) v.push(`hang: killed after ${HANG_MS / 1000} s`);
  else if (r.signal) v.push(`crash: signal ${r.signal}`);
  else if (![0, 1, 2].includes(r.exitCode)) v.push(`crash: exit ${r.exitCode}`);
  const crash = CRASH.exec(`${r.stdout}\n${r.stderr}`);
  if (crash) v.push(`crash: ${crash[0].trim().slice(0, 80)}`);
  if (!r.hung && !r.signal && Number.isNaN(r.cpuMs))
    v.push("crash: no resource usage (did not exit normally)");
  if (r.cpuMs > LIMITS.cpuMs) v.push(`slow: ${(r.cpuMs / 1000).toFixed(1)} s of CPU`);
  if (r.rssMb > LIMITS.rssMb) v.push(`memory: ${r.rssMb.toFixed(0)} MB`);
  // Output past what the campaign keeps (a legal 69,000-pipeline plan is 92 MB) cannot be parsed here.
  if (r.format === "json" && r.exitCode !== 2 && !r.truncated) {
    let report;
    try {
      report = JSON.parse(r.stdout);
    } catch {
      v.push("stdout is not the JSON report");
    }
    for (const p of report?.problems ?? []) {
      if (files.includes(p.file) && !(p.line >= 1 && p.column >= 1)) v.push(`unlocated: ${p.code}`);
    }
  }
  if (r.format === "human") {
    if (RAW_CONTROL.test(r.stderr) || RAW_CONTROL.test(r.stdout))
      v.push("raw control character on the terminal");
    for (const f of files) {
      const escaped = f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      if (new RegExp(`^${escaped} {2}(error|warning)`, "m").test(r.stderr))
        v.push("unlocated problem in human output");
    }
  }
  return v;
}
