// A step whose ending was already its own when the run was interrupted — it exited, or ran past its
// timeout — and whose processes gpuplan was still ending (the kill grace): the interrupt hurries
// that end, but does not make the attempt interrupted. Recorded so, a step that exited 0 ran again
// on --resume (its GPU hours and side effects twice), and a timeout was not said to be one (both
// run again on --resume; only the failure's cause and its hint were lost).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";

const MISSING = "/nonexistent/gpuplan-test-library.so";
/** No vendor library: live detection sees a CPU-only machine, quickly. */
const NO_GPU = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
  CI: "1",
};

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** A shell loop that notes each SIGTERM it gets in got.txt and goes on: only SIGKILL ends it. */
const STUBBORN = `trap 'echo got >> got.txt' TERM; while :; do sleep 0.1; done`;

const lines = (path: string) =>
  existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];

async function until(what: string, ready: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Run `p.yaml` in `cwd` with a kill grace that never ends by itself; once gpuplan's own SIGTERM
 * has reached the stubborn process (got.txt's first line), SIGTERM gpuplan, wait until it has
 * forwarded that to the step (the second line), and SIGTERM it again to kill at once.
 */
async function interruptDuringGrace(
  cwd: string,
): Promise<{ code: number | null; stderr: string; runDir: string }> {
  const child = spawn(
    process.execPath,
    [join(ROOT, "bin/gpuplan.js"), "run", "p.yaml", "--ui", "plain", "--kill-grace", "10m"],
    { cwd, env: { ...process.env, ...NO_GPU, NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] },
  );
  cleanups.push(() => child.kill("SIGKILL"));
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  const got = join(cwd, "got.txt");
  await until("the step's grace to begin", () => lines(got).length >= 1);
  child.kill("SIGTERM");
  await until("the interrupt to reach the step", () => lines(got).length >= 2);
  child.kill("SIGTERM");
  const code = await exited;
  const [id] = readdirSync(join(cwd, ".gpuplan/runs"));
  return { code, stderr, runDir: join(cwd, ".gpuplan/runs", id!) };
}

const journalSteps = (runDir: string) =>
  lines(join(runDir, "journal.jsonl"))
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "step");

describe("an interrupt during the kill grace of a step whose ending was already its own", () => {
  it("a step that exited 0 leaving a process behind is ok, and --resume does not run it again", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const cwd = t.dir;
    writeFileSync(join(cwd, "a.sh"), `echo ran >> ran-a.txt\nsh -c "${STUBBORN}" &\nexit 0\n`);
    writeFileSync(
      join(cwd, "p.yaml"),
      [
        "version: 1",
        "pipelines:",
        "  - name: p",
        "    steps:",
        "      - { id: a, run: [sh, a.sh] }",
        "      - { id: b, run: [sh, -c, 'echo ran >> ran-b.txt'] }",
        "",
      ].join("\n"),
    );
    const { code, stderr, runDir } = await interruptDuringGrace(cwd);
    expect(code, stderr).toBe(143);
    expect(journalSteps(runDir).map((e) => [e.step, e.status, e.exitCode])).toEqual([["a", "ok", 0]]);

    const resumed = gpuplan(["run", "--resume", runDir, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(lines(join(cwd, "ran-a.txt"))).toHaveLength(1);
    expect(lines(join(cwd, "ran-b.txt"))).toHaveLength(1);
  }, 90_000);

  it("a step that ran past its timeout and was still being ended is timed out, not interrupted", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const cwd = t.dir;
    writeFileSync(
      join(cwd, "p.yaml"),
      [
        "version: 1",
        "pipelines:",
        "  - name: p",
        "    steps:",
        `      - { id: a, timeout: 1s, run: [sh, -c, "${STUBBORN}"] }`,
        "",
      ].join("\n"),
    );
    const { code, stderr, runDir } = await interruptDuringGrace(cwd);
    expect(code, stderr).toBe(143);
    expect(journalSteps(runDir).map((e) => [e.step, e.status])).toEqual([["a", "timeout"]]);
    const events = lines(join(runDir, "events.jsonl")).map((l) => JSON.parse(l));
    expect(events.filter((e) => e.event === "gpu.step.timeout")).toHaveLength(1);
    expect(events.find((e) => e.event === "gpu.step.end")).toMatchObject({ status: "timeout" });
    expect(events.at(-1)).toMatchObject({ event: "run.end", status: "interrupted" });
  }, 90_000);
});
