import {
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createWarmInfoWriter, readWarmWorkers } from "../../../src/run/warm/worker-info.js";
import type { WarmWorkerInfo } from "../../../src/run/warm/worker-pool.js";
import { formatWarmWorkers } from "../../../src/ui/locks-table.js";
import { execute, type Harness } from "../helpers/harness.js";
import { warmPlan, workerStep } from "./helpers.js";

let dir: string | undefined;
let h: Harness | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  h?.cleanup();
  dir = undefined;
  h = undefined;
});

describe("warm workers in gpuplan locks", () => {
  it("writes this process's workers beside the slots, reads live ones back, removes the file when none are left", () => {
    dir = mkdtempSync(join(tmpdir(), "gpuplan-warm-info-"));
    const idle: WarmWorkerInfo = {
      key: "cyto3",
      device: "cuda:0",
      pid: process.pid,
      busy: false,
      idleSince: Date.parse("2026-11-22T01:00:00Z"),
    };
    const told: string[] = [];
    const write = createWarmInfoWriter(dir, "run-1", (why) => told.push(why));
    write([idle]);
    expect(readWarmWorkers(dir, () => true)).toEqual([
      {
        key: "cyto3",
        gpu: "cuda:0",
        pid: process.pid,
        gpuplanPid: process.pid,
        run: "run-1",
        busy: false,
        idleSince: "2026-11-22T01:00:00.000Z",
      },
    ]);
    // A dead worker, and a file left by a gpuplan killed with -9, are ignored.
    expect(readWarmWorkers(dir, (pid) => pid !== process.pid)).toEqual([]);
    writeFileSync(
      join(dir, "warm.999999.json"),
      JSON.stringify({ pid: 999999, host: hostname(), run: "x", workers: [idle] }),
    );
    expect(readWarmWorkers(dir, (pid) => pid !== 999999)).toHaveLength(1);
    write([]);
    expect(readdirSync(dir)).toEqual(["warm.999999.json"]);
    expect(told).toEqual([]);
  });

  it("formats a table with idle time", () => {
    const text = formatWarmWorkers(
      [
        {
          key: "cyto3",
          gpu: "cuda:0",
          pid: 42,
          gpuplanPid: 41,
          run: "r1",
          busy: false,
          idleSince: "2026-11-22T01:00:00.000Z",
        },
      ],
      Date.parse("2026-11-22T01:01:30Z"),
    );
    expect(text).toContain("Warm workers");
    expect(text).toMatch(/cuda:0\s+cyto3\s+42\s+41\s+r1\s+idle\s+1m30s/);
  });

  it("the executor reports its warm workers as they change, from the start of loading, and none at the end", async () => {
    const seen: { at: number; workers: WarmWorkerInfo[] }[] = [];
    h = await execute(warmPlan(workerStep("seg", { key: "m", load: 400 })), {
      onWarmWorkers: (workers) => seen.push({ at: Date.now(), workers }),
    });
    expect(seen.some(({ workers: w }) => w.length === 1 && w[0]!.key === "m" && !w[0]!.busy)).toBe(true);
    expect(seen.at(-1)?.workers).toEqual([]);
    // A model that takes minutes to load holds its slot all the while: `gpuplan locks` lists it,
    // busy, from its start — long before it is ready.
    const loaded = h.events.find((e) => e.event === "gpu.model.load_complete")!;
    const first = seen[0]!;
    expect(first.workers).toMatchObject([{ key: "m", busy: true, idleSince: null }]);
    expect(first.workers[0]!.pid).toBeGreaterThan(0);
    expect(Date.parse(loaded.ts) - first.at).toBeGreaterThan(250);
  });
});

describe("writing warm.<pid>.<random>.json in a directory others may write", () => {
  const worker: WarmWorkerInfo = {
    key: "k",
    device: "cuda:0",
    pid: process.pid,
    busy: true,
    idleSince: null,
  };

  it("a link planted under its pid is neither written through nor in the way", () => {
    dir = mkdtempSync(join(tmpdir(), "gpuplan-warm-info-"));
    // Another user's link to this user's file: writeFileSync followed it and overwrote the file.
    const victim = join(dir, "bashrc");
    writeFileSync(victim, "export PATH=/usr/bin\n");
    symlinkSync(victim, join(dir, `warm.${process.pid}.json`));
    createWarmInfoWriter(dir, "run-1", () => {})([worker]);
    expect(readFileSync(victim, "utf8")).toBe("export PATH=/usr/bin\n");
    const skipped: string[] = [];
    expect(
      readWarmWorkers(
        dir,
        () => true,
        (path, why) => skipped.push(`${path}: ${why}`),
      ).map((w) => w.key),
    ).toEqual(["k"]);
    expect(skipped).toEqual([`${join(dir, `warm.${process.pid}.json`)}: a symbolic link`]);
    // Its own file beside the link, and no temporary file left.
    const [ours, ...rest] = readdirSync(dir).filter(
      (n) => n !== "bashrc" && n !== `warm.${process.pid}.json`,
    );
    expect(rest).toEqual([]);
    expect(ours).toMatch(new RegExp(`^warm\\.${process.pid}\\.[0-9a-f]{16}\\.json$`));
    expect(lstatSync(join(dir, ours!)).isFile()).toBe(true);
  });

  it("two records of one pid (one a killed gpuplan left, the pid given again): the newer is listed", () => {
    dir = mkdtempSync(join(tmpdir(), "gpuplan-warm-info-"));
    const left = join(dir, `warm.${process.pid}.0123456789abcdef.json`);
    writeFileSync(
      left,
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        run: "killed",
        workers: [{ key: "old", gpu: "cuda:0", pid: null, busy: false, idleSince: null }],
      }),
    );
    utimesSync(left, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    createWarmInfoWriter(dir, "run-2", () => {})([worker]);
    expect(readWarmWorkers(dir, () => true).map((w) => `${w.key} ${w.run}`)).toEqual(["k run-2"]);
  });
});
