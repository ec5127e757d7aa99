// A run on a terminal that goes away (an ssh connection dropped, a window closed): the shell that
// owned the terminal sends its jobs SIGHUP, as an interactive bash does when it hangs up. gpuplan
// stops the run as documented and ends as a hang-up does (status 129); Node 20 itself aborted as it
// exited (SIGABRT, 134, and a core file where core dumps are on), restoring a terminal no longer there.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/cli.js";
import { until } from "../helpers/until.js";

const MISSING = "/nonexistent/gpuplan-test-library.so";
const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");

/** A shell on a pty (script(1)) running `command` in cwd, with gpuplan's settings for a CPU run. */
function onTerminal(cwd: string, command: string): ChildProcess {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && k !== "CI" && !k.startsWith("CI_") && k !== "CONTINUOUS_INTEGRATION") env[k] = v;
  const terminal = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd,
    stdio: ["ignore", "ignore", "ignore"],
    env: {
      ...env,
      SHELL: "/bin/sh",
      TERM: "xterm",
      NO_COLOR: "1",
      GPUPLAN_NVML_LIBRARY: MISSING,
      GPUPLAN_CUDA_LIBRARY: MISSING,
      GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
      GPUPLAN_AMD_SMI_LIBRARY: MISSING,
      GPUPLAN_HIP_LIBRARY: MISSING,
      GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
    },
  });
  cleanups.push(() => terminal.kill("SIGKILL"));
  return terminal;
}

function pipelineFile(cwd: string, seconds: number): void {
  writeFileSync(
    join(cwd, "p.yaml"),
    `version: 1
name: p
registry: { platform_priority: [cpu] }
pipelines:
  - name: s
    steps:
      - { id: a, run: [sleep, "${seconds}"], memory: numpy }
`,
  );
}

function journalOf(cwd: string): string {
  const runs = join(cwd, ".gpuplan/runs");
  const [id] = existsSync(runs) ? readdirSync(runs) : [];
  return id === undefined ? "" : read(join(runs, id, "journal.jsonl"));
}

const gpuplanCommand = `'${process.execPath}' '${join(ROOT, "bin/gpuplan.js")}' run p.yaml --ui plain`;

describe.skipIf(!hasScript)("the terminal of a run goes away", () => {
  it("the run stops, its end recorded, and gpuplan ends as a hang-up does (129), not aborted", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const cwd = t.dir;
    pipelineFile(cwd, 60);
    // gpuplan in the background of a shell on a pty, both writing to it; the shell forwards the
    // hang-up to it and writes its exit status, which outlives the terminal.
    const status = join(cwd, "status");
    const terminal = onTerminal(
      cwd,
      [
        "ulimit -c 0",
        `${gpuplanCommand} & c=$!`,
        "trap 'kill -HUP $c' HUP",
        // The first wait is cut short by the trapped SIGHUP; the second has gpuplan's status.
        "wait $c; wait $c; echo $? > status",
      ].join("; "),
    );
    await until("the run to start", () => journalOf(cwd).includes('"type":"start"'));
    // The terminal goes away: its pty master is closed, the shell gets SIGHUP.
    terminal.kill("SIGKILL");
    await until("gpuplan's exit status", () => read(status).endsWith("\n"), 60_000);
    expect(read(status).trim()).toBe("129");
    expect(journalOf(cwd)).toMatch(/"type":"end"[^\n]*"interrupted":true/);
  }, 120_000);

  it("a run that outlives its terminal unhurt (no hang-up reached it) ends with its own status, 0", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const cwd = t.dir;
    pipelineFile(cwd, 3);
    // In a session of its own (as after `disown` or setsid), still writing to the terminal.
    const status = join(cwd, "status");
    const terminal = onTerminal(
      cwd,
      `ulimit -c 0; setsid sh -c "${gpuplanCommand.replaceAll('"', '\\"')}; echo \\$? > status" & sleep 30`,
    );
    await until("the run to start", () => journalOf(cwd).includes('"type":"start"'));
    terminal.kill("SIGKILL");
    await until("gpuplan's exit status", () => read(status).endsWith("\n"), 60_000);
    expect(read(status).trim()).toBe("0");
    expect(journalOf(cwd)).toMatch(/"type":"end"[^\n]*"interrupted":false/);
  }, 120_000);
});
