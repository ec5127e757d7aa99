// The benches are not part of the tests (their figures need a quiet machine), but they must keep
// working: bench:warm read compiled plans as raw JSON and broke silently when plans began to leave
// out their defaults (plan format 2). Each runs here at a tiny size and must get to its figures.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

function bench(script: string, args: string[]) {
  const { NODE_EXTRA_CA_CERTS: _ca, ...env } = process.env;
  return spawnSync(process.execPath, [join(ROOT, "bench", script), ...args], {
    cwd: ROOT,
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
}

it("bench:warm runs its warm and cold rounds through the built executor", () => {
  const r = bench("warm.mjs", ["4", "2", "50", "5"]);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^keep_warm: 5m +[\d.]+ s +1 loads/m);
  expect(r.stdout).toMatch(/^keep_warm: false +[\d.]+ s +4 loads/m);
});

it("bench:run times every path (CPU, and GPU on the fake NVML where it can be built)", () => {
  const r = bench("run.mjs", ["10", "2", "1"]);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^ {2}CPU path +\d+ ms/m);
  expect(r.stdout).toMatch(/^ {2}CPU ÷ floor +[\d.]+×/m);
});
