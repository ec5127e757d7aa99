// Descriptors gpuplan inherits (a shell's `exec 5>file`, the caller's pipe under `x=$(gpuplan run …)`
// or ssh) never reach a step: a daemon the step leaves behind would hold the caller's pipe open,
// and the caller would wait for the daemon instead of for gpuplan. An attack found a pipe the
// calling shell held at fd 251 in every step's /proc/PID/fd, under both starters.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";

const t = tempDir();
afterAll(t.cleanup);

describe("descriptors gpuplan inherited", () => {
  writeFileSync(
    join(t.dir, "fds.yaml"),
    [
      "version: 1",
      "name: fds",
      "pipelines:",
      "  - name: p",
      "    steps:",
      // ls lists its own descriptors: the step's, and the one it reads the listing through.
      "      - { id: s, run: [ls, /proc/self/fd], memory: numpy }",
      "",
    ].join("\n"),
  );
  const compiled = gpuplan(["compile", "fds.yaml", "--target", "cpu-only", "-o", "plan.json"], {
    cwd: t.dir,
  });

  it.each(["auto", "node"])("never reach a step (--spawn %s)", (spawn) => {
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    // Node gives the child fds 3…7 as given here, without close-on-exec, as a shell would.
    const r = spawnSync(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "plan.json", "--ui", "plain", "--spawn", spawn],
      {
        cwd: t.dir,
        stdio: ["ignore", "pipe", "pipe", "ignore", "ignore", "pipe", "pipe", "pipe"],
        encoding: "utf8",
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const output = r.stdout + r.stderr;
    const fds = [...output.matchAll(/^\[p\/s cpu\] (\d+)$/gm)].map((m) => Number(m[1]));
    // 0, 1, 2 and ls's own listing: nothing gpuplan was given (3…7 here).
    expect(
      fds.sort((a, b) => a - b),
      output,
    ).toEqual([0, 1, 2, 3]);
  });
});
