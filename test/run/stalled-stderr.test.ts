// A reader of stderr that stops reading (a pipe read later, a stalled log collector, a pager left
// unscrolled) while a run is stopped: the run's end is recorded, and the summary waits for the
// reader as any writer's would — but a signal still ends gpuplan. Node's stream held the process
// until the reader read, and neither Ctrl-C again nor SIGTERM could end it: only SIGKILL.
import { spawn } from "node:child_process";
import {
  closeSync,
  constants,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/cli.js";
import { until } from "../helpers/until.js";

const MISSING = "/nonexistent/gpuplan-test-library.so";
let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

describe("a stderr reader that stopped reading", () => {
  it.each(["SIGINT", "SIGTERM"] as const)(
    "%s ends an interrupted run waiting to print its summary (a second later), as the signal says",
    async (signal) => {
      const t = tempDir();
      cleanups.push(t.cleanup);
      const cwd = t.dir;
      writeFileSync(
        join(cwd, "loud.yaml"),
        `version: 1
name: loud
registry: { platform_priority: [cpu] }
pipelines:
  - name: l
    steps:
      - id: a
        run: [sh, -c, "head -c 3000000 /dev/zero | tr '\\\\0' x | fold -w 100; sleep 120"]
        memory: numpy
`,
      );
      // A FIFO this test opens for reading and never reads: what gpuplan prints past its buffer waits.
      const fifo = join(cwd, "stderr.fifo");
      const made = spawn("mkfifo", [fifo]);
      await new Promise((r) => made.on("exit", r));
      const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      cleanups.push(() => closeSync(reader));
      const writer = openSync(fifo, "w");
      const child = spawn(
        process.execPath,
        [join(ROOT, "bin/gpuplan.js"), "run", "loud.yaml", "--ui", "plain"],
        {
          cwd,
          stdio: ["ignore", "ignore", writer],
          env: {
            ...process.env,
            CI: "1",
            NO_COLOR: "1",
            GPUPLAN_NVML_LIBRARY: MISSING,
            GPUPLAN_CUDA_LIBRARY: MISSING,
            GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
            GPUPLAN_AMD_SMI_LIBRARY: MISSING,
            GPUPLAN_HIP_LIBRARY: MISSING,
            GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
          },
        },
      );
      closeSync(writer);
      const exited = new Promise<number | null>((r) =>
        child.on("exit", (code, sig) => r(code ?? (sig === null ? null : -1))),
      );
      cleanups.push(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      });
      const runDir = () => {
        const runs = join(cwd, ".gpuplan/runs");
        const [id] = existsSync(runs) ? readdirSync(runs) : [];
        return id === undefined ? null : join(runs, id);
      };
      const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");
      // All of the step's output is in its log (and far more than the pipe holds waits for the reader).
      await until("the flood to fill the pipe", () => {
        const dir = runDir();
        return dir !== null && read(join(dir, "logs/l@a.out.log")).length >= 3_000_000;
      });
      child.kill(signal);
      await until("the journal's end", () => /"type":"end"/.test(read(join(runDir()!, "journal.jsonl"))));
      const code = await Promise.race([
        exited,
        new Promise<string>((r) => setTimeout(() => r("still running 30 s after its run ended"), 30_000)),
      ]);
      expect(code).toBe(signal === "SIGINT" ? 130 : 143);
    },
    90_000,
  );
});
