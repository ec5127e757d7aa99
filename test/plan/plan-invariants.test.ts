// A plan is data anyone can edit. An attack found hand edits that ran anyway: a NUL byte in argv
// (the C library cut the argument there), env names with `=`, needs naming no step or the step
// itself, and a NUL in a pipeline name that `export` wrote into an sbatch script (bash dropped
// it and ran another pipeline). Each is a located plan-inconsistent error before anything starts.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

interface Step {
  id: string;
  argv: string[];
  env?: Record<string, string>;
  needs?: string[];
}
interface Plan {
  pipelines: { name: string; steps: Step[] }[];
}

function planWith(edit: (plan: Plan) => void): { dir: string; file: string } {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const file = join(t.dir, "plan.json");
  const c = gpuplan(["compile", join(ROOT, "examples/hello-cpu.yaml"), "--target", "cpu-only", "-o", file]);
  expect(c.exitCode, c.stderr).toBe(0);
  const plan = JSON.parse(readFileSync(file, "utf8")) as Plan;
  edit(plan);
  writeFileSync(file, JSON.stringify(plan, null, 2));
  return { dir: t.dir, file };
}

const cases: [string, (plan: Plan) => void, string][] = [
  [
    "a NUL byte in argv",
    (p) => p.pipelines[0]!.steps[0]!.argv.push("a\u0000b"),
    "would be started with a NUL byte",
  ],
  [
    "an env name with =",
    (p) => (p.pipelines[0]!.steps[0]!.env = { "A=B": "1" }),
    'environment variable named "A=B"',
  ],
  ["a NUL in an env value", (p) => (p.pipelines[0]!.steps[0]!.env = { A: "x\u0000" }), "NUL byte"],
  [
    "a lone surrogate in argv (Node would pass U+FFFD)",
    (p) => p.pipelines[0]!.steps[0]!.argv.push("a\ud800b"),
    "would be started with a lone UTF-16 surrogate (\\ud800)",
  ],
  [
    "a lone surrogate in an env value",
    (p) => (p.pipelines[0]!.steps[0]!.env = { A: "x\udc00" }),
    "lone UTF-16 surrogate (\\udc00)",
  ],
  [
    "needs naming no step",
    (p) => (p.pipelines[0]!.steps[1]!.needs = ["nope"]),
    "needs `nope`, which the pipeline does not have",
  ],
  ["a step needing itself", (p) => (p.pipelines[0]!.steps[0]!.needs = ["generate"]), "needs itself"],
  [
    "a cycle",
    (p) => {
      const [a, b] = p.pipelines[0]!.steps;
      a!.needs = [b!.id];
    },
    "need each other in a cycle",
  ],
  [
    "no pipelines (run made an empty run folder and exited 0)",
    (p) => (p.pipelines = []),
    "the plan has no pipelines",
  ],
  ["two steps of one id", (p) => (p.pipelines[0]!.steps[1]!.id = "generate"), "has two steps `generate`"],
  [
    "a NUL in a pipeline name",
    (p) => (p.pipelines[0]!.name = "a\u0000b"),
    "a pipeline name holds a NUL byte",
  ],
];

describe("a hand-edited plan is refused before anything starts", () => {
  it.each(cases)("%s: run, run --dry-run and export say where (exit 1)", (_, edit, message) => {
    const { dir, file } = planWith(edit);
    for (const args of [
      ["run", file],
      ["run", file, "--dry-run"],
      ["export", file, "--to", "slurm", "-o", join(dir, "out")],
    ]) {
      const r = gpuplan(args, { cwd: dir });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, `${args.join(" ")}\n${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toMatch(/plan\.json:\d+:\d+ +error .*\[plan-inconsistent\]/);
    }
  });
});

describe("a plan whose step env chooses its GPUs is refused before anything starts", () => {
  // The step's env wins over the variables gpuplan sets: this CPU step ran with
  // CUDA_VISIBLE_DEVICES=0, on GPU 0 with no slot lock, and a GPU step could reach every card.
  it.each(["CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"])(
    "%s: run, run --dry-run and export say where (exit 1) and start nothing",
    (name) => {
      const { dir, file } = planWith((p) => (p.pipelines[0]!.steps[0]!.env = { KEEP: "1", [name]: "0" }));
      for (const args of [
        ["run", file],
        ["run", file, "--dry-run"],
        ["export", file, "--to", "slurm", "-o", join(dir, "out")],
      ]) {
        const r = gpuplan(args, { cwd: dir });
        expect(hasCrashed(r), r.stderr).toBe(false);
        expect(r.exitCode, `${args.join(" ")}\n${r.stderr}`).toBe(1);
        expect(r.stderr).toContain(`step \`generate\` of pipeline \`plate-P1\` sets ${name} in its env`);
        expect(r.stderr).toMatch(/plan\.json:\d+:\d+ +error .*\[env-sets-devices\]/);
      }
      expect(existsSync(join(dir, ".gpuplan", "runs"))).toBe(false);
    },
  );
});

describe("a device map naming a device the step will not see is refused", () => {
  // The map reaches the step renumbered to its own view, where cuda:7 of a pipeline on cuda:0 is
  // no GPU at all: the run started, and the model failed to load there.
  interface MapPlan {
    pipelines: { gpu: string | null; steps: { deviceMap?: { map: Record<string, string> } | null }[] }[];
  }
  it.each([
    ["cuda:7", /places `unet` on "cuda:7", which is not cpu, disk or a GPU of its pipeline \(cuda:0\)/],
    ["banana", /places `unet` on "banana"/],
  ])("%s: run --dry-run and export say where (exit 1)", (device, message) => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "plan.json");
    const example = join(ROOT, "examples/diffusion-inference.yaml");
    const c = gpuplan(["compile", example, "--target", "dgx-a100-80gb", "-o", file]);
    expect(c.exitCode, c.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(file, "utf8")) as MapPlan;
    const first = plan.pipelines[0]!;
    expect(first.gpu).toBe("cuda:0");
    const step = first.steps.find((s) => s.deviceMap)!;
    step.deviceMap!.map.unet = device;
    writeFileSync(file, JSON.stringify(plan, null, 2));
    for (const args of [
      ["run", file, "--dry-run"],
      ["export", file, "--to", "slurm", "-o", join(t.dir, "out")],
    ]) {
      const r = gpuplan(args, { cwd: t.dir });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, `${args.join(" ")}\n${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/plan\.json:\d+:\d+ +error .*\[plan-inconsistent\]/);
    }
  });
});
