// A step's output files read back by gpuplan: whole lines only (a line split across reads, a
// UTF-8 character split across reads), the unterminated last line at the end, the stderr tail,
// lines while the step still runs, and no empty files left by an ok, silent step.
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { follow, OutputFile, openOutput, unfollow } from "../../src/run/step/step-output.js";
import { runStepProcess } from "../../src/run/step/step-process.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-output-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string) {
  const path = join(dir, name);
  const lines: string[] = [];
  const output = new OutputFile(path, openOutput(path), (line) => lines.push(line));
  return { path, lines, output };
}

describe("OutputFile", () => {
  it("emits whole lines only, joins a line and a UTF-8 character split across reads, ends with the unterminated rest", () => {
    const { path, lines, output } = file("split.log");
    const euro = Buffer.from("€"); // 3 bytes
    appendFileSync(path, Buffer.concat([Buffer.from("one\ntw"), euro.subarray(0, 1)]));
    output.pump();
    expect(lines).toEqual(["one"]);
    appendFileSync(path, Buffer.concat([euro.subarray(1), Buffer.from("o\nthree")]));
    output.pump();
    expect(lines).toEqual(["one", "tw€o"]);
    output.finish();
    expect(lines).toEqual(["one", "tw€o", "three"]);
    output.close(false);
  });

  it("a view far behind a fast step skips to the end and says so; a line that never ends comes in pieces", () => {
    const { path, lines, output } = file("flood.log");
    const line = `${"x".repeat(99)}\n`;
    writeFileSync(path, line.repeat(200_000)); // ~20 MB, more than a view is shown at once
    output.finish();
    const notice = lines.find((l) => l.startsWith("[gpuplan:"));
    expect(notice).toMatch(/MiB of output not shown; .*flood\.log has all of it\]$/);
    // What follows the notice is the end of the file (about its last MiB), whole lines but the first.
    const after = lines.slice(lines.indexOf(notice!) + 1);
    expect(after.length).toBeGreaterThan(10_000);
    expect(after.length).toBeLessThan(11_000);
    expect(after.slice(1).every((l) => l === "x".repeat(99))).toBe(true);
    output.close(false);

    const bar = file("bar.log");
    writeFileSync(bar.path, `${"\r42%".repeat(40_000)}`); // 160 KB, no newline
    bar.output.pump();
    expect(bar.lines.length).toBeGreaterThanOrEqual(2);
    expect(bar.lines.every((l) => l.length <= 64 * 1024)).toBe(true);
    bar.output.finish();
    expect(bar.lines.join("")).toBe("\r42%".repeat(40_000));
    bar.output.close(false);
  });

  it("tailLines reads only the end of a large file and drops the line it cut", () => {
    const { path, output } = file("big.log");
    const many = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join("\n");
    writeFileSync(path, `${many}\n`);
    expect(output.tailLines(3)).toEqual(["line 19997", "line 19998", "line 19999"]);
    const tail = output.tailLines(100_000);
    expect(tail.length).toBeLessThan(20_000);
    expect(tail[0]).toMatch(/^line \d+$/);
    output.close(false);
  });

  it("tailLines of a file whose last line is longer than it reads gives that line's end, not nothing", () => {
    const { path, output } = file("one-long-line.log");
    // 200 KB of one line, ending in a multi-byte character, with the window starting inside one.
    const line = `${"é".repeat(100_000)}\u00e9end`;
    writeFileSync(path, `earlier line\n${line}\n`);
    const tail = output.tailLines(40);
    expect(tail).toHaveLength(1);
    expect(tail[0]).toMatch(/^…é+end$/);
    expect(tail[0]).not.toContain("\ufffd");
    // A line cut by the window is still dropped where whole lines follow it.
    appendFileSync(path, "after\n");
    expect(output.tailLines(40)).toEqual(["after"]);
    output.close(false);
  });

  it("a file truncated behind the reader is followed from its start again, as tail -f does", () => {
    const { path, lines, output } = file("truncated.log");
    appendFileSync(path, "before one\nbefore two\n");
    output.pump();
    expect(lines).toEqual(["before one", "before two"]);
    // `: > log` then a shorter line: without the check the reader waited past the old end for good.
    writeFileSync(path, "after\n");
    output.pump();
    expect(lines.slice(2)).toEqual([
      expect.stringMatching(/truncated\.log was truncated; following it from its start\]$/),
      "after",
    ]);
    output.finish();
    expect(lines).toHaveLength(4);
    output.close(false);
  });

  it("tailLines of a file cut below what it held before the step is what the step left, not an error", () => {
    const path = join(dir, "planted.err.log");
    writeFileSync(path, `${"planted\n".repeat(50)}`); // 400 bytes there before the step's attempt
    const output = new OutputFile(path, openOutput(path), null);
    writeFileSync(path, "x\n"); // the step truncates its stderr and writes one line
    expect(output.tailLines(10)).toEqual(["x"]);
    output.close(false);
  });

  it("close(true) removes an empty file and keeps one with content", () => {
    const empty = file("empty.log");
    empty.output.close(true);
    expect(existsSync(empty.path)).toBe(false);
    const full = file("full.log");
    appendFileSync(full.path, "x\n");
    full.output.close(true);
    expect(existsSync(full.path)).toBe(true);
  });

  it("close(true) in a folder made read-only keeps the empty file and does not throw (the run goes on)", (ctx) => {
    const ro = join(dir, "read-only");
    mkdirSync(ro);
    const path = join(ro, "x.err.log");
    const output = new OutputFile(path, openOutput(path), null);
    // A step's chmod -R a-w on its run folder; root ignores modes, so it is made immutable instead.
    chmodSync(ro, 0o555);
    const root = process.getuid?.() === 0;
    if (root && spawnSync("chattr", ["+i", ro]).status !== 0) {
      chmodSync(ro, 0o755);
      ctx.skip("root without chattr +i here: no way to make a folder refuse an unlink");
    }
    try {
      expect(() => output.close(true)).not.toThrow();
      expect(existsSync(path)).toBe(true);
    } finally {
      if (root) spawnSync("chattr", ["-i", ro]);
      chmodSync(ro, 0o755);
    }
  });

  it("a followed file's lines arrive while the writer is still writing", async () => {
    const { path, lines, output } = file("live.log");
    follow(output);
    appendFileSync(path, "first\n");
    for (let i = 0; i < 100 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(lines).toEqual(["first"]);
    unfollow(output);
    output.close(false);
  });
});

describe("runStepProcess output", () => {
  const base = { shell: false, cwd: process.cwd(), env: { PATH: "/usr/bin:/bin" }, killGraceMs: 500 };

  it("shows a long step's lines while it runs, keeps stdout and stderr apart, and tails stderr on failure", async () => {
    const seen: { stream: string; line: string; at: number }[] = [];
    const started = performance.now();
    const result = await runStepProcess({
      ...base,
      argv: ["/bin/sh", "-c", "echo early; sleep 0.6; echo late; echo bad >&2; exit 4"],
      logPath: join(dir, "s.out.log"),
      stderrPath: join(dir, "s.err.log"),
      onLine: (stream, line) => seen.push({ stream, line, at: performance.now() - started }),
    });
    expect(result).toMatchObject({ exitCode: 4, stderrTail: ["bad"] });
    expect(seen.map(({ stream, line }) => `${stream}:${line}`)).toEqual([
      "stdout:early",
      "stdout:late",
      "stderr:bad",
    ]);
    // "early" was shown long before the step ended, not collected at its exit.
    expect(seen[0]!.at).toBeLessThan(seen[1]!.at - 300);
  });

  it("a log file that cannot be opened fails the step with the reason, it does not throw", async () => {
    const notADir = join(dir, "plain-file");
    writeFileSync(notADir, "");
    const result = await runStepProcess({
      ...base,
      argv: ["true"],
      logPath: join(notADir, "x.out.log"),
      stderrPath: join(notADir, "x.err.log"),
    });
    expect(result.pid).toBeNull();
    expect(result.spawnError).toMatch(/^cannot open its log file .*plain-file.*: (ENOTDIR|EEXIST)$/);
  });

  it("a logs folder removed while the run runs is made again for the next step; a removed run folder is not", async () => {
    const runDir = join(dir, "removed-run");
    const logs = join(runDir, "logs");
    mkdirSync(logs, { recursive: true });
    const step = (name: string) =>
      runStepProcess({
        ...base,
        argv: ["/bin/sh", "-c", `echo ${name}`],
        logPath: join(logs, `${name}.out.log`),
        stderrPath: join(logs, `${name}.err.log`),
      });
    expect((await step("first")).exitCode).toBe(0);
    rmSync(logs, { recursive: true }); // `rm -rf RUN/logs` by a step or someone tidying up
    const second = await step("second");
    expect(second).toMatchObject({ exitCode: 0 });
    expect(readFileSync(join(logs, "second.out.log"), "utf8")).toBe("second\n");
    rmSync(runDir, { recursive: true });
    const third = await step("third");
    expect(third.pid).toBeNull();
    expect(third.spawnError).toMatch(
      /^cannot open its log file .*third\.out\.log: its run folder was removed \(ENOENT\)$/,
    );
    expect(existsSync(runDir)).toBe(false);
  });

  it("an ok step that printed nothing leaves no files; one that printed keeps its file", async () => {
    const quiet = await runStepProcess({
      ...base,
      argv: ["true"],
      logPath: join(dir, "q.out.log"),
      stderrPath: join(dir, "q.err.log"),
    });
    expect(quiet.exitCode).toBe(0);
    expect(existsSync(join(dir, "q.out.log")) || existsSync(join(dir, "q.err.log"))).toBe(false);
    await runStepProcess({
      ...base,
      argv: ["/bin/sh", "-c", "echo hi"],
      logPath: join(dir, "h.out.log"),
      stderrPath: join(dir, "h.err.log"),
    });
    expect(existsSync(join(dir, "h.out.log"))).toBe(true);
    expect(existsSync(join(dir, "h.err.log"))).toBe(false);
  });
});
