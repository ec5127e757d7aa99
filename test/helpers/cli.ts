/** Run the built CLI the way a user does: `node bin/gpuplan.js …` from the repository root. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  nodeArgs?: string[];
  input?: string;
  /** Kill the CLI after this long (default 30 s): a test of something that could hang fails sooner. */
  timeoutMs?: number;
}

export function gpuplan(args: readonly string[], options: CliOptions = {}): CliResult {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", ...options.env };
  delete env.FORCE_COLOR;
  if (options.env && "FORCE_COLOR" in options.env) env.FORCE_COLOR = options.env.FORCE_COLOR;
  const r = spawnSync(
    process.execPath,
    [...(options.nodeArgs ?? []), join(ROOT, "bin/gpuplan.js"), ...args],
    {
      cwd: options.cwd ?? ROOT,
      env: env as NodeJS.ProcessEnv,
      encoding: "utf8",
      input: options.input ?? "",
      timeout: options.timeoutMs ?? 30_000,
      // Node's default (1 MiB) would cut a plan on stdout short.
      maxBuffer: 64 * 2 ** 20,
    },
  );
  if (r.error) throw r.error;
  return { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Run the CLI and list the modules matching `pattern` that it loaded (ESM or CommonJS). */
export function loadedModules(
  args: readonly string[],
  pattern: string,
): { result: CliResult; modules: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-modules-"));
  const log = join(dir, "modules.log");
  try {
    const result = gpuplan(args, {
      nodeArgs: ["--import", join(ROOT, "test/helpers/record-modules.mjs")],
      env: { GPUPLAN_TEST_MODULE_LOG: log, GPUPLAN_TEST_MODULE_PATTERN: pattern },
    });
    let text = "";
    try {
      text = readFileSync(log, "utf8");
    } catch {
      // Nothing matched: the log was never written.
    }
    return { result, modules: text.split("\n").filter(Boolean) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A pipeline file of `pipelines` × 5 CPU steps in `dir` whose plan is a few MB, far more than a
 * pipe holds; `pad` lengthens each step's argument (a bigger plan).
 */
export function writeBigPipeline(dir: string, pipelines: number, pad = ""): string {
  const lines = ["version: 1", "name: big", "pipelines:"];
  for (let p = 0; p < pipelines; p++) {
    lines.push(`  - name: p${p}`, "    steps:");
    for (let s = 0; s < 5; s++)
      lines.push(`      - { id: s${s}, run: [echo, "${p}-${s}${pad}"], memory: numpy }`);
  }
  const file = join(dir, "big.yaml");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-test-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Fail loudly if a run printed our bug banner or a stack trace. */
export function hasCrashed(r: CliResult): boolean {
  const all = `${r.stdout}\n${r.stderr}`;
  return /internal error|this is a bug in gpuplan|\n\s+at .+:\d+:\d+\)?\n|TypeError|ReferenceError|RangeError/.test(
    all,
  );
}
