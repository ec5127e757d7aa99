// `locks init --gpu X` names a file in a root-owned directory: an attack made it create
// `.gpu.lock`, `%2e.gpu.lock` and `%2e%2e%2f…` from '', '.' and '../../etc/passwd'.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, tempDir } from "../../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

describe("locks init --gpu", () => {
  it.each(["", ".", "../../etc/passwd", "GPU-\u001b[2J"])(
    "refuses %j: not a GPU UUID (exit 2), nothing made",
    (uuid) => {
      const t = tempDir();
      cleanups.push(t.cleanup);
      const dir = join(t.dir, "locks");
      const r = gpuplan(["locks", "init", "--dir", dir, "--gpu", uuid]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain("is not a GPU UUID  [invalid-option-value]");
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    },
  );
});
