// `gpuplan locks`: the built CLI against a lock directory this test holds slots in, and the
// human table as text at a pinned time.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSlotLock, type SlotState } from "../../../src/run/lock/index.js";
import { formatLocks } from "../../../src/ui/locks-table.js";
import { gpuplan, loadedModules } from "../../helpers/cli.js";
import { built } from "./processes.js";

const UUID = "GPU-abcdef01-2345-6789-abcd-ef0123456789";
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-locks-cli-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!built)("gpuplan locks", () => {
  it("--json lists every slot with its holder; the lock directory comes from GPUPLAN_LOCK_DIR", async () => {
    const lock = createSlotLock({ dir });
    const holder = { pid: process.pid, run: "run-7", pipeline: "plate-3", step: "segment", since: "" };
    const held = await lock.acquire({ uuid: UUID, gpu: "cuda:2", maxPipelines: 2, holder, wait: false });
    (await lock.acquire({ uuid: UUID, gpu: "cuda:2", maxPipelines: 2, holder, wait: false })).release();
    const r = gpuplan(["locks", "--json"], { env: { GPUPLAN_LOCK_DIR: dir } });
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ schema: "gpuplan/locks@1", dir, workers: [] });
    expect(out.slots).toEqual([
      {
        uuid: UUID,
        gpu: "cuda:2",
        slot: 0,
        held: true,
        holder: expect.objectContaining({
          pid: process.pid,
          run: "run-7",
          pipeline: "plate-3",
          step: "segment",
        }),
      },
      { uuid: UUID, gpu: "cuda:2", slot: 1, held: false, holder: null },
    ]);
    const human = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: dir } });
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toMatch(/^GPU +UUID +SLOT +STATE +PID +PIPELINE +STEP +SINCE +HELD FOR\n/);
    expect(human.stdout).toMatch(
      new RegExp(`cuda:2 +GPU-abcdef01 +0 +held +${process.pid} +plate-3 +segment `),
    );
    expect(human.stdout).toContain(`1 of 2 slots held (${dir}).`);
    held.release();
  });

  it("loads koffi but neither ink nor react", () => {
    const { result, modules } = loadedModules(["locks", "--json"], "koffi|ink|react");
    expect(result.exitCode).toBe(0);
    expect(modules.some((m) => m.includes("koffi"))).toBe(true);
    expect(modules.filter((m) => /[\\/](ink|react)[\\/]/.test(m))).toEqual([]);
  });

  it("says so when there are no locks, even when the directory does not exist", () => {
    const r = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: join(dir, "none") } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`No GPU slot locks in ${join(dir, "none")}.\n`);
  });
});

describe("the locks table", () => {
  it("shows holders, a holder whose gpuplan exited, and held slots with no label", () => {
    const since = "2026-01-02T03:04:05.678Z";
    const holder = (pid: number, step: string | null) => ({
      pid,
      run: "r",
      pipeline: "plate-1",
      step,
      since,
    });
    const slots: SlotState[] = [
      { uuid: UUID, gpu: "cuda:0", slot: 0, held: true, holder: holder(100, "segment") },
      { uuid: UUID, gpu: "cuda:0", slot: 1, held: true, holder: holder(200, null) },
      { uuid: UUID, gpu: null, slot: 2, held: true, holder: null },
      { uuid: "GPU-short", gpu: "cuda:1", slot: 0, held: false, holder: null },
    ];
    const now = Date.parse(since) + 125_000;
    expect(formatLocks("/locks", slots, now, (h) => h.pid === 100)).toBe(
      [
        "GPU     UUID          SLOT  STATE  PID           PIPELINE  STEP     SINCE                 HELD FOR",
        "cuda:0  GPU-abcdef01     0  held   100           plate-1   segment  2026-01-02 03:04:05Z     2m05s",
        "cuda:0  GPU-abcdef01     1  held   200 (exited)  plate-1            2026-01-02 03:04:05Z     2m05s",
        "?       GPU-abcdef01     2  held   ?",
        "cuda:1  GPU-short        0  free",
        "",
        "3 of 4 slots held (/locks).",
        "",
      ].join("\n"),
    );
  });
});
