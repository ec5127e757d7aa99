// gpuplan installed where its packages are reached through symbolic links — pnpm lays out every
// package so, and a checkout may link node_modules from another. On Node 20 (the build's V8 code
// cache, no module compile cache) `--ui tui` then failed inside ink's dependencies with
// "onetime is not a function", an internal error before the first step ran. The live view that
// cannot load is now said as a warning and the run goes on in plain lines.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/cli.js";

const t = tempDir();
afterAll(() => t.cleanup());

describe("an installation whose node_modules is a link", () => {
  it("runs a plan with --ui tui into a pipe: the steps run, whatever the live view can do", () => {
    const pkg = join(t.dir, "pkg");
    mkdirSync(pkg);
    for (const part of ["bin", "dist", "package.json"])
      cpSync(join(ROOT, part), join(pkg, part), { recursive: true });
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(pkg, "node_modules"));
    const work = join(t.dir, "work");
    mkdirSync(work);
    writeFileSync(
      join(work, "p.yaml"),
      'version: 1\nname: linked\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: [sh, -c, "echo ran > out.txt"], memory: numpy }\n',
    );
    const env = { PATH: process.env.PATH, HOME: t.dir, GPUPLAN_LOCK_DIR: join(t.dir, "locks") };
    const node = (args: string[]) =>
      spawnSync(process.execPath, [join(pkg, "bin/gpuplan.js"), ...args], {
        cwd: work,
        env,
        encoding: "utf8",
      });
    const compiled = node(["compile", "p.yaml", "-o", "plan.json", "--target", "cpu-only"]);
    expect(compiled.status, compiled.stderr).toBe(0);
    const ran = node(["run", "plan.json", "--ui", "tui"]);
    expect(ran.stderr).not.toContain("internal-error");
    expect(ran.status, ran.stderr).toBe(0);
    expect(readFileSync(join(work, "out.txt"), "utf8")).toBe("ran\n");
  }, 60_000);
});
