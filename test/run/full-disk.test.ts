// A full disk under a run (a 1 MiB tmpfs holding the run folder, filled by a step) never stops
// the steps or the run: each record file's first failure is reported once, the journal entries
// the disk refused go out once a later step frees space, and the run ends with exit 2 saying its
// records are incomplete. Needs root to mount the tmpfs; skipped with a message otherwise.
import { execFileSync, spawnSync } from "node:child_process";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openJournal, readJournal } from "../../src/run/record/journal.js";
import { type RecordFailure, recordFailures } from "../../src/run/record/record-failures.js";
import { gpuplan, hasCrashed, ROOT } from "../helpers/cli.js";

const MISSING = "/nonexistent/gpuplan-test-library.so";
const NO_GPU = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  CI: "1",
};

let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

/** A 1 MiB tmpfs, or null (with the reason) where this process may not mount one. */
function smallDisk(): { dir: string } | { skip: string } {
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-full-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir], { stdio: "pipe" });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `cannot mount a tmpfs here (${(e as Error).message.split("\n")[0]}); run as root` };
  }
  cleanup = () => {
    execFileSync("umount", ["-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir };
}

const sleep = (ms: number) => `setTimeout(() => {}, ${ms})`;
const FILL =
  "const fs = require('fs'); const fd = fs.openSync('filler.bin', 'w'); const b = Buffer.alloc(16384);" +
  " try { for (;;) fs.writeSync(fd, b); } catch (e) { if (e.code !== 'ENOSPC') throw e; }";

const PIPELINE = `
version: 1
name: full-disk
registry: { platform_priority: [cpu], max_parallel_pipelines: 2 }
pipelines:
  - name: disk
    steps:
      - { id: fill, run: [node, -e, "${FILL}"], memory: numpy }
      - { id: full, run: [node, -e, "${sleep(400)}"], memory: numpy, needs: [fill] }
      - { id: free, run: [node, -e, "require('fs').unlinkSync('filler.bin')"], memory: numpy, needs: [full] }
      - { id: after, run: [node, -e, "${sleep(50)}"], memory: numpy, needs: [free] }
  - name: beside
    steps:
      - { id: one, run: [node, -e, "${sleep(300)}"], memory: numpy }
      - { id: two, run: [node, -e, "${sleep(300)}"], memory: numpy, needs: [one] }
      - { id: three, run: [node, -e, "${sleep(300)}"], memory: numpy, needs: [two] }
`;

describe("a full disk", () => {
  it("never stops the steps: failures said once, the journal catches up, exit 2 says the records are incomplete", (ctx) => {
    const disk = smallDisk();
    if ("skip" in disk) {
      ctx.skip(disk.skip);
      return;
    }
    const { dir } = disk;
    writeFileSync(join(dir, "full.yaml"), PIPELINE);
    const r = gpuplan(["run", "full.yaml", "--ui", "plain"], { cwd: dir, env: NO_GPU });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    // Said once for the events file while the run went on, and once at the end.
    const [id] = readdirSync(join(dir, ".gpuplan/runs"));
    const runDir = join(".gpuplan/runs", id!);
    const warnings = r.stderr.split("\n").filter((l) => l.startsWith("gpuplan: warning: cannot write"));
    expect(warnings.filter((l) => l.includes(`${runDir}/events.jsonl`))).toHaveLength(1);
    expect(new Set(warnings).size).toBe(warnings.length);
    expect(r.stderr).toMatch(
      /gpuplan: error: the run's records are incomplete: .*events\.jsonl \(ENOSPC\).*\[records-incomplete\]/,
    );
    // Every step ran to its end, and the journal recorded each once space was back.
    const journal = readFileSync(join(dir, runDir, "journal.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const ok = journal
      .filter((e) => e.type === "step" && e.status === "ok")
      .map((e) => `${e.pipeline}/${e.step}`);
    expect(ok.sort()).toEqual(
      [
        "beside/one",
        "beside/three",
        "beside/two",
        "disk/after",
        "disk/fill",
        "disk/free",
        "disk/full",
      ].sort(),
    );
    expect(journal.at(-1)).toMatchObject({ type: "end", ok: 7, failed: 0 });
    // So a resume runs nothing again.
    const again = gpuplan(["run", "--resume", id!, "--ui", "json"], { cwd: dir, env: NO_GPU });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('"gpu.step.start"');
  }, 60_000);
});

describe("gpuplan's own lines in a step's log on a full disk", () => {
  it("a step that leaves processes behind, and one that cannot start, are recorded: no internal error", (ctx) => {
    const disk = smallDisk();
    if ("skip" in disk) {
      ctx.skip(disk.skip);
      return;
    }
    const { dir } = disk;
    // The leftover is a sleep of a length no other process uses, so it can be looked for after.
    const marker = "29.4871";
    writeFileSync(
      join(dir, "notes.yaml"),
      `
version: 1
name: notes
registry: { platform_priority: [cpu] }
pipelines:
  - name: disk
    steps:
      - { id: fill, run: [node, -e, "${FILL}"], memory: numpy }
      - { id: leaves, run: [sh, -c, "sleep ${marker} & exit 0"], memory: numpy, needs: [fill] }
      - { id: missing, run: [no-such-program-gpuplan-test], memory: numpy, needs: [leaves] }
`,
    );
    const r = gpuplan(["run", "notes.yaml", "--ui", "plain", "--kill-grace", "1s"], {
      cwd: dir,
      env: NO_GPU,
    });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.stderr).not.toContain("internal-error");
    // The step failed (exit 1); the events the disk refused make it exit 2.
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("program `no-such-program-gpuplan-test` not found");
    const [id] = readdirSync(join(dir, ".gpuplan/runs"));
    const journal = readFileSync(join(dir, ".gpuplan/runs", id!, "journal.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const steps = journal.filter((e) => e.type === "step").map((e) => `${e.step}:${e.status}`);
    expect(steps).toEqual(["fill:ok", "leaves:ok", "missing:error"]);
    expect(journal.at(-1)).toMatchObject({ type: "end", ok: 2, failed: 1 });
    // What the step left was ended with it, its note refused or not.
    const running = readdirSync("/proc")
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8") === `sleep\0${marker}\0`;
        } catch {
          return false;
        }
      });
    expect(running).toEqual([]);
  }, 60_000);
});

/** Fill the file system of `dir` to the last byte. */
function fill(dir: string): string {
  const path = join(dir, "filler.bin");
  const fd = openSync(path, "w");
  const block = Buffer.alloc(16384);
  try {
    for (;;) writeSync(fd, block);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd);
  }
  return path;
}

describe("the journal on a full disk", () => {
  it("keeps what the disk refused and writes it, in order and whole, once there is space", async (ctx) => {
    const disk = smallDisk();
    if ("skip" in disk) {
      ctx.skip(disk.skip);
      return;
    }
    const said: RecordFailure[] = [];
    const failures = recordFailures((f) => said.push(f));
    const journal = await openJournal(disk.dir, failures);
    await journal.append({ type: "run", run: "R", startedAt: "t", input: "p", baseDir: "/", pipelines: [] });
    const filler = fill(disk.dir);
    // Entries of 3 KB: the file's last page fills and the next one cannot be had.
    const step = (i: number) => ({
      type: "step" as const,
      ts: "t",
      pipeline: `p${i}-${"x".repeat(3000)}`,
      step: "s",
      status: "ok" as const,
      attempt: 1,
      device: "cpu",
      exitCode: 0,
      durationMs: 1,
    });
    for (let i = 0; i < 4; i++) await journal.append(step(i));
    expect(said).toEqual([{ file: join(disk.dir, "journal.jsonl"), reason: "ENOSPC" }]);
    unlinkSync(filler);
    await journal.append(step(4));
    await journal.close();
    expect(failures.incomplete()).toEqual([]);
    const state = await readJournal(disk.dir);
    expect(state.entries.map((e) => (e.type === "step" ? e.pipeline.slice(0, 2) : e.type))).toEqual([
      "run",
      "p0",
      "p1",
      "p2",
      "p3",
      "p4",
    ]);
  });
});

describe("a file size limit (ulimit -f) under a new run", () => {
  // RLIMIT_FSIZE needs no root: writes past it fail with EFBIG (Node ignores SIGXFSZ). A plan
  // larger than the limit used to end gpuplan with an internal error and a stack, leaving a
  // folder with half a plan.json and no journal, which `gpuplan runs` and --resume then met.
  it("a plan.json cut short: a located unwritable-file error (exit 2), and no run folder left", () => {
    const cwd = mkdtempSync(join(tmpdir(), "gpuplan-fsize-"));
    cleanup = () => rmSync(cwd, { recursive: true, force: true });
    const matrix = Array.from({ length: 60 }, (_, i) => i).join(", ");
    writeFileSync(
      join(cwd, "m.yaml"),
      `version: 1\npipelines:\n  - name: p-{i}\n    matrix:\n      i: [${matrix}]\n    steps:\n      - id: a\n        run: [sh, -c, 'echo hi']\n        memory: numpy\n`,
    );
    // 12 KiB: less than this plan (about 30 KB); node and the CLI start writing nothing.
    const child = spawnSync(
      "sh",
      ["-c", 'ulimit -f 12; exec "$0" "$@"', process.execPath, join(ROOT, "bin/gpuplan.js"), "run", "m.yaml"],
      { cwd, env: { ...process.env, ...NO_GPU, NO_COLOR: "1" }, encoding: "utf8", timeout: 30_000 },
    );
    const r = { exitCode: child.status ?? -1, stdout: child.stdout, stderr: child.stderr };
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /^gpuplan: error: cannot write the run's plan \S+plan\.json: the file would be larger than this process may write {2}\[unwritable-file\]\n {2}hint: raise the file size limit \(ulimit -f\)/,
    );
    expect(readdirSync(join(cwd, ".gpuplan/runs"))).toEqual([]);
  });
});
