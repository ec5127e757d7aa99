// Slurm's answers (partition, node, node type and GPU model names) and the user's paths in what
// `detect --slurm` and `export --to slurm` print: escaped, never raw.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { noPaint } from "../../src/ui/paint.js";
import { formatSlurmExport } from "../../src/ui/slurm-export.js";
import { formatSlurmNodeTypes } from "../../src/ui/slurm-node-types.js";
import { gpuplan } from "../helpers/cli.js";

const HOSTILE = "\u001b]0;pwned\u0007\r\u202e";
const SHOWN = "\\x1b]0;pwned\\x07\\r\\u202e";
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;

describe("Slurm text", () => {
  it("node types: partition, node, type and model names", () => {
    const text = formatSlurmNodeTypes(
      {
        schema: "gpuplan/slurm-node-types@1",
        partition: null,
        partitions: [{ name: `gpu${HOSTILE}`, isDefault: true, available: "up" }],
        nodeTypes: [
          {
            name: `h100x4${HOSTILE}`,
            nodes: [`node${HOSTILE}`],
            usableNodes: 1,
            partitions: [`gpu${HOSTILE}`],
            cpus: 16,
            memoryBytes: 2 ** 34,
            gpus: [
              { gresType: `h100${HOSTILE}`, count: 4, model: `NVIDIA H100${HOSTILE}`, memoryBytes: 2 ** 36 },
            ],
            shardsPerGpu: null,
            inventory: { gpus: [], cpu: { threads: 16 } },
          },
        ],
        problems: [],
      },
      noPaint,
    );
    expect(text).not.toMatch(CONTROL);
    for (const shown of [
      `gpu${SHOWN} (default)`,
      `h100x4${SHOWN}  1 node: node${SHOWN}`,
      `NVIDIA H100${SHOWN}`,
    ])
      expect(text).toContain(shown);
  });

  it("export: the output folder and the node type", () => {
    const text = formatSlurmExport([], `out${HOSTILE}`, `type${HOSTILE}`, 0);
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain(`in out${SHOWN} (type${SHOWN})`);
    expect(text).toContain(`submit: out${SHOWN}/submit.sh`);
  });

  it("run --executor slurm --dry-run: a name with control characters in the task list and the script shown; none in sbatch options", () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-slurm-text-"));
    try {
      const file = (slurm: string) =>
        [
          "version: 1",
          "name: esc",
          slurm,
          "pipelines:",
          '  - name: "p{w}"',
          '    matrix: { w: ["\\e[31mred"] }',
          "    steps:",
          "      - { id: a, run: [echo, hi], memory: numpy }",
          "",
        ].join("\n");
      writeFileSync(join(dir, "p.yaml"), file(""));
      // No Slurm at all: a dry run asks no Slurm command.
      const env = { SLURM_CONF: "/nonexistent/slurm.conf", PATH: process.env.PATH };
      const r = gpuplan(["run", "p.yaml", "--executor", "slurm", "--dry-run"], { cwd: dir, env });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).not.toMatch(CONTROL);
      expect(r.stdout).toContain("0  p\\x1b[31mred");
      expect(r.stdout).toContain("'p\\x1b[31mred'");
      const flag = gpuplan(
        ["run", "p.yaml", "--executor", "slurm", "--dry-run", "--sbatch-arg=--comment=\u001b[2J"],
        {
          cwd: dir,
          env,
        },
      );
      expect(flag.exitCode).toBe(2);
      expect(flag.stderr).toContain("[invalid-option-value]");
      writeFileSync(
        join(dir, "q.yaml"),
        file('registry: { executor: { slurm: { sbatch_args: ["--comment=\\e]0;TITLE\\a"] } } }'),
      );
      const compiled = gpuplan(["compile", "q.yaml", "--target", "dgx-h100"], { cwd: dir, env });
      expect(compiled.exitCode).toBe(1);
      expect(compiled.stderr).toContain("sbatch_args");
      expect(compiled.stderr).not.toMatch(CONTROL);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
