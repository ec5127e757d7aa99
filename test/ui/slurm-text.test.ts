// Slurm's answers (partition, node, node type and GPU model names) and the user's paths in what
// `detect --slurm` and `export --to slurm` print: escaped, never raw.
import { describe, expect, it } from "vitest";
import { noPaint } from "../../src/ui/paint.js";
import { formatSlurmExport } from "../../src/ui/slurm-export.js";
import { formatSlurmNodeTypes } from "../../src/ui/slurm-node-types.js";

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
});
