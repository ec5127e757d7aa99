// The schemas gpuplan ships, and where their generated validator and types go.
export const SCHEMAS = [
  { name: "pipeline", file: "schemas/pipeline.schema.json", types: "src/schema-types/pipeline.ts" },
  { name: "inventory", file: "schemas/inventory.schema.json", types: "src/schema-types/inventory.ts" },
  // asRead: the types are of the document as its reader returns it, every defaulted field filled in.
  { name: "plan", file: "schemas/plan.schema.json", types: "src/schema-types/plan.ts", asRead: true },
  {
    name: "compile-report",
    file: "schemas/compile-report.schema.json",
    types: "src/schema-types/compile-report.ts",
  },
  { name: "locks", file: "schemas/locks.schema.json", types: "src/schema-types/locks.ts" },
  { name: "run-events", file: "schemas/run-events.schema.json", types: "src/schema-types/run-events.ts" },
  { name: "problem", file: "schemas/problem.schema.json", types: "src/schema-types/problem.ts" },
  {
    name: "slurm-node-types",
    file: "schemas/slurm-node-types.schema.json",
    types: "src/schema-types/slurm-node-types.ts",
  },
  { name: "runs", file: "schemas/runs.schema.json", types: "src/schema-types/runs.ts" },
  {
    name: "slurm-export",
    file: "schemas/slurm-export.schema.json",
    types: "src/schema-types/slurm-export.ts",
  },
  {
    name: "slurm-run-status",
    file: "schemas/slurm-run-status.schema.json",
    types: "src/schema-types/slurm-run-status.ts",
  },
  {
    name: "slurm-submit",
    file: "schemas/slurm-submit.schema.json",
    types: "src/schema-types/slurm-submit.ts",
  },
  { name: "targets", file: "schemas/targets.schema.json", types: "src/schema-types/targets.ts" },
  { name: "presets", file: "schemas/presets.schema.json", types: "src/schema-types/presets.ts" },
  { name: "dry-run", file: "schemas/dry-run.schema.json", types: "src/schema-types/dry-run.ts" },
  {
    name: "slurm-dry-run",
    file: "schemas/slurm-dry-run.schema.json",
    types: "src/schema-types/slurm-dry-run.ts",
  },
  { name: "error", file: "schemas/error.schema.json", types: "src/schema-types/error.ts" },
];
