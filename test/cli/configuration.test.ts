// Configuration is resolved once, by the CLI: every GPUPLAN_* user setting is also a flag
// (commander's .env()), parsed by the same parser, and handed to the core as an option. The core
// reads the environment only where it passes it on to steps, and where detect takes the
// vendor-library overrides (injected, with process.env as the default).
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { durationArgument, sizeArgument, takeArgumentFailureCode } from "../../src/cli/arg-parsers.js";
import { createProgram, USER_SETTINGS } from "../../src/cli/program.js";
import { MAX_DURATION_MS } from "../../src/units/duration.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

/** Files below src/ other than src/cli/ that may read process.env, and why. */
const ENV_READERS: Record<string, string> = {
  "src/detect/index.ts":
    "vendor-library overrides and /proc, /sys roots: options.env, process.env by default",
  "src/detect/prestart.ts": "runs from bin/gpuplan.js before the CLI loads, with the same injected env",
  "src/detect/run-prestart.ts":
    "runs from bin/gpuplan.js before the CLI loads (`run`), with the env detect() will see",
  "src/run/executor/execute-run.ts": "the environment steps inherit (options.env, process.env by default)",
  "src/run/step/step-env.ts": "the environment steps inherit (a parameter, process.env by default)",
  "src/ui/run/view.ts": "--ui auto judges CI as ink does (a parameter, process.env by default)",
};

/** Comments may name process.env (a default, say); only code counts. Crude, but src/ has no `//` in strings that matter here. */
const withoutComments = (text: string): string =>
  text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");

const READS_ENV = /process\s*(\.\s*env\b|\[\s*["'`]env["'`]\s*\])|\{[^}]*\benv\b[^}]*\}\s*=\s*process\b/;

describe("configuration", () => {
  it("no file under src/ outside src/cli reads process.env beyond the allow-list", () => {
    const readers = readdirSync(join(ROOT, "src"), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith(".ts"))
      .map((e) => relative(ROOT, join(e.parentPath, e.name)))
      .filter((file) => !file.startsWith("src/cli/"))
      .filter((file) => READS_ENV.test(withoutComments(readFileSync(join(ROOT, file), "utf8"))));
    expect(readers.filter((file) => !(file in ENV_READERS)).sort()).toEqual([]);
    // The list stays short and true: each entry still reads the environment.
    expect(Object.keys(ENV_READERS).filter((file) => !readers.includes(file))).toEqual([]);
  });

  it("the pattern catches the ways of reading it", () => {
    for (const text of ["process.env.X", 'process["env"]', "const { env } = process;", "process . env"]) {
      expect(READS_ENV.test(text), text).toBe(true);
    }
    expect(READS_ENV.test("options.env ?? baseEnv")).toBe(false);
  });

  it("every user setting is an option with .env(), and every option's variable is a user setting", () => {
    const program = createProgram("human");
    const envVars = program.commands.flatMap((c) =>
      c.options.flatMap((o) => (o.envVar === undefined ? [] : [o.envVar])),
    );
    expect([...new Set(envVars)].sort()).toEqual([...USER_SETTINGS].sort());
  });
});

describe("shared argument parsers", () => {
  it("durations: units, bounds, one code for every mistake", () => {
    const any = durationArgument();
    expect(any("1500")).toBe(1500);
    expect(any("10m")).toBe(600_000);
    expect(any("24d")).toBe(MAX_DURATION_MS);
    expect(MAX_DURATION_MS).toBeLessThan(2 ** 31);
    for (const [bad, message] of [
      ["25d", "It is longer than 24d, the most gpuplan waits for anything."],
      // Past the 365 days a pipeline file may give: too long still, never 'did you mean 1000d?'.
      ["1000d", "It is longer than 24d, the most gpuplan waits for anything."],
      ["99999999999999", "It is longer than 24d, the most gpuplan waits for anything."],
      ["banana", "It is not a duration."],
      ["-1s", "It is not a duration."],
      [
        "10 mins",
        "It is not a duration: did you mean 10m? A duration is milliseconds or a number with a unit: ms, s, m, h or d",
      ],
    ] as const) {
      expect(() => any(bad)).toThrow(message);
      expect(takeArgumentFailureCode()).toBe("invalid-duration");
      expect(takeArgumentFailureCode()).toBeUndefined();
    }
    expect(() => durationArgument({ min: 1 })("0")).toThrow("It must be longer than 0.");
    expect(() => durationArgument({ min: 1000 })("10ms")).toThrow("It is shorter than 1.0s.");
    expect(() => durationArgument({ max: 60_000 })("2m")).toThrow("It is longer than 1m.");
    expect(takeArgumentFailureCode()).toBe("invalid-duration");
  });

  it("sizes: units, bounds, one code", () => {
    const size = sizeArgument({ min: 1024, max: 2 ** 40 });
    expect(size("12GiB")).toBe(12 * 2 ** 30);
    expect(size("2048")).toBe(2048);
    for (const [bad, message] of [
      ["12 apples", "It is not a size. A size is bytes or a number with a unit: B, kB, MB, GB, TB"],
      ["12gib", "It is not a size: did you mean 12GiB?"],
      ["4G", "It is not a size: did you mean 4GiB or 4GB?"],
      ["1KB", "It is less than 1 KiB."],
      ["2TiB", "It is more than 1 TiB."],
    ] as const) {
      expect(() => size(bad)).toThrow(message);
      expect(takeArgumentFailureCode()).toBe("invalid-size");
    }
  });
});

describe("GPUPLAN_* settings through the command line", () => {
  it("--lock-dir wins over GPUPLAN_LOCK_DIR, which wins over the default; an empty variable is unset", () => {
    const t = tempDir();
    try {
      const fromEnv = gpuplan(["locks", "--json"], { env: { GPUPLAN_LOCK_DIR: join(t.dir, "env") } });
      expect(JSON.parse(fromEnv.stdout).dir).toBe(join(t.dir, "env"));
      const fromFlag = gpuplan(["locks", "--json", "--lock-dir", join(t.dir, "flag")], {
        env: { GPUPLAN_LOCK_DIR: join(t.dir, "env") },
      });
      expect(JSON.parse(fromFlag.stdout).dir).toBe(join(t.dir, "flag"));
      const empty = gpuplan(["locks", "--json"], { env: { GPUPLAN_LOCK_DIR: "" } });
      // No shared directory on a test machine: this user's private one.
      expect(JSON.parse(empty.stdout).dir).toBe(`/tmp/gpuplan-locks-${process.geteuid!()}`);
    } finally {
      t.cleanup();
    }
  });

  it("a lock directory that is a file is a usage error; a missing one just holds no locks", () => {
    const t = tempDir();
    try {
      const file = join(t.dir, "file");
      writeFileSync(file, "");
      const r = gpuplan(["locks", "--lock-dir", file]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(`the GPU lock directory ${file} is not a directory  [lock-dir]`);
      const fromEnv = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: file } });
      expect(fromEnv.exitCode).toBe(2);
      const missing = gpuplan(["locks", "--lock-dir", join(t.dir, "none")]);
      expect(missing.exitCode).toBe(0);
      expect(missing.stdout).toContain("No GPU slot is held.");
    } finally {
      t.cleanup();
    }
  });

  it("a bad duration is invalid-duration wherever it comes from, and says where", () => {
    const cases = [
      [["detect", "--timeout", "25d"], {}, "option '--timeout <duration>' argument '25d' is invalid"],
      [["detect", "--timeout", "0"], {}, "It must be longer than 0."],
      [["run", "x.json", "--lock-timeout", "soon"], {}, "option '--lock-timeout <duration>' argument 'soon'"],
      [["run", "x.json"], { GPUPLAN_KILL_GRACE: "30 days" }, "value '30 days' from env 'GPUPLAN_KILL_GRACE'"],
      [["run", "x.json", "--kill-grace", "99d"], {}, "It is longer than 24d"],
    ] as const;
    for (const [args, env, message] of cases) {
      const r = gpuplan(args, { env });
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toContain(message);
      expect(r.stderr, args.join(" ")).toContain("[invalid-duration]");
      expect(r.stderr).toContain("hint: e.g. 30s, 10m, 2h; see gpuplan ");
      expect(hasCrashed(r)).toBe(false);
    }
  });

  it("a bad choice in a variable is refused before anything runs", () => {
    const r = gpuplan(["run", "x.json"], { env: { GPUPLAN_SPAWN: "fork" } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("option '--spawn <starter>' value 'fork' from env 'GPUPLAN_SPAWN' is invalid");
    expect(r.stderr).toContain("[invalid-option-value]");
  });

  it("--help names each variable", () => {
    const help = gpuplan(["run", "--help"]).stdout.replace(/\s+/g, " ");
    for (const name of USER_SETTINGS) expect(help).toContain(`env: ${name}`);
  });
});
