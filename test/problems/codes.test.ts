// The code registry is the one list of what gpuplan may print: every code used in src/ has an
// entry, every entry is used, and each entry says enough for `gpuplan explain` and the docs.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { CommandLineError } from "../../src/cli/command-line-error.js";
import { CODES, type Code } from "../../src/problems/codes.js";
import type { UsageError, VendorError } from "../../src/problems/errors.js";
import { EXIT } from "../../src/problems/exit-codes.js";
import type { Problem } from "../../src/problems/problem.js";
import { gpuplan, hasCrashed, ROOT } from "../helpers/cli.js";

const REGISTRY = "src/problems/codes.ts";

function sourceFiles(): { path: string; text: string }[] {
  return readdirSync(join(ROOT, "src"), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name))
    .map((file) => ({ path: relative(ROOT, file), text: readFileSync(file, "utf8") }))
    .filter((f) => f.path !== REGISTRY && !f.path.startsWith("src/schema-types/"));
}

const KEBAB = /"([a-z0-9]+(?:-[a-z0-9]+)+)"/g;

describe("the code registry", () => {
  it("types every code field by the registry, so an unlisted code does not compile", () => {
    expectTypeOf<Problem["code"]>().toEqualTypeOf<Code>();
    expectTypeOf<UsageError["code"]>().toEqualTypeOf<Code>();
    expectTypeOf<VendorError["code"]>().toEqualTypeOf<Code>();
    expectTypeOf<CommandLineError["code"]>().toEqualTypeOf<Code>();
  });

  it("has an entry for every code src/ sets, and src/ uses every entry", () => {
    const files = sourceFiles();
    // Lines that set a code: `code: "…"`, `code: a ? "…" : "…"`, a `codes` table, a `: Code =`,
    // or the code argument of an error (`new UsageError(msg, "…"`, on its own line).
    const setting = new Set<string>();
    for (const { text } of files) {
      const lines = text.split("\n");
      lines.forEach((line, i) => {
        const previous = lines.slice(Math.max(0, i - 3), i).join("\n");
        const inError = /new (UsageError|VendorError|CommandLineError)\($/m.test(previous);
        if (/\bcodes?\b|\bCode\b/.test(line) || (inError && /^\s*"[a-z0-9-]+",\s*$/.test(line))) {
          for (const m of line.matchAll(KEBAB)) setting.add(m[1]!);
        }
      });
    }
    const known = new Set(Object.keys(CODES));
    const allText = files.map((f) => f.text).join("\n");
    const quoted = new Set([...allText.matchAll(KEBAB)].map((m) => m[1]!));
    // Option choices and the like also match the pattern; only those that look like codes count.
    const notInRegistry = [...setting].filter((c) => !known.has(c) && !NOT_CODES.has(c)).sort();
    expect(notInRegistry, "codes set in src/ but missing from src/problems/codes.ts").toEqual([]);
    const unused = [...known].filter((c) => !quoted.has(c)).sort();
    expect(unused, "registry codes that nothing in src/ reports").toEqual([]);
    expect(setting.size).toBeGreaterThan(50);
  });

  it("gives each entry a one-line title, an explanation and the exit code its kind implies", () => {
    for (const [code, entry] of Object.entries(CODES)) {
      expect(code, code).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(entry.title, code).toMatch(/^[A-Z`].*[^.\s]$/);
      expect(entry.title.includes("\n"), code).toBe(false);
      expect(entry.explanation.length, code).toBeGreaterThan(30);
      expect(entry.explanation, code).toMatch(/[.)]$/);
      const exit = {
        error: EXIT.problems,
        "error or warning": EXIT.problems,
        warning: EXIT.ok,
        failure: EXIT.usage,
      };
      expect(entry.exit, code).toBe(code === "gpu-busy" ? EXIT.busy : exit[entry.kind]);
      if (entry.actor === "bug") expect(entry.kind, code).toBe("failure");
    }
    expect(CODES["internal-error"].actor).toBe("bug");
    expect(CODES["probe-error"].actor).toBe("vendor");
  });
});

/** Kebab-case strings on code-setting lines that are not codes (none today; keep it short). */
const NOT_CODES = new Set<string>();

describe("gpuplan explain", () => {
  it("prints a code's title, who acts, the exit code, the explanation and the hint", () => {
    const r = gpuplan(["explain", "needs-cycle"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(
      /^needs-cycle: Steps need each other in a cycle\n {2}error; yours to fix; exit 1\n\n/,
    );
    expect(r.stdout.replaceAll("\n", " ")).toContain(CODES["needs-cycle"].explanation);
    expect(r.stdout).toContain(`hint: ${CODES["needs-cycle"].hint}`);
    expect(r.stderr).toBe("");
  });

  it("takes the code as printed, in brackets, and explains failures and warnings too", () => {
    expect(gpuplan(["explain", "[internal-error]"]).stdout).toMatch(
      /stops the command; a bug in gpuplan; exit 2/,
    );
    expect(gpuplan(["explain", "missing-vram"]).stdout).toMatch(
      /warning; yours to fix; exit 0 \(1 with --strict\)/,
    );
    expect(gpuplan(["explain", "probe-timeout"]).stdout).toMatch(
      /a vendor library, driver or the system failed/,
    );
  });

  it("lists every code without an argument", () => {
    const r = gpuplan(["explain"]);
    expect(r.exitCode).toBe(0);
    const listed = r.stdout.split("\n").filter((l) => /^[a-z0-9-]+ {2,}\S/.test(l));
    expect(listed.map((l) => l.split(" ")[0])).toEqual(Object.keys(CODES).sort());
  });

  it("an unknown code: did-you-mean, exit 2, with its own code", () => {
    const r = gpuplan(["explain", "needs-cycl"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "gpuplan: error: `needs-cycl` is not a gpuplan code  [unknown-code]\n" +
        "  hint: did you mean `needs-cycle`? gpuplan explain lists every code\n",
    );
    expect(hasCrashed(r)).toBe(false);
  });

  it("an unknown code of 100,000 characters is shown cut, not echoed whole", () => {
    const r = gpuplan(["explain", "x".repeat(100_000)]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      `gpuplan: error: \`${"x".repeat(64)}…\` is not a gpuplan code  [unknown-code]\n` +
        "  hint: gpuplan explain lists every code\n",
    );
  });
});
