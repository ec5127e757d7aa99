/**
 * Inputs that must not hang or exhaust memory (#11 items 6–8): each is a located error with exit
 * 1, found before any work proportional to the attack is done. Run through the CLI, so that a
 * hang or a heap abort fails the test (30 s timeout) instead of taking the test runner down.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Problem } from "../../src/problems/problem.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";
import { check, one, pipelines, yaml } from "../helpers/pipeline.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

function compileText(name: string, text: string, args: string[] = ["--target", "rtx4090"]) {
  const file = join(tmp.dir, name);
  writeFileSync(file, text);
  const r = gpuplan(["compile", file, ...args, "--format", "json"]);
  expect(hasCrashed(r), r.stderr).toBe(false);
  const report = JSON.parse(r.stdout) as { ok: boolean; problems: Problem[] };
  return { ...r, file, problems: report.problems };
}

const ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";

describe("matrix expansion is counted before it is done", () => {
  it("a 270-byte file with 10^10 combinations is one located error", () => {
    const text = `version: 1
pipelines:
  - name: p-{a}{b}{c}{d}{e}{f}{g}{h}{i}{j}
    matrix: { a: ${ten}, b: ${ten}, c: ${ten}, d: ${ten}, e: ${ten}, f: ${ten}, g: ${ten}, h: ${ten}, i: ${ten}, j: ${ten} }
    steps: [{ id: s, run: [echo] }]
`;
    const r = compileText("matrix-bomb.yaml", text);
    expect(r.exitCode).toBe(1);
    const p = one(r.problems, "too-many-pipelines");
    expect(p.message).toContain("10,000,000,000");
    expect(p.message).toContain("100,000");
    expect([p.line, p.column]).toEqual([4, 13]);
    expect(p.hint).toContain("limits.max_pipelines");
  });

  it("counts every template together and points at the one that crosses the limit", () => {
    const loaded = check(yaml`
      version: 1
      limits: { max_pipelines: 10 }
      pipelines:
        - name: a{x}
          matrix: { x: [1, 2, 3, 4, 5, 6] }
          steps: [{ id: s, run: [echo] }]
        - name: b{x}
          matrix: { x: [1, 2, 3, 4, 5] }
          steps: [{ id: s, run: [echo] }]
    `);
    const p = one(loaded.problems, "too-many-pipelines");
    expect(p.pointer).toBe("/pipelines/1/matrix");
    expect(p.message).toContain("11");
    expect(loaded.resolved).toBeUndefined();
  });

  it("limits.max_pipelines raises (or lowers) the cap", () => {
    const file = (max: number) => yaml`
      version: 1
      limits: { max_pipelines: ${max} }
      pipelines:
        - name: a{x}-{y}
          matrix: { x: [1, 2, 3], y: [1, 2, 3, 4] }
          steps: [{ id: s, run: [echo] }]
    `;
    expect(pipelines(check(file(12)))).toHaveLength(12);
    one(check(file(11)).problems, "too-many-pipelines");
  });

  it("steps are capped too: 100,000 pipelines of many steps is one located error", () => {
    const steps = Array.from({ length: 20 }, (_, i) => `{ id: s${i}, run: [echo] }`).join(", ");
    const text = `version: 1\npipelines:\n  - name: p{a}{b}{c}{d}{e}\n    matrix: { a: ${ten}, b: ${ten}, c: ${ten}, d: ${ten}, e: ${ten} }\n    steps: [${steps}]\n`;
    const r = compileText("steps-bomb.yaml", text);
    expect(r.exitCode).toBe(1);
    const p = one(r.problems, "too-many-steps");
    expect(p.message).toContain("2,000,000");
    expect(p.hint).toContain("limits.max_steps");
    expect(p.line).toBe(4);
  });

  it("what the file writes out is never refused, only what matrices add", () => {
    const written = check(yaml`
      version: 1
      limits: { max_pipelines: 2, max_steps: 2 }
      pipelines:
        - { name: a, steps: [{ id: s, run: [echo] }] }
        - { name: b, steps: [{ id: s, run: [echo] }] }
        - { name: c, steps: [{ id: s, run: [echo] }] }
    `);
    expect(written.problems).toEqual([]);
    const expanded = check(yaml`
      version: 1
      limits: { max_pipelines: 2, max_steps: 2 }
      pipelines:
        - { name: a, steps: [{ id: s, run: [echo] }] }
        - { name: b, steps: [{ id: s, run: [echo] }] }
        - { name: "c{x}", matrix: { x: [1, 2] }, steps: [{ id: s, run: [echo] }] }
    `);
    const p = one(expanded.problems, "too-many-pipelines");
    expect(p.message).toBe("the matrices expand to 4 pipelines, more than the limit of 3");
  });

  it("a 400 kB file whose one matrix value fills 3,000 placeholders is one located error, not a 300 MB plan", () => {
    const text = `version: 1
pipelines:
  - name: p
    matrix: { v: ["${"v".repeat(100_000)}"] }
    steps: [{ id: s, run: [echo, "${"{v}".repeat(3000)}"] }]
`;
    const r = compileText("text-bomb.yaml", text);
    expect(r.exitCode).toBe(1);
    const p = one(r.problems, "too-much-expanded-text");
    expect(p.message).toContain("about 300 MB of text");
    expect(p.message).toContain("the limit of 200 MB");
    expect([p.line, p.column]).toEqual([4, 13]);
  });

  it("a step with no placeholder counts for every pipeline the plan writes it in", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p{a}{b}
          matrix: { a: ${ten}, b: [${Array.from({ length: 10_000 }, (_, i) => i).join(", ")}] }
          steps: [{ id: s, run: [echo, "${"x".repeat(3000)}"] }]
    `);
    const p = one(loaded.problems, "too-much-expanded-text");
    expect(p.pointer).toBe("/pipelines/0/matrix");
    expect(loaded.resolved).toBeUndefined();
  });

  it("the limits themselves are bounded by the schema", () => {
    const loaded = check(yaml`
      version: 1
      limits: { max_pipelines: 100000000000 }
      pipelines:
        - name: a
          steps: [{ id: s, run: [echo] }]
    `);
    expect(one(loaded.problems, "schema-invalid-value").pointer).toBe("/limits/max_pipelines");
  });
});

describe("YAML alias bombs", () => {
  it("billion laughs inside a valid shape is rejected at the alias that crosses the budget", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(10).fill(`*${prev}`).join(", ")}]`);
    }
    const text = `version: 1
pipelines:
  - name: p
    description: laughs
    env:
      ${levels.join("\n      ")}
    steps: [{ id: s, run: [echo] }]
`;
    const r = compileText("laughs.yaml", text);
    expect(r.exitCode).toBe(1);
    expect(r.problems.map((p) => p.code)).toEqual(["alias-expansion"]);
    const p = r.problems[0]!;
    expect(p.line).toBeGreaterThanOrEqual(6);
    expect(p.column).toBeGreaterThan(1);
    expect(p.hint).toContain("100,000");
  });

  it("a quadratic bomb of valid pipelines is rejected, not compiled", () => {
    const steps = `[&s { id: a, run: [echo] }${", *s".repeat(2999)}]`;
    const text = `version: 1\npipelines: [&p { name: x, steps: ${steps} }${", *p".repeat(2999)}]\n`;
    const r = compileText("quadratic.yaml", text);
    expect(r.exitCode).toBe(1);
    const p = one(r.problems, "alias-expansion");
    expect(p.line).toBe(2);
  });

  it("an aliased string counts by its length: a 1 MB string repeated 2,000 times is one located error", () => {
    const text = `version: 1\npipelines:\n  - name: p\n    steps:\n      - id: s\n        run: [echo, &s "${"y".repeat(1_000_000)}", ${Array(2000).fill("*s").join(", ")}]\n`;
    const r = compileText("string-aliases.yaml", text);
    expect(r.exitCode).toBe(1);
    const p = one(r.problems, "alias-expansion");
    expect(p.message).toContain("10,000,000 characters");
    // The eleventh alias takes the text's 1 MB plus 10 MB past the budget.
    expect(p.pointer).toBe("/pipelines/0/steps/0/run/12");
    expect(p.line).toBe(6);
    expect(p.column).toBeGreaterThan(1_000_000);
  });

  it("strings written out are never counted against the alias budget", () => {
    const long = "y".repeat(100_000);
    const steps = Array.from({ length: 200 }, (_, i) => `{ id: s${i}, run: [echo, "${long}"] }`).join(", ");
    const loaded = check(
      `version: 1\ndefaults: { env: &e { A: "1" } }\npipelines:\n  - { name: p, env: *e, steps: [${steps}] }\n`,
    );
    expect(loaded.problems).toEqual([]);
  });

  it("an alias inside the node it names is a cycle", () => {
    const r = compileText("cycle.yaml", "version: 1\npipelines: &p\n  - name: x\n    steps: [*p]\n");
    expect(r.exitCode).toBe(1);
    const p = one(r.problems, "alias-expansion");
    expect(p.message).toMatch(/inside the node it names/);
    expect([p.line, p.column]).toEqual([4, 13]);
  });

  it("ordinary anchors and aliases still work", () => {
    const loaded = check(yaml`
      version: 1
      defaults:
        env: &env { A: "1" }
      pipelines:
        - name: a
          env: *env
          steps: &steps [{ id: s, run: [echo] }]
        - name: b
          steps: *steps
    `);
    expect(loaded.problems).toEqual([]);
    expect(pipelines(loaded)).toHaveLength(2);
  });

  it("an inventory file is protected the same way", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(10).fill(`*${prev}`).join(", ")}]`);
    }
    const inv = join(tmp.dir, "inv-laughs.yaml");
    writeFileSync(inv, `cpu: { threads: 8 }\ngpus: []\nx:\n  ${levels.join("\n  ")}\n`);
    const r = compileText(
      "ok.yaml",
      "version: 1\npipelines: [{ name: p, steps: [{ id: s, run: [echo] }] }]\n",
      ["--inventory", inv],
    );
    expect(r.exitCode).toBe(1);
    expect(one(r.problems, "alias-expansion").file).toBe(inv);
  });
});

describe("counts are bounded", () => {
  it("an inventory count of 10,000,000 GPUs is a located schema error", () => {
    const inv = join(tmp.dir, "inv-count.yaml");
    writeFileSync(inv, "gpus:\n  - name: H100\n    memory: 80GiB\n    count: 10000000\ncpu:\n  threads: 8\n");
    const r = compileText(
      "ok2.yaml",
      "version: 1\npipelines: [{ name: p, steps: [{ id: s, run: [echo] }] }]\n",
      ["--inventory", inv],
    );
    expect(r.exitCode).toBe(1);
    const p = r.problems.find((x) => x.file === inv)!;
    expect(p.code).toBe("schema-invalid-value");
    expect([p.line, p.column]).toEqual([4, 12]);
    expect(p.message).toContain("1024");
  });

  it("GPUs of several inventory entries add up to the limit", () => {
    const inv = join(tmp.dir, "inv-total.yaml");
    const kinds = Array.from({ length: 3 }, (_, i) => `  - { name: G${i}, memory: 80GiB, count: 500 }`).join(
      "\n",
    );
    writeFileSync(inv, `gpus:\n${kinds}\ncpu:\n  threads: 8\n`);
    const r = compileText(
      "ok3.yaml",
      "version: 1\npipelines: [{ name: p, steps: [{ id: s, run: [echo] }] }]\n",
      ["--inventory", inv],
    );
    expect(r.exitCode).toBe(1);
    const p = one(r.problems, "too-many-gpus");
    expect(p.file).toBe(inv);
    expect(p.line).toBe(4);
  });

  it("CPU threads are bounded", () => {
    const inv = join(tmp.dir, "inv-threads.yaml");
    writeFileSync(inv, "gpus: [{ name: H100, memory: 80GiB }]\ncpu:\n  threads: 1000000000\n");
    const r = compileText(
      "ok4.yaml",
      "version: 1\npipelines: [{ name: p, steps: [{ id: s, run: [echo] }] }]\n",
      ["--inventory", inv],
    );
    expect(r.exitCode).toBe(1);
    expect(r.problems.find((x) => x.file === inv)?.line).toBe(3);
  });

  it("an estimate of 1e300 ms is a located schema error, not a plan with an infinite lower bound", () => {
    const r = compileText(
      "huge-estimate.yaml",
      "version: 1\npipelines:\n  - name: p\n    steps: [{ id: s, run: [echo], estimate: 1e300 }]\n",
    );
    expect(r.exitCode).toBe(1);
    const p = one(r.problems, "schema-invalid-value");
    expect(p.pointer).toBe("/pipelines/0/steps/0/estimate");
    expect(p.message).toContain("31536000000");
  });

  it("durations are at most 365 days in either form, timers too (they wait in steps past Node's 24.8 days)", () => {
    const loaded = check(yaml`
      version: 1
      defaults: { estimate: 366d, timeout: 366d }
      registry: { executor: { slurm: { time: 99999999h } } }
      pipelines:
        - name: p
          steps:
            - id: s
              run: [echo]
              estimate: 365d
              timeout: 30d
              keep_warm: { ttl: 400d }
              on_oom: { ladder: [{ wait: 366d }] }
            - { id: w, run: [echo], worker: { run: [w], ready_timeout: 9999999999999999999d } }
    `);
    expect(loaded.problems.map((p) => [p.code, p.pointer, p.line])).toEqual([
      ["duration-out-of-range", "/defaults/timeout", 2],
      ["duration-out-of-range", "/defaults/estimate", 2],
      ["duration-out-of-range", "/registry/executor/slurm/time", 3],
      ["duration-out-of-range", "/pipelines/0/steps/0/keep_warm/ttl", 11],
      ["duration-out-of-range", "/pipelines/0/steps/0/on_oom/ladder/0/wait", 12],
      ["duration-out-of-range", "/pipelines/0/steps/1/worker/ready_timeout", 13],
    ]);
    const [timer, estimate] = loaded.problems;
    expect(timer!.message).toBe("`timeout` is longer than 365 days: 366d");
    expect(estimate!.message).toBe("`estimate` is longer than 365 days: 366d");
    expect(estimate!.hint).toContain("365d");
    const huge = check(yaml`
      version: 1
      pipelines:
        - name: a
          steps: [{ id: s, run: [echo], timeout: ${"9".repeat(100_000)}d }]
    `);
    expect(huge.problems.map((p) => p.message)).toEqual([
      `\`timeout\` is longer than 365 days: ${"9".repeat(40)}…`,
    ]);
  });

  it("a size of 8 PiB or more is a located error wherever it is given, never read as 'not given'", () => {
    // min_memory, context_reserve and mem_per_task past the bound were dropped: the plan asked nothing.
    const loaded = check(yaml`
      version: 1
      registry:
        context_reserve: 9007199254740993
        executor: { slurm: { mem_per_task: 99999999TiB } }
      defaults: { vram: 9007199254740992 }
      pipelines:
        - name: a
          requires: { min_memory: 9007199254740993 }
          steps:
            - { id: s, run: [echo], memory: torch, vram: 9007199254740993, data: 8192TiB }
            - { id: t, run: [echo], memory: torch }
    `);
    expect(loaded.problems.map((p) => [p.code, p.pointer, p.line])).toEqual([
      ["size-out-of-range", "/registry/context_reserve", 3],
      ["size-out-of-range", "/registry/executor/slurm/mem_per_task", 4],
      ["size-out-of-range", "/defaults/vram", 5],
      ["size-out-of-range", "/pipelines/0/requires/min_memory", 8],
      ["size-out-of-range", "/pipelines/0/steps/0/vram", 10],
      ["size-out-of-range", "/pipelines/0/steps/0/data", 10],
    ]);
    const messages = loaded.problems.map((p) => p.message);
    // The parser has rounded ...993 to ...992 already: no value is shown that the file does not hold.
    expect(messages).toContain("`min_memory` is too large: 8 PiB or more");
    expect(messages).toContain("`vram` of step `s` is too large: 8 PiB or more");
    expect(messages).toContain("`mem_per_task` is too large: `99999999TiB`");
    expect(messages.join("\n")).not.toContain("9007199254740992");
    // 8 PiB less a byte is still a size (and then a no-usable-gpu, as any too-large need is).
    const under = check(yaml`
      version: 1
      pipelines:
        - name: a
          requires: { min_memory: 9007199254740991 }
          steps: [{ id: s, run: [echo] }]
    `);
    expect(under.problems.filter((p) => p.code === "size-out-of-range")).toEqual([]);
  });

  it("max_pipelines_per_gpu: 100000 is a located schema error", () => {
    const loaded = check(yaml`
      version: 1
      registry:
        max_pipelines_per_gpu: 100000
      pipelines:
        - name: a
          steps: [{ id: s, run: [echo] }]
    `);
    const p = one(loaded.problems, "schema-invalid-value");
    expect(p.pointer).toBe("/registry/max_pipelines_per_gpu");
    expect([p.line, p.column]).toEqual([3, 26]);
    expect(p.message).toContain("1024");
  });
});

// 150,000 unknown keys (2.1 MB) ended compile with "internal error: Maximum call stack size
// exceeded": their problems were appended with push(...problems), past what Node passes as
// arguments. Each is now reported and located.
describe("a problem list longer than a call's arguments", () => {
  it("150,000 unknown keys are 150,000 located errors, not an internal error", { timeout: 60_000 }, () => {
    const keys = Array.from({ length: 150_000 }, (_, i) => `unknown_${i}: 1\n`).join("");
    const text = `version: 1\npipelines: [{ name: p, steps: [{ id: a, run: [echo] }] }]\n${keys}`;
    // In process: the CLI's report of them (38 MB of JSON) is more than a test should buffer.
    const { problems } = check(text);
    expect(problems).toHaveLength(150_000);
    expect(problems.every((p) => p.code === "schema-unknown-property")).toBe(true);
    expect(problems.at(-1)).toMatchObject({ pointer: "/unknown_149999", line: 150_002, column: 1 });
  });
});
