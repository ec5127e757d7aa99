/**
 * A step's orphan that nobody reaps is a zombie in the step's process group, and kill(2) answers
 * for a zombie as for a live process. Under a container's PID 1 that never waits (or a subreaper
 * that does not), and for a second and more under some sandboxes' PID 1, that read as "the step's
 * group still runs": a step that timed out waited out its kill grace plus 2 s before it was
 * reported, and a step that exited 0 was said to have left processes behind and made to wait too.
 * Here gpuplan runs under a child subreaper that never reaps, as such a PID 1 would.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Run gpuplan with `args` in `cwd` under a subreaper that never reaps what is handed to it. */
function underNonReapingParent(cwd: string, args: string[]): { status: number | null; stderr: string } {
  const wrapper = join(cwd, "no-reaper.cjs");
  writeFileSync(
    wrapper,
    `const koffi = require(${JSON.stringify(join(ROOT, "node_modules/koffi"))});
const prctl = koffi.load("libc.so.6").func("int prctl(int option, ...)");
// PR_SET_CHILD_SUBREAPER: the steps' orphans become this process's children, and it never waits
// for them (spawnSync waits for gpuplan's pid alone).
if (prctl(36, "unsigned long", 1) !== 0) process.exit(99);
const r = require("node:child_process").spawnSync(process.execPath, ${JSON.stringify([
      join(ROOT, "bin/gpuplan.js"),
      ...args,
    ])}, { cwd: ${JSON.stringify(cwd)}, encoding: "utf8", timeout: 30000 });
process.stdout.write(JSON.stringify({ status: r.status, stderr: r.stderr }));
`,
  );
  const r = spawnSync(process.execPath, [wrapper], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
    timeout: 40_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

function endOf(events: string): { status: string; durationMs: number } {
  const lines = readFileSync(events, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  return lines.find((e) => e.event === "gpu.step.end");
}

describe.runIf(process.platform === "linux")("a step's unreaped orphan", () => {
  it.each([
    // The orphan exits at once and stays a zombie; the step ends at its 1 s timeout.
    [
      "a timed-out step is reported once its live processes are gone",
      ["sh", "-c", "sleep 0.1 & exec sleep 30"],
      "1s",
      "timeout",
    ],
    // The orphan is a zombie by the time the step exits 0.
    [
      "a step that exited 0 has left nothing running behind",
      ["sh", "-c", "sleep 0.1 & exec sleep 0.5"],
      null,
      "ok",
    ],
  ])("%s", (_name, run, timeout, status) => {
    const cwd = mkdtempSync(join(tmpdir(), "gpuplan-zombie-"));
    dirs.push(cwd);
    const step = { id: "s", run, memory: "numpy", ...(timeout && { timeout }) };
    writeFileSync(
      join(cwd, "p.yaml"),
      `version: 1\nname: z\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: a\n    steps:\n      - ${JSON.stringify(step)}\n`,
    );
    const r = underNonReapingParent(cwd, [
      "run",
      "p.yaml",
      "--ui",
      "plain",
      "--kill-grace",
      "3s",
      "--events",
      "events.jsonl",
    ]);
    expect(r.status, r.stderr).toBe(status === "ok" ? 0 : 1);
    const end = endOf(join(cwd, "events.jsonl"));
    expect(end.status).toBe(status);
    // Without looking past zombies: the kill grace (3 s) and 2 s more.
    expect(end.durationMs).toBeLessThan(3000);
    expect(r.stderr).not.toContain("still running");
  });
});
