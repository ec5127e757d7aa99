// An out-of-memory error that a trainer wraps (Lightning, accelerate, `raise … from e`) is printed
// first, then the exception it led to — 40 lines and more of traceback. Only the last 40 lines were
// searched, so such a step read as a plain error and its on_oom ladder never ran.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectOom } from "../../src/run/step/classify-failure.js";
import { gpuplan, tempDir } from "../helpers/cli.js";

const frames = (n: number, where: string): string[] =>
  Array.from({ length: n }, (_, i) => [
    `  File "/opt/${where}/m${i}.py", line ${i + 1}, in f${i}`,
    `    f${i + 1}()`,
  ]).flat();

const OOM_TRACEBACK = [
  "Traceback (most recent call last):",
  ...frames(3, "model"),
  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 79.19 GiB total capacity)",
];

const chained = (link: string): string[] => [
  ...OOM_TRACEBACK,
  "",
  link,
  "",
  "Traceback (most recent call last):",
  ...frames(25, "lightning"),
  "RuntimeError: training step failed",
];

describe("an OOM in the exception a step ended with", () => {
  it("is found behind 50 lines of the exception it caused (raise … from e)", () => {
    const lines = chained("The above exception was the direct cause of the following exception:");
    expect(lines.length).toBeGreaterThan(50);
    expect(detectOom(lines.slice(-40))).toBeNull();
    expect(detectOom(lines)).toBe("pytorch");
  });

  it("is found behind an exception raised while handling it", () => {
    expect(detectOom(chained("During handling of the above exception, another exception occurred:"))).toBe(
      "pytorch",
    );
  });

  it("is not the cause when it was caught earlier and the step failed of something else", () => {
    const lines = [
      ...OOM_TRACEBACK,
      "retrying with a smaller batch",
      ...Array.from({ length: 30 }, (_, i) => `epoch 1 step ${i}: loss 0.5`),
      "Traceback (most recent call last):",
      ...frames(10, "data"),
      "FileNotFoundError: [Errno 2] No such file or directory: 'shard-7.parquet'",
    ];
    expect(detectOom(lines)).toBeNull();
  });

  it("in the last 40 lines still counts without a traceback (a C++ program's message)", () => {
    expect(detectOom(["step 1", "terminate: CUBLAS_STATUS_ALLOC_FAILED", "Aborted"])).toBe("pytorch");
  });
});

describe("a step that ends with a wrapped OOM", () => {
  const t = tempDir();
  afterAll(() => t.cleanup());

  it("ends as oom, its stderr's 55 lines read back", () => {
    const lines = chained("The above exception was the direct cause of the following exception:");
    writeFileSync(join(t.dir, "stderr.txt"), `${lines.join("\n")}\n`);
    writeFileSync(
      join(t.dir, "p.yaml"),
      'version: 1\nname: wrapped\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: ["sh", "-c", "cat stderr.txt >&2; exit 1"], memory: numpy }\n',
    );
    const r = gpuplan(["run", "p.yaml", "--json"], { cwd: t.dir });
    expect(r.exitCode).toBe(1);
    const end = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((e) => e.event === "gpu.step.end");
    expect(end).toMatchObject({ status: "oom", framework: "pytorch" });
  });
});
