// gpuplan started in a folder that was removed (`cd dir; rm -rf ../dir`): process.cwd() throws
// ENOENT from uv_cwd, which compile and run reported as an internal error with a stack, and a
// relative .gpuplan/runs that cannot exist was reported as "no runs". Now one clear failure.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/cli.js";

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

/** gpuplan ARGS run from a folder removed just before it starts. */
function inRemovedFolder(args: string[]) {
  const gone = join(t.dir, "gone");
  mkdirSync(gone);
  const r = spawnSync(
    "sh",
    [
      "-c",
      'cd "$1" && rmdir "$1" && shift && exec "$@"',
      "sh",
      gone,
      process.execPath,
      join(ROOT, "bin/gpuplan.js"),
      ...args,
    ],
    { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
  );
  return { exitCode: r.status, stdout: r.stdout, stderr: r.stderr };
}

const GONE =
  "gpuplan: error: the current folder no longer exists (it was removed or moved away)  [working-folder-gone]";

describe("a working folder that was removed", () => {
  const example = join(ROOT, "examples/hello-cpu.yaml");
  it.each([
    ["compile", example, "--target", "cpu-only"],
    ["run", example],
    ["report"],
    ["status", "r1"],
    ["runs"],
    ["run", example, "--resume", "r1"],
  ])("%s: says so, exit 2, no stack", (...args) => {
    const r = inRemovedFolder(args);
    expect(r.stderr).toContain(GONE);
    expect(r.stderr).toContain("hint: cd to a folder that exists");
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(r.exitCode).toBe(2);
  });

  it("in the JSON a program reads", () => {
    const r = inRemovedFolder(["run", example, "--dry-run", "--json"]);
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      schema: "gpuplan/error@1",
      problems: [{ code: "working-folder-gone" }],
    });
    const compile = inRemovedFolder(["compile", example, "--target", "cpu-only", "--format", "json"]);
    expect(JSON.parse(compile.stdout)).toMatchObject({
      ok: false,
      problems: [{ code: "working-folder-gone" }],
    });
  });

  it("commands that need no folder still work", () => {
    expect(inRemovedFolder(["explain", "working-folder-gone"])).toMatchObject({ exitCode: 0 });
    expect(inRemovedFolder(["presets"])).toMatchObject({ exitCode: 0 });
  });
});
