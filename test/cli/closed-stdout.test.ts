// A reader that goes away (`gpuplan targets | head -1`) ends the printing quietly: the exit code is
// the one the command would have had, nothing is printed about it, and a run is never aborted —
// its steps, journal and events go on. The reader here closes its end of the pipe at once (or
// after the first chunk, as head does), so every later write meets EPIPE.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hasCrashed, ROOT, tempDir, writeBigPipeline } from "../helpers/cli.js";

const MISSING = "/nonexistent/gpuplan-test-library.so";
const NO_GPU = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
  CI: "1",
};

interface Ended {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run gpuplan with a stdout whose reader leaves: at once, or after the first chunk like `head -1`. */
function withReaderLeaving(
  args: readonly string[],
  leave: "at-once" | "after-first-chunk" | "unread",
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Ended> {
  const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  if (leave === "at-once") child.stdout.destroy();
  else if (leave === "unread") {
    // Nothing read: once gpuplan waits on the full socket, its reader leaves with bytes unread,
    // and the next write says ECONNRESET (Linux), not EPIPE.
    child.stdout.pause();
    child.stderr.once("data", () => undefined);
    setTimeout(() => child.stdout.destroy(), 500);
  } else {
    child.stdout.once("data", (d: Buffer) => {
      stdout = d.toString();
      child.stdout.destroy();
    });
  }
  return new Promise((resolve) =>
    child.on("close", (exitCode, signal) => resolve({ exitCode, signal, stdout, stderr })),
  );
}

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

describe("a closed stdout", () => {
  it.each([
    ["targets", ["targets"]],
    ["targets --json", ["targets", "--json"]],
    ["presets", ["presets"]],
    ["explain", ["explain"]],
  ])("%s: exit 0, nothing on stderr", async (_, args) => {
    const r = await withReaderLeaving(args, "at-once");
    expect(r.stderr).toBe("");
    expect(r.signal).toBeNull();
    expect(r.exitCode).toBe(0);
  });

  it("compile big.yaml | head -1: exit 0, the summary still on stderr, no error", async () => {
    const r = await withReaderLeaving(
      ["compile", writeBigPipeline(t.dir, 400), "--target", "cpu-only"],
      "after-first-chunk",
    );
    expect(r.stdout.startsWith("{")).toBe(true);
    expect(hasCrashed({ exitCode: r.exitCode ?? -1, stdout: "", stderr: r.stderr })).toBe(false);
    expect(r.stderr).toMatch(/^gpuplan compile: 400 pipelines \(all on CPU\)/m);
    expect(r.stderr).not.toMatch(/EPIPE|gpuplan: error/);
    expect(r.exitCode).toBe(0);
  });

  it("compile big.yaml to a socket whose reader leaves with bytes unread (ECONNRESET): exit 0, no error", async () => {
    // A Node parent's "pipe" stdio is a socketpair: a reader that leaves with bytes unread is
    // ECONNRESET to the writer, which gpuplan reported as `cannot write to stdout` (exit 2).
    for (const extra of [[], ["-o", "/dev/stdout"]]) {
      const r = await withReaderLeaving(
        ["compile", writeBigPipeline(t.dir, 400), "--target", "cpu-only", ...extra],
        "unread",
      );
      expect(hasCrashed({ exitCode: r.exitCode ?? -1, stdout: "", stderr: r.stderr })).toBe(false);
      expect(r.stderr).not.toMatch(/ECONNRESET|EPIPE|gpuplan: error/);
      expect(r.exitCode).toBe(0);
    }
  });

  it("compile -o /dev/stdout | head -1: exit 0, no error", async () => {
    const r = await withReaderLeaving(
      ["compile", writeBigPipeline(t.dir, 400), "--target", "cpu-only", "-o", "/dev/stdout"],
      "after-first-chunk",
    );
    expect(r.stdout.startsWith("{")).toBe(true);
    expect(r.stderr).not.toMatch(/EPIPE|gpuplan: error/);
    expect(r.exitCode).toBe(0);
  });

  it("compile --format json with errors: exit 1 as if the report had been read", async () => {
    const file = join(t.dir, "bad.yaml");
    writeFileSync(
      file,
      "version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: a, run: [x], memory: Torch }\n",
    );
    const r = await withReaderLeaving(
      ["compile", file, "--target", "cpu-only", "--format", "json"],
      "at-once",
    );
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(1);
  });

  it("run --ui json | head -1: the run goes on to the end; its journal and events.jsonl are complete", async () => {
    const r = await withReaderLeaving(
      ["run", join(ROOT, "examples/hello-cpu.yaml"), "--ui", "json"],
      "after-first-chunk",
      { cwd: t.dir, env: NO_GPU },
    );
    expect(r.stdout).toMatch(/^\{"ts":/);
    expect(hasCrashed({ exitCode: r.exitCode ?? -1, stdout: "", stderr: r.stderr })).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    const runs = join(t.dir, ".gpuplan", "runs");
    const [id] = readdirSync(runs);
    const journal = readFileSync(join(runs, id!, "journal.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(JSON.parse(journal.at(-1)!)).toMatchObject({ type: "end", ok: 9, failed: 0, interrupted: false });
    const events = readFileSync(join(runs, id!, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; status?: string });
    expect(events.filter((e) => e.event === "gpu.step.end" && e.status === "ok")).toHaveLength(9);
    expect(events.at(-1)?.event).toBe("run.end");
  }, 30_000);
});
