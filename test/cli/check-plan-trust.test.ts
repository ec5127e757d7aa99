// A plan under `compile --check` is data a pull request can change (an attack found a tampered
// `inventory.label: "file:../../secret/.git-credentials"` printing that file in CI), and -o must
// never overwrite an input, a custom target's file included.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** repo/ with the CPU example, a plan of it in repo/plans, and a secret beside repo/. */
function checkout(): { dir: string; repo: string } {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const repo = join(t.dir, "repo");
  mkdirSync(join(repo, "plans"), { recursive: true });
  mkdirSync(join(repo, "inventories"));
  writeFileSync(join(t.dir, "secret.yaml"), "token: ghp_SECRET_TOKEN_123\n");
  writeFileSync(join(repo, "p.yaml"), readFileSync(join(ROOT, "examples/hello-cpu.yaml")));
  const inventory =
    "gpus:\n  - { name: NVIDIA L4, memory: 23034MiB, count: 2 }\ncpu: { threads: 8, memory: 32GiB }\n";
  writeFileSync(join(repo, "inventories/l4.yaml"), inventory);
  const c = gpuplan(["compile", "p.yaml", "--inventory", "inventories/l4.yaml", "-o", "plans/p.json"], {
    cwd: repo,
  });
  expect(c.exitCode, c.stderr).toBe(0);
  return { dir: t.dir, repo };
}

function relabel(repo: string, label: string): void {
  const path = join(repo, "plans/p.json");
  const plan = JSON.parse(readFileSync(path, "utf8")) as { inventory: { label: string } };
  plan.inventory.label = label;
  writeFileSync(path, JSON.stringify(plan, null, 2));
}

describe("compile --check trusts nothing in the plan it checks", () => {
  it("reads the inventory file a plan records inside the current folder only", () => {
    const { repo } = checkout();
    const ok = gpuplan(["compile", "p.yaml", "--check", "plans/p.json"], { cwd: repo });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stderr).toContain("plans/p.json is up to date");

    relabel(repo, "file:../../secret.yaml");
    const r = gpuplan(["compile", "p.yaml", "--check", "plans/p.json"], { cwd: repo });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      "records its inventory as ../secret.yaml, which is outside the current folder",
    );
    expect(r.stderr + r.stdout).not.toContain("ghp_SECRET");
    // Named by the user, it is read (and fails as an inventory would).
    const named = gpuplan(["compile", "p.yaml", "--check", "plans/p.json", "--inventory", "../secret.yaml"], {
      cwd: repo,
    });
    expect(named.exitCode).toBe(1);
  });

  it("a link inside the folder that leads out of it is outside too", () => {
    const { dir, repo } = checkout();
    symlinkSync(join(dir, "secret.yaml"), join(repo, "inventories/link.yaml"));
    relabel(repo, "file:../inventories/link.yaml");
    const r = gpuplan(["compile", "p.yaml", "--check", "plans/p.json"], { cwd: repo });
    expect(r.exitCode).toBe(2);
    expect(r.stderr + r.stdout).not.toContain("ghp_SECRET");
  });

  it.each([
    ["[]", "[]"],
    ["truncated", '{"schema": "gpuplan/plan@2", "pipel'],
    ["a merge conflict", "<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> branch\n"],
  ])("a --check file that is not a plan (%s) says so, exit 2, without detecting this machine", (_, text) => {
    const { repo } = checkout();
    writeFileSync(join(repo, "plans/p.json"), text);
    const r = gpuplan(["compile", "p.yaml", "--check", "plans/p.json"], { cwd: repo });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("plans/p.json is not a gpuplan plan");
    expect(r.stderr).not.toContain("no-usable-gpu");
  });

  it("a plan that records no inventory says so, not that it is no plan", () => {
    const { repo } = checkout();
    const path = join(repo, "plans/p.json");
    const plan = JSON.parse(readFileSync(path, "utf8")) as { inventory: { label?: string } };
    delete plan.inventory.label;
    writeFileSync(path, JSON.stringify(plan, null, 2));
    const r = gpuplan(["compile", "p.yaml", "--check", "plans/p.json"], { cwd: repo });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("plans/p.json records no inventory (inventory.label)");
  });

  it("a folder given to --check is a usage error (exit 2)", () => {
    const { repo } = checkout();
    const r = gpuplan(["compile", "p.yaml", "--check", "plans"], { cwd: repo });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("cannot read plan plans: it is a directory");
  });
});

describe("compile -o", () => {
  it("refuses to overwrite the custom target it compiles against", () => {
    const { repo } = checkout();
    mkdirSync(join(repo, ".gpuplan/targets"), { recursive: true });
    const before = readFileSync(join(repo, "inventories/l4.yaml"), "utf8");
    writeFileSync(join(repo, ".gpuplan/targets/mine.yaml"), before);
    const r = gpuplan(["compile", "p.yaml", "--target", "mine", "-o", ".gpuplan/targets/mine.yaml"], {
      cwd: repo,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("an input of this compile");
    expect(readFileSync(join(repo, ".gpuplan/targets/mine.yaml"), "utf8")).toBe(before);
  });

  it("refuses an empty file name instead of writing to stdout", () => {
    const { repo } = checkout();
    const r = gpuplan(["compile", "p.yaml", "--target", "cpu-only", "-o", ""], { cwd: repo });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("It is empty: name a file or folder.  [invalid-option-value]");
  });
});
