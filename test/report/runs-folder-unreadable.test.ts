// A runs folder gpuplan cannot read is said so, never read as "no runs": `gpuplan runs` listed
// nothing (exit 0, `"runs": []` with --json), `report` said "no runs in .gpuplan/runs" and
// `report RUN` "no run RUN" of a .gpuplan a `sudo gpuplan run` made under umask 077, or with a
// file in the runs folder's place; `compile --history auto` learned from nothing without a word.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";
import { NO_GPU } from "./helpers/runs.js";

const RUN = "20261129T094020Z-155849";
const CPU_EXAMPLE = join(ROOT, "examples/hello-cpu.yaml");

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
const temp = () => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
};

/** Exit 2, `unreadable-file` with the message and a hint on stderr, no crash. */
function expectUnreadable(r: ReturnType<typeof gpuplan>, message: string): void {
  expect(hasCrashed(r), r.stderr).toBe(false);
  expect(r.exitCode, r.stderr).toBe(2);
  expect(r.stderr).toContain(`gpuplan: error: ${message}  [unreadable-file]\n  hint: `);
}

describe("a file where the runs folder belongs", () => {
  it("runs, runs --json, report and compile --history auto say so, exit 2", () => {
    const cwd = temp();
    mkdirSync(join(cwd, ".gpuplan"));
    writeFileSync(join(cwd, ".gpuplan/runs"), "not a folder\n");
    const message = "cannot read the runs folder .gpuplan/runs: a file stands where a folder is needed";
    expectUnreadable(gpuplan(["runs"], { cwd, env: NO_GPU }), message);
    const json = gpuplan(["runs", "--json"], { cwd, env: NO_GPU });
    expectUnreadable(json, message);
    expect(JSON.parse(json.stdout)).toMatchObject({
      schema: "gpuplan/error@1",
      problems: [{ code: "unreadable-file", message }],
    });
    expectUnreadable(gpuplan(["report"], { cwd, env: NO_GPU }), message);
    expectUnreadable(
      gpuplan(["compile", CPU_EXAMPLE, "--target", "cpu-only", "--history", "auto"], { cwd, env: NO_GPU }),
      message,
    );
  });
});

const isRoot = process.getuid?.() === 0;
const canSwitchUser =
  isRoot &&
  spawnSync("runuser", ["-u", "nobody", "--", "test", "-r", join(ROOT, "bin/gpuplan.js")]).status === 0;

/** gpuplan as the user nobody (root cannot be refused a folder). */
function asNobody(args: string[], cwd: string): ReturnType<typeof gpuplan> {
  const r = spawnSync(
    "runuser",
    [
      "-u",
      "nobody",
      "--",
      "env",
      "NO_COLOR=1",
      "CI=1",
      process.execPath,
      join(ROOT, "bin/gpuplan.js"),
      ...args,
    ],
    { cwd, encoding: "utf8", env: { ...process.env, ...NO_GPU }, timeout: 30_000 },
  );
  return { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(!canSwitchUser)("a runs folder another user made, mode 0700", () => {
  it("runs, report, report RUN and status RUN say permission denied (they said: no runs, no run RUN)", () => {
    const cwd = temp();
    chmodSync(cwd, 0o755);
    mkdirSync(join(cwd, ".gpuplan/runs", RUN, "logs"), { recursive: true });
    writeFileSync(join(cwd, ".gpuplan/runs", RUN, "journal.jsonl"), "");
    chmodSync(join(cwd, ".gpuplan/runs"), 0o700);
    chownSync(join(cwd, ".gpuplan"), 0, 0);
    const message = "cannot read the runs folder .gpuplan/runs: permission denied";
    expectUnreadable(asNobody(["runs"], cwd), message);
    expectUnreadable(asNobody(["runs", "--prune", "--keep", "0"], cwd), message);
    expectUnreadable(asNobody(["report"], cwd), message);
    for (const command of ["report", "status"])
      expectUnreadable(
        asNobody([command, RUN], cwd),
        `cannot read the run folder .gpuplan/runs/${RUN}: permission denied`,
      );
  });
});
