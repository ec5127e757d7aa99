// Files that are not plain files (an attack found `compile /dev/zero` eating 9 GB, and `gpuplan
// targets` hanging on a FIFO in .gpuplan/targets): a device is refused, a FIFO is read to its end,
// a file past MAX_SOURCE_BYTES is refused before it is read, and the targets listing opens no
// FIFO and follows no link to a device.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_SOURCE_BYTES } from "../../src/source/read-source-text.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
function scratch(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
}
const HELLO = join(ROOT, "examples/hello-cpu.yaml");

describe("files that are not plain files", () => {
  it.each([
    ["compile", ["compile", "/dev/zero"], "pipeline file"],
    ["run", ["run", "/dev/zero"], "plan"],
    ["--inventory", ["compile", HELLO, "--inventory", "/dev/zero"], "inventory file"],
    ["--check", ["compile", HELLO, "--check", "/dev/zero"], "plan"],
  ])("a device is refused at once (%s), with the path and exit 2", (_, args, what) => {
    const r = gpuplan(args);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `cannot read ${what} /dev/zero: it is a device, not a file  [unreadable-file]`,
    );
  });

  it("a FIFO is read to its end: compile <(generate-pipeline) works", () => {
    const dir = scratch();
    spawnSync("mkfifo", [join(dir, "p.yaml")]);
    const r = spawnSync(
      "sh",
      [
        "-c",
        `cat "$1" > "$2" & exec node "$3" compile "$2" --target cpu-only -o -`,
        "sh",
        HELLO,
        join(dir, "p.yaml"),
        join(ROOT, "bin/gpuplan.js"),
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ schema: "gpuplan/plan@2" });
  });

  it.each([
    ["--check", "plan"],
    ["--inventory", "inventory file"],
  ])(
    "a FIFO nobody writes to, given as %s, is refused within seconds, not waited on for good",
    (flag, what) => {
      const fifo = join(scratch(), "f");
      spawnSync("mkfifo", [fifo]);
      const r = spawnSync(process.execPath, [join(ROOT, "bin/gpuplan.js"), "compile", HELLO, flag, fifo], {
        encoding: "utf8",
        timeout: 15_000,
      });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `cannot read ${what} ${fifo}: it is a FIFO and nothing wrote to it within 2 s  [unreadable-file]`,
      );
    },
  );

  it("a FIFO whose writer starts after gpuplan is still read: cat plan > f & gpuplan compile --check f", () => {
    const dir = scratch();
    // Beside its pipeline: a plan under --check through a FIFO is read as one that went to a pipe.
    const pipeline = join(dir, "hello.yaml");
    copyFileSync(HELLO, pipeline);
    const plan = join(dir, "plan.json");
    expect(gpuplan(["compile", pipeline, "--target", "cpu-only", "-o", plan]).exitCode).toBe(0);
    spawnSync("mkfifo", [join(dir, "f")]);
    const r = spawnSync(
      "sh",
      [
        "-c",
        `(sleep 0.5; cat "$1" > "$2") & exec node "$3" compile "$4" --target cpu-only --check "$2"`,
        "sh",
        plan,
        join(dir, "f"),
        join(ROOT, "bin/gpuplan.js"),
        pipeline,
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(r.status, r.stderr).toBe(0);
  });

  it("a file larger than gpuplan reads is refused before it is read", () => {
    const dir = scratch();
    const big = join(dir, "big.yaml");
    writeFileSync(big, "");
    truncateSync(big, MAX_SOURCE_BYTES + 1); // sparse: no disk, no time
    const r = gpuplan(["compile", big]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("(512 MiB), the most gpuplan reads of a file  [unreadable-file]");
  });

  it("a file just under 512 MiB but past the longest string V8 holds is refused the same way", () => {
    const dir = scratch();
    const big = join(dir, "big.yaml");
    writeFileSync(big, "");
    truncateSync(big, 536_870_900);
    const r = gpuplan(["compile", big]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("the most gpuplan reads of a file  [unreadable-file]");
  });

  it("compile - reads standard input as a file: a device there is refused", () => {
    const r = spawnSync(
      "sh",
      ["-c", `exec node "$1" compile - --target cpu-only < /dev/zero`, "sh", join(ROOT, "bin/gpuplan.js")],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain("cannot read pipeline file from standard input: it is a device, not a file");
  });

  it("compile - with a folder on standard input is refused as unreadable, not read as an empty file", () => {
    const r = spawnSync(
      "sh",
      [
        "-c",
        `exec node "$1" compile - --target cpu-only < "$2"`,
        "sh",
        join(ROOT, "bin/gpuplan.js"),
        scratch(),
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      "cannot read pipeline file from standard input: it is a folder, not a file  [unreadable-file]",
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("gpuplan targets lists files only: a FIFO and a link to /dev/zero in .gpuplan/targets are passed over", () => {
    const dir = scratch();
    const targets = join(dir, ".gpuplan/targets");
    mkdirSync(targets, { recursive: true });
    spawnSync("mkfifo", [join(targets, "fifo.json")]);
    symlinkSync("/dev/zero", join(targets, "zero.json"));
    writeFileSync(
      join(targets, "pair.yaml"),
      "gpus:\n  - { name: NVIDIA L4, memory: 23034MiB, count: 2 }\ncpu: { threads: 8, memory: 32GiB }\n",
    );
    const r = gpuplan(["targets", "--json"], { cwd: dir });
    expect(r.exitCode, r.stderr).toBe(0);
    const names = (JSON.parse(r.stdout) as { targets: { name: string }[] }).targets.map((t) => t.name);
    expect(names).toContain("pair");
    expect(names).not.toContain("fifo");
    expect(names).not.toContain("zero");
  });
});
