// gpuplan as PID 1 (a container's entry point without --init; here a pid namespace of its own,
// `unshare --pid`) is the parent of every orphan of the steps, and nothing else reaps them: each
// stayed a zombie until the namespace ended. The last step counts the namespace's zombies.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

const canUnshare =
  process.platform === "linux" &&
  spawnSync("unshare", ["--fork", "--pid", "--mount-proc", "true"], { encoding: "utf8" }).status === 0;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ORPHANS = ["sh", "-c", "sleep 0.1 & exec sleep 0.3"];
const PIPELINE = [
  "version: 1",
  "name: pid1",
  "registry: { platform_priority: [cpu], max_parallel_pipelines: 2 }",
  "pipelines:",
  "  - name: a",
  "    steps:",
  // Each exits 0 with a zombie child (its background job), which becomes PID 1's.
  `      - { id: quiet, run: ${JSON.stringify(ORPHANS)}, memory: numpy }`,
  `      - { id: again, run: ${JSON.stringify(ORPHANS)}, memory: numpy }`,
  // After b's step was killed (at 1 s).
  `      - { id: count, run: ["sh", "-c", "sleep 2; grep -l '^State:.Z' /proc/[0-9]*/status | wc -l"], memory: numpy }`,
  "  - name: b",
  "    steps:",
  // Killed at its timeout with two children, which die with it and become PID 1's.
  `      - { id: killed, run: ["sh", "-c", "sleep 30 & sleep 30 & exec sleep 30"], memory: numpy, timeout: 1s }`,
  "",
].join("\n");

describe.skipIf(!canUnshare)("gpuplan as PID 1", () => {
  it("reaps the orphans its steps leave: none is a zombie when the last step looks", () => {
    const cwd = mkdtempSync(join(tmpdir(), "gpuplan-pid1-"));
    dirs.push(cwd);
    writeFileSync(join(cwd, "p.yaml"), PIPELINE);
    const r = spawnSync(
      "unshare",
      ["--fork", "--pid", "--mount-proc", process.execPath, join(ROOT, "bin/gpuplan.js"), "run", "p.yaml"],
      { cwd, encoding: "utf8", timeout: 60_000, env: { ...process.env, CI: "1", NO_COLOR: "1" } },
    );
    expect(r.stderr).toMatch(/\[a\/count cpu\] \d+/);
    // Without reaping: 4 (one per quiet step, two of the killed one).
    expect(r.stderr).toContain("[a/count cpu] 0");
    expect(r.stderr).toMatch(/\[b\/killed cpu\] failed: timed out/);
    const [run] = readdirSync(join(cwd, ".gpuplan/runs"));
    const events = readFileSync(join(cwd, ".gpuplan/runs", run!, "events.jsonl"), "utf8");
    expect(events).toMatch(
      /"gpu\.step\.end","run":"[^"]+","pipeline":"a","step":"count","device":"cpu","status":"ok"/,
    );
  });
});
