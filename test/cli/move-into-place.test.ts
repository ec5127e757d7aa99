// The rename phase of an export, all or none, on its own: write-folder.ts refuses a folder at a
// file's name before renaming, but one made there after that look (or any rename that fails
// part-way) must not leave a half export. Here the folder is there from the start, which only
// moveIntoPlace itself sees: what it renamed is undone, what it replaced is back.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { moveIntoPlace } from "../../src/cli/move-into-place.js";
import { UsageError } from "../../src/problems/errors.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Each entry of `folder` with its text, a folder's entries, or a link's target. */
function snapshot(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .map((d) => {
      const path = join(folder, d.name);
      if (d.isSymbolicLink()) return `${d.name} -> link`;
      return d.isDirectory()
        ? `${d.name}/ ${readdirSync(path).join(",")}`
        : `${d.name} ${readFileSync(path, "utf8")}`;
    })
    .sort();
}

function staged(names: string[]): { out: string; staging: string } {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-move-"));
  const out = join(dir, "out");
  const staging = join(out, ".staging");
  mkdirSync(staging, { recursive: true });
  for (const name of names) writeFileSync(join(staging, name), `new ${name}`);
  return { out, staging };
}

describe("moveIntoPlace", () => {
  it("a folder at the third name: the two files renamed before are undone, the one replaced is back, logs/ removed", async () => {
    const names = ["plan.json", "01-cpu.sbatch", "submit.sh"];
    const { out, staging } = staged(names);
    writeFileSync(join(out, "plan.json"), "earlier plan");
    mkdirSync(join(out, "submit.sh"));
    writeFileSync(join(out, "submit.sh", "keep"), "");
    const before = snapshot(out).filter((e) => !e.startsWith(".staging"));

    const error = await moveIntoPlace(staging, out, names, ["logs"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).code).toBe("unwritable-file");
    expect((error as Error).message).toBe(
      `${join(out, "submit.sh")} is a folder: gpuplan writes its own file there; nothing in ${out} was changed`,
    );
    expect(snapshot(out).filter((e) => !e.startsWith(".staging"))).toEqual(before);
  });

  it("moves what stood at each name aside into staging, so a link there is replaced, never followed", async () => {
    const names = ["plan.json", "submit.sh"];
    const { out, staging } = staged(names);
    writeFileSync(join(dir!, "bashrc"), "mine");
    symlinkSync(join(dir!, "bashrc"), join(out, "plan.json"));
    await moveIntoPlace(staging, out, names, ["logs"]);
    expect(snapshot(out)).toEqual([
      ".staging/ .replaced",
      "logs/ ",
      "plan.json new plan.json",
      "submit.sh new submit.sh",
    ]);
    expect(readFileSync(join(dir!, "bashrc"), "utf8")).toBe("mine");
    expect(snapshot(join(staging, ".replaced"))).toEqual(["plan.json -> link"]);
  });
});
