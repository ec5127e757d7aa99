// The live view on a real pseudo-terminal (util-linux `script`), as a person at a terminal sees it:
// ink's colour is our painter's, so NO_COLOR removes every SGR colour code while colour shows
// without it; and on a 40×12 terminal the view never grows as tall as the terminal, which would
// make ink clear the whole screen on every frame; a forced `--ui tui` on a terminal that reports no
// size (0×0) draws at 80×24 rather than zero columns wide, clearing the screen at every frame.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../../helpers/cli.js";

const EXAMPLE = join(ROOT, "examples/hello-cpu.yaml");
const MISSING = "/nonexistent/gpuplan-test-library.so";
const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;
// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR colour codes are what is checked
const SGR = /\u001b\[[0-9;]*m/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ink's frame updates are CSI sequences
const CSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const CLEAR_SCREEN = "\u001b[2J";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** `gpuplan run` on a pty of the given size (0×0: none), outside CI; everything the terminal received. */
function runOnPty(columns: number, rows: number, env: Record<string, string>, args = ""): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k === "CI" || k.startsWith("CI_") || k === "CONTINUOUS_INTEGRATION") continue;
    if (k === "NO_COLOR" || k === "FORCE_COLOR") continue;
    base[k] = v;
  }
  const command = `stty cols ${columns} rows ${rows} && exec '${process.execPath}' '${join(ROOT, "bin/gpuplan.js")}' run '${EXAMPLE}'${args}`;
  const r = spawnSync("script", ["-qfec", command, "/dev/null"], {
    cwd: t.dir,
    encoding: "utf8",
    timeout: 60_000,
    env: {
      ...base,
      TERM: "xterm-256color",
      GPUPLAN_NVML_LIBRARY: MISSING,
      GPUPLAN_CUDA_LIBRARY: MISSING,
      GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
      GPUPLAN_AMD_SMI_LIBRARY: MISSING,
      GPUPLAN_HIP_LIBRARY: MISSING,
      GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
      ...env,
    },
  });
  expect(r.status, r.stdout + r.stderr).toBe(0);
  const out = r.stdout;
  // It was the live view: ink hides the cursor and redraws the header with its progress bar.
  expect(out).toContain("\u001b[?25l");
  const text = out.replace(CSI, "");
  expect(text).toMatch(/\[[█░]+\] 9\/9 steps/);
  expect(text).toMatch(/run \S+ done: 9 ok, 0 failed, 0 skipped/);
  return out;
}

describe.skipIf(!hasScript)("the live view on a pseudo-terminal", () => {
  it("NO_COLOR=1 leaves no SGR colour code anywhere, the live frames included", { timeout: 90_000 }, () => {
    const out = runOnPty(80, 24, { NO_COLOR: "1" });
    expect(out).not.toMatch(SGR);
  });

  it("without NO_COLOR the live view is coloured (the bar green, lane ids cyan)", { timeout: 90_000 }, () => {
    const out = runOnPty(80, 24, {});
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the bar's colour codes are what is checked
    expect(out).toMatch(/\u001b\[32m\[[█░]+\]\u001b\[39m \d+\/9 steps/);
    expect(out).toContain("\u001b[36mcpu\u001b[39m");
  });

  it("at 40×12 it never clears the terminal and no line is wider than 40 columns", {
    timeout: 90_000,
  }, () => {
    const out = runOnPty(40, 12, { NO_COLOR: "1" });
    expect(out).not.toContain(CLEAR_SCREEN);
    // The live frames: from ink hiding the cursor to the summary (the warnings before are plain lines).
    const frames = out.slice(out.indexOf("\u001b[?25l"), out.lastIndexOf("\n", out.indexOf(" done: 9 ok")));
    for (const line of frames.replace(CSI, "").split(/\r?\n/))
      expect([...line].length, line).toBeLessThanOrEqual(40);
  });

  it("forced (--ui tui) on a terminal that reports no size (0×0) it draws at 80×24: the view whole, never clearing the terminal", {
    timeout: 90_000,
  }, () => {
    const out = runOnPty(0, 0, { NO_COLOR: "1" }, " --ui tui");
    expect(out).not.toContain(CLEAR_SCREEN);
    const frames = out.slice(out.indexOf("\u001b[?25l"), out.lastIndexOf("\n", out.indexOf(" done: 9 ok")));
    for (const line of frames.replace(CSI, "").split(/\r?\n/))
      expect([...line].length, line).toBeLessThanOrEqual(80);
  });
});
