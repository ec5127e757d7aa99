/** `gpuplan locks` against warm.<pid>.json files planted in a shared lock directory. */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import validateLocks from "../../../src/generated/locks-validator.js";
import { MAX_INFO_BYTES, readWarmWorkers } from "../../../src/run/warm/worker-info.js";
import { ROOT } from "../../helpers/cli.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const good = { key: "m", gpu: "cuda:0", pid: null, busy: false, idleSince: "2026-11-22T01:00:00.000Z" };
const record = (extra: Record<string, unknown>) =>
  JSON.stringify({ pid: process.pid, host: hostname(), run: "r", workers: [good], ...extra });
const worker = (extra: Record<string, unknown>) => record({ workers: [{ ...good, ...extra }] });

/** `gpuplan locks`, bounded: without the checks a FIFO hangs it and /dev/zero eats memory. */
function locks(args: string[]) {
  const r = spawnSync(
    "sh",
    [
      "-c",
      'ulimit -v 3000000 && exec "$0" "$@"',
      process.execPath,
      join(ROOT, "bin/gpuplan.js"),
      "locks",
      ...args,
    ],
    {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1" },
      encoding: "utf8",
      timeout: 15_000,
      killSignal: "SIGKILL",
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("planted warm.<pid>.json files", () => {
  it("a FIFO, a link to /dev/zero, a directory, an oversized or malformed file are ignored and noted; --json stays valid", () => {
    dir = mkdtempSync(join(tmpdir(), "gpuplan-warm-planted-"));
    expect(spawnSync("mkfifo", [join(dir, "warm.1.json")]).status).toBe(0);
    symlinkSync("/dev/zero", join(dir, "warm.2.json"));
    mkdirSync(join(dir, "warm.3.json"));
    writeFileSync(join(dir, "warm.4.json"), `${record({})}${" ".repeat(MAX_INFO_BYTES)}`);
    const bad = [
      record({ workers: 5 }),
      worker({ gpu: 5 }),
      worker({ busy: "yes" }),
      worker({ idleSince: 7 }),
      worker({ extra: "x" }),
      worker({ pid: "12" }),
      record({ pid: "1" }),
      record({ run: null }),
      "[]",
      "null",
    ];
    for (const [i, text] of bad.entries()) writeFileSync(join(dir, `warm.${10 + i}.json`), text);
    writeFileSync(join(dir, "warm.100.json"), record({}));

    for (const args of [["--json"], []]) {
      const r = locks([...args, "--lock-dir", dir]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).not.toContain("internal error");
      for (const n of [1, 2, 3, 4, ...bad.map((_, i) => 10 + i)])
        expect(r.stderr).toContain(`ignored ${join(dir, `warm.${n}.json`)}: `);
      expect(r.stderr).not.toContain("warm.100.json");
      if (args.length === 0) continue;
      const doc = JSON.parse(r.stdout) as { workers: unknown[] };
      expect(validateLocks(doc), JSON.stringify(validateLocks.errors)).toBe(true);
      expect(doc.workers).toEqual([{ ...good, gpuplanPid: process.pid, run: "r" }]);
    }
  });

  it("says why a file was skipped", () => {
    dir = mkdtempSync(join(tmpdir(), "gpuplan-warm-planted-"));
    symlinkSync("/dev/zero", join(dir, "warm.2.json"));
    mkdirSync(join(dir, "warm.3.json"));
    writeFileSync(join(dir, "warm.4.json"), worker({ gpu: 5 }));
    const skipped: string[] = [];
    expect(
      readWarmWorkers(
        dir,
        () => true,
        (path, reason) => skipped.push(`${path}: ${reason}`),
      ),
    ).toEqual([]);
    expect(skipped.sort()).toEqual([
      `${join(dir, "warm.2.json")}: a symbolic link`,
      `${join(dir, "warm.3.json")}: not a regular file`,
      `${join(dir, "warm.4.json")}: not a warm-worker record`,
    ]);
  });
});
