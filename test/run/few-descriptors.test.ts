// Out of file descriptors (a low `ulimit -n`, many steps at once): what cannot be opened fails
// the one thing that needed it, in words — never the whole run with Node's stack. Each case runs
// the built modules in a node of its own whose descriptors are used up (/dev/null opened until
// EMFILE) just before the call, and given back just after.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hasCrashed, ROOT } from "../helpers/cli.js";

/** Run `body` (an async function body, ESM) in a node with at most 64 descriptors; its JSON result. */
function underFewDescriptors(
  imports: string,
  body: string,
): { result?: unknown; stderr: string; status: number | null } {
  const script = `${imports}
import { openSync, closeSync } from "node:fs";
const exhaust = () => { const fds = []; try { for (;;) fds.push(openSync("/dev/null", "r")); } catch (e) { if (e.code !== "EMFILE") throw e; } return () => { for (const fd of fds) closeSync(fd); }; };
const result = await (async () => { ${body} })();
process.stdout.write(JSON.stringify(result ?? null));
`;
  const r = spawnSync(
    "sh",
    ["-c", 'ulimit -n 64 && exec "$0" --input-type=module -e "$1"', process.execPath, script],
    {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 20_000,
    },
  );
  return { ...(r.stdout ? { result: JSON.parse(r.stdout) } : {}), stderr: r.stderr, status: r.status };
}

const dist = (path: string) => JSON.stringify(join(ROOT, "dist", path));

describe("out of file descriptors", () => {
  it("a step that cannot get /dev/null for its stdin fails to start, saying EMFILE; nothing throws", () => {
    const r = underFewDescriptors(
      `import { startProcess } from ${dist("run/step/spawn/start-process.js")};
       import { loadPosixSpawner } from ${dist("run/step/spawn/posix-spawn.js")};`,
      `if (!(await loadPosixSpawner())) return { skipped: "no native starter" };
       const out = openSync("/dev/null", "w");
       const release = exhaust();
       let started;
       try {
         started = await startProcess({ command: "true", args: [], cwd: process.cwd(), env: { PATH: process.env.PATH }, stdout: out, stderr: out, inheritFds: [] });
       } catch (e) {
         started = { threw: String(e) };
       } finally {
         release();
       }
       return started;`,
    );
    expect(r.stderr).toBe("");
    if ((r.result as { skipped?: string }).skipped) return;
    expect(r.result).toEqual({ error: "cannot open /dev/null for its stdin: EMFILE" });
  });

  it("a probe child Node cannot start (no descriptors for its pipes) is a crash saying why, not a TypeError", () => {
    const r = underFewDescriptors(
      `import { startChild } from ${dist("detect/spawn-child.js")};`,
      `const release = exhaust();
       let child;
       try {
         child = startChild([], { env: process.env, slowInitMs: 1000, amdDriverLoaded: false });
       } catch (e) {
         release();
         return { threw: String(e) };
       }
       release();
       return (await child.run).end;`,
    );
    expect(r.stderr).toBe("");
    expect(r.result).toEqual({
      kind: "crash",
      detail: expect.stringMatching(/^could not start: spawn .* EMFILE$/),
    });
  });

  it("a failure whose reporter cannot be loaded is still said in one line, exit 2, no stack", () => {
    const r = underFewDescriptors(
      `import { reportFailure } from ${dist("cli/run-command.js")};`,
      `const release = exhaust();
       try {
         return await reportFailure(new Error("cannot open journal.jsonl: EMFILE"), "human");
       } finally {
         release();
       }`,
    );
    expect(r.result).toBe(2);
    expect(r.stderr).toMatch(
      /^gpuplan: error: cannot open journal\.jsonl: EMFILE\n {2}\(the failure could not be reported in full: .*EMFILE.*\)\n$/,
    );
  });

  it("a failure of gpuplan's own whose reporter cannot be loaded keeps its code and hint", () => {
    const r = underFewDescriptors(
      `import { reportFailure } from ${dist("cli/run-command.js")};
       import { UsageError } from ${dist("problems/errors.js")};`,
      `const e = new UsageError("cannot write the run's journal r/journal.jsonl: too many open files", "unwritable-file", "raise the limit (ulimit -n)");
       const release = exhaust();
       try {
         return await reportFailure(e, "human");
       } finally {
         release();
       }`,
    );
    expect(r.result).toBe(2);
    expect(r.stderr).toMatch(
      /^gpuplan: error: cannot write the run's journal r\/journal\.jsonl: too many open files {2}\[unwritable-file\]\n {2}hint: raise the limit \(ulimit -n\)\n {2}\(the failure could not be reported in full: .*EMFILE.*\)\n$/,
    );
  });

  it("the one line of a failure whose reporter cannot be loaded shows outside text escaped", () => {
    // A file name or a vendor's string in the message: a title-setting escape, a bidi override, a newline.
    const message = "cannot open run-\u001b]0;owned\u0007-\u202egnp.exe\nforged line: EMFILE";
    const r = underFewDescriptors(
      `import { reportFailure } from ${dist("cli/run-command.js")};`,
      `const release = exhaust();
       try {
         return await reportFailure(new Error(${JSON.stringify(message)}), "human");
       } finally {
         release();
       }`,
    );
    expect(r.result).toBe(2);
    expect(r.stderr).toMatch(/\(the failure could not be reported in full: .*EMFILE.*\)\n$/);
    expect(r.stderr.split("\n")[0]).toBe(
      "gpuplan: error: cannot open run-\\x1b]0;owned\\x07-\\u202egnp.exe\\x0aforged line: EMFILE",
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    expect(r.stderr.replace(/\n/g, "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
  });

  it("a new run whose journal or events.jsonl cannot be opened: a located unwritable-file error, exit 2, no run folder left", () => {
    // Which descriptor runs out first depends on how many Node and the CLI hold by then, so each
    // limit from where the CLI loads to where the run starts is tried: at one of them the run
    // folder and plan.json are made and journal.jsonl is the file that cannot be opened, at the
    // next events.jsonl. That folder used to stay, without a journal: `gpuplan runs` listed it as
    // damaged, --resume refused it; events.jsonl was Node's bare EMFILE, the journal left open.
    const cwd = mkdtempSync(join(tmpdir(), "gpuplan-nofile-"));
    try {
      writeFileSync(
        join(cwd, "p.yaml"),
        'version: 1\npipelines:\n  - name: p\n    steps:\n      - id: a\n        run: ["true"]\n',
      );
      const missing = "/nonexistent/gpuplan-test-library.so";
      const env = {
        ...process.env,
        GPUPLAN_NVML_LIBRARY: missing,
        GPUPLAN_CUDA_LIBRARY: missing,
        GPUPLAN_ROCM_SMI_LIBRARY: missing,
        GPUPLAN_AMD_SMI_LIBRARY: missing,
        GPUPLAN_HIP_LIBRARY: missing,
        NO_COLOR: "1",
        CI: "1",
      };
      const refused = { journal: 0, events: 0 };
      for (let limit = 16; limit <= 40; limit++) {
        rmSync(join(cwd, ".gpuplan"), { recursive: true, force: true });
        const r = spawnSync(
          "sh",
          [
            "-c",
            `ulimit -n ${limit} && exec "$0" "$@"`,
            process.execPath,
            join(ROOT, "bin/gpuplan.js"),
            "run",
            "p.yaml",
            "--ui",
            "plain",
          ],
          { cwd, env, encoding: "utf8", timeout: 20_000 },
        );
        const runs = join(cwd, ".gpuplan/runs");
        for (const run of existsSync(runs) ? readdirSync(runs) : [])
          expect(
            existsSync(join(runs, run, "journal.jsonl")),
            `ulimit -n ${limit}: ${run}\n${r.stderr}`,
          ).toBe(true);
        const file = /journal\.jsonl/.test(r.stderr)
          ? "journal"
          : /events\.jsonl/.test(r.stderr)
            ? "events"
            : null;
        if (file === null) continue;
        refused[file]++;
        expect(r.status, r.stderr).toBe(2);
        expect(hasCrashed({ exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr }), r.stderr).toBe(
          false,
        );
        expect(r.stderr).toMatch(
          new RegExp(
            `^gpuplan: error: cannot write the run's ${file} \\S+${file}\\.jsonl: too many open files {2}\\[unwritable-file\\]\n {2}hint: raise the limit \\(ulimit -n\\)`,
          ),
        );
        expect(existsSync(runs) ? readdirSync(runs) : [], `ulimit -n ${limit}`).toEqual([]);
      }
      expect(refused.journal, "no limit made the journal the file that could not be opened").toBeGreaterThan(
        0,
      );
      expect(refused.events, "no limit made events.jsonl the file that could not be opened").toBeGreaterThan(
        0,
      );
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
