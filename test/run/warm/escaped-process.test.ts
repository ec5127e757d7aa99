// A warm worker that leaves a process in a session of its own (setsid): that process holds the
// worker's stdout and stderr open, but the worker's end is its exit — a stop returns at once, and
// gpuplan exits after "done" instead of living on until the escaped process does.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerProcess } from "../../../src/run/warm/worker-process.js";
import { ROOT, tempDir } from "../../helpers/cli.js";

/** Starts `sleep 60` in a new session (its pid in the file $1), says ready, answers every task. */
const WORKER_SH = `#!/bin/sh
setsid sleep 60 &
echo $! > "$1"
echo '{"ready": true}'
while read -r line; do
  id=$(printf '%s' "$line" | sed 's/.*"id": *"\\([^"]*\\)".*/\\1/')
  printf '{"id":"%s","ok":true}\\n' "$id"
done
echo "stdin closed, bye" >&2
printf 'no newline at the end'
`;

const MISSING = "/nonexistent/gpuplan-test-library.so";
/** No vendor library: a CPU-only machine, detected quickly. */
const NO_GPU = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
  NO_COLOR: "1",
  CI: "1",
};

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A temp dir with the worker script; the escaped sleep is killed after the test. */
function setup(): { dir: string; script: string; pidFile: string } {
  const { dir, cleanup } = tempDir();
  const script = join(dir, "worker.sh");
  const pidFile = join(dir, "escaped.pid");
  writeFileSync(script, WORKER_SH);
  cleanups.push(() => {
    try {
      process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    } catch {
      // Never started, or gone.
    }
    cleanup();
  });
  return { dir, script, pidFile };
}

/** `promise`, or "still waiting" after `ms`. */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | "still waiting"> =>
  Promise.race([
    promise,
    new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), ms).unref()),
  ]);

describe("a warm worker that leaves a setsid'd process behind", () => {
  it("stop() returns with the worker's exit, not after its grace periods, and its last output is read", async () => {
    const { dir, script, pidFile } = setup();
    const lines: string[] = [];
    const worker = new WorkerProcess({
      argv: ["sh", script, pidFile],
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      inheritFds: [],
      onLine: (stream, line) => {
        lines.push(`${stream}: ${line}`);
        return undefined;
      },
    });
    expect(await worker.ready(10_000)).toEqual({ type: "ready" });
    const reply = await worker.send(
      { id: "t1", pipeline: "p", step: "s", args: { matrix: {}, argv: [] } },
      10_000,
    );
    expect(reply).toMatchObject({ type: "reply", id: "t1", ok: true });
    // A grace period of 20 s each: waiting on the pipes (held by the escaped sleep) took all three.
    const exit = await within(worker.stop(20_000), 10_000);
    expect(exit).toEqual({ exitCode: 0, signal: null });
    expect(worker.alive).toBe(false);
    expect(lines).toEqual(["stderr: stdin closed, bye", "stdout: no newline at the end"]);
  }, 30_000);

  it("gpuplan run exits after its run is done while the escaped process lives on", async () => {
    const { dir, script, pidFile } = setup();
    writeFileSync(
      join(dir, "p.yaml"),
      `version: 1
name: escaped
registry: { platform_priority: [cpu] }
pipelines:
  - name: a
    steps:
      - id: seg
        memory: numpy
        worker: { run: [sh, ${JSON.stringify(script)}, ${JSON.stringify(pidFile)}] }
`,
    );
    const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), "run", "p.yaml", "--ui", "plain"], {
      cwd: dir,
      env: { ...process.env, ...NO_GPU },
      stdio: ["ignore", "ignore", "pipe"],
    });
    cleanups.push(() => child.kill("SIGKILL"));
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    const code = await within(new Promise<number | null>((r) => child.on("exit", (c) => r(c))), 15_000);
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/done: 1 ok/);
    // The escaped process still runs: it was not ours to end.
    expect(() => process.kill(Number(readFileSync(pidFile, "utf8")), 0)).not.toThrow();
  }, 30_000);
});
