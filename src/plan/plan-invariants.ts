/**
 * What the plan schema cannot say but the runner relies on: there is a pipeline, pipeline names
 * are unique (logs, journal and --pipeline use them), every GPU a pipeline or step names is in the registry once,
 * a pipeline on several GPUs is on no MIG instance (a CUDA process can use only one),
 * budgets fit their cards, no GPU has more slots than the slot lock gives, step ids are unique and
 * `needs` name earlier steps of their pipeline (no cycle), and nothing a step is started with holds
 * a NUL byte (the C library would cut it there), a lone surrogate (Node would pass U+FFFD in its
 * place) or an env name a `=`, and no step's env sets the variables that choose its GPUs (they
 * would win over the bound GPUs and escape the slot lock).
 * compile never writes a plan that breaks them; a hand edit (or, for the last, a gpuplan from
 * before it was refused) can, and is refused here, located, before anything starts.
 */
import { isDeviceVariable } from "../inventory/device-variables.js";
import { MAX_SLOTS_PER_GPU } from "../inventory/limits.js";
import { isMigDevice } from "../inventory/mig.js";
import { findNeedsCycle } from "../pipeline/needs-cycle.js";
import { error, type Problem, toPointer } from "../problems/problem.js";
import type { GpuplanPlan } from "../schema-types/plan.js";
import { firstLoneSurrogate } from "../text/lone-surrogates.js";

export function planInvariantProblems(plan: GpuplanPlan, file: string): Problem[] {
  const problems: Problem[] = [];
  const broken = (pointer: string, message: string) =>
    problems.push(
      error({
        code: "plan-inconsistent",
        message,
        hint: "the plan was edited by hand or damaged; write it again with gpuplan compile",
        file,
        pointer,
      }),
    );
  const gpus = new Set<string>();
  const uuids = new Set<string>();
  const migInstances = new Set<string>();
  plan.registry.forEach((e, i) => {
    if (isMigDevice(e.gpu, e.uuid)) migInstances.add(e.gpu);
    if (gpus.has(e.gpu)) broken(`/registry/${i}/gpu`, `the registry lists ${e.gpu} twice`);
    if (uuids.has(e.uuid)) broken(`/registry/${i}/uuid`, `the registry lists GPU ${e.uuid} twice`);
    gpus.add(e.gpu);
    uuids.add(e.uuid);
    if (e.memoryBudgetBytes > e.memoryBytes)
      broken(`/registry/${i}/memoryBudgetBytes`, `${e.gpu}'s memory budget is larger than the GPU`);
    if (e.maxPipelines > MAX_SLOTS_PER_GPU)
      broken(
        `/registry/${i}/maxPipelines`,
        `${e.gpu} has ${e.maxPipelines} slots; the slot lock gives at most ${MAX_SLOTS_PER_GPU} per GPU`,
      );
  });
  // compile writes no plan for a file without pipelines; run of one made an empty run folder and
  // exited 0, a green CI job that ran nothing.
  if (plan.pipelines.length === 0) broken("/pipelines", "the plan has no pipelines");
  const names = new Map<string, number>();
  plan.pipelines.forEach((p, i) => {
    const first = names.get(p.name);
    if (first !== undefined)
      broken(`/pipelines/${i}/name`, `pipeline \`${p.name}\` appears twice (pipelines ${first} and ${i})`);
    else names.set(p.name, i);
    p.gpus.forEach((g, j) => {
      if (!gpus.has(g))
        broken(
          `/pipelines/${i}/gpus/${j}`,
          `pipeline \`${p.name}\` uses ${g}, which the registry does not list`,
        );
      else if (p.gpus.length > 1 && migInstances.has(g))
        broken(
          `/pipelines/${i}/gpus/${j}`,
          `pipeline \`${p.name}\` runs on ${p.gpus.length} GPUs and ${g} is a MIG instance: a CUDA process can use only one MIG instance`,
        );
    });
    stepProblems(p, i, broken);
    problems.push(...deviceVariableProblems(p, i, file));
    p.steps.forEach((s, j) => {
      if (s.device !== "cpu" && !gpus.has(s.device))
        broken(
          `/pipelines/${i}/steps/${j}/device`,
          `step \`${s.id}\` of pipeline \`${p.name}\` runs on ${s.device}, which the registry does not list`,
        );
      deviceMapProblems(p, i, j, broken);
    });
  });
  return problems;
}

/**
 * A device map names only what the step will see: cpu, disk, or one of its pipeline's GPUs. The
 * step gets the map renumbered to its own view, where any other GPU (cuda:7 of a pipeline on
 * cuda:0 and cuda:1) does not exist or is another card, and a value like `banana` was passed on
 * as is: the model failed to load at run time, after the lock and the wait, instead of here.
 */
function deviceMapProblems(
  p: GpuplanPlan["pipelines"][number],
  i: number,
  j: number,
  broken: (pointer: string, message: string) => void,
): void {
  const s = p.steps[j]!;
  if (!s.deviceMap) return;
  const onGpu = s.device !== "cpu" && s.uuid !== null;
  const sees = new Set(onGpu ? [s.device, ...p.gpus] : []);
  for (const [component, device] of Object.entries(s.deviceMap.map)) {
    if (device === "cpu" || device === "disk" || sees.has(device)) continue;
    broken(
      `/pipelines/${i}/steps/${j}/deviceMap/map${toPointer([component])}`,
      `step \`${s.id}\` of pipeline \`${p.name}\` places \`${component}\` on ${JSON.stringify(device)}, which is not cpu, disk or ${onGpu ? `a GPU of its pipeline (${[...sees].join(", ")})` : "a GPU (the step runs on the CPU)"}`,
    );
  }
}

/** Steps whose env sets CUDA_VISIBLE_DEVICES or an AMD variable: the step would pick its own GPUs. */
function deviceVariableProblems(p: GpuplanPlan["pipelines"][number], i: number, file: string): Problem[] {
  return p.steps.flatMap((s, j) =>
    Object.keys(s.env)
      .filter(isDeviceVariable)
      .map((name) =>
        error({
          code: "env-sets-devices",
          message: `step \`${s.id}\` of pipeline \`${p.name}\` sets ${name} in its env, which would choose its GPUs over the ones gpuplan binds and locks`,
          hint: "remove it from the pipeline file's env and compile the plan again",
          file,
          pointer: `/pipelines/${i}/steps/${j}/env${toPointer([name])}`,
          at: "key",
        }),
      ),
  );
}

/** A pipeline's steps: unique ids, needs that name another step and make no cycle, startable strings. */
function stepProblems(
  p: GpuplanPlan["pipelines"][number],
  i: number,
  broken: (pointer: string, message: string) => void,
): void {
  const nameFlaw = unpassable(p.name);
  if (nameFlaw) broken(`/pipelines/${i}/name`, `a pipeline name holds ${nameFlaw}`);
  const ids = new Set<string>();
  p.steps.forEach((s, j) => {
    const at = `/pipelines/${i}/steps/${j}`;
    if (ids.has(s.id)) broken(`${at}/id`, `pipeline \`${p.name}\` has two steps \`${s.id}\``);
    ids.add(s.id);
    const idFlaw = unpassable(s.id);
    if (idFlaw) broken(`${at}/id`, `a step id holds ${idFlaw}`);
    const strings: [string, string][] = [
      ...s.argv.map((a, k): [string, string] => [`${at}/argv/${k}`, a]),
      ...(s.worker
        ? [...s.worker.argv, ...s.worker.args].map((a): [string, string] => [`${at}/worker`, a])
        : []),
      ...(s.cwd !== null ? [[`${at}/cwd`, s.cwd] as [string, string]] : []),
      ...Object.values(s.env).map((v): [string, string] => [`${at}/env`, v]),
    ];
    for (const [pointer, text] of strings) {
      const flaw = unpassable(text);
      if (flaw) broken(pointer, `step \`${s.id}\` of pipeline \`${p.name}\` would be started with ${flaw}`);
    }
    for (const name of Object.keys(s.env))
      if (name === "" || name.includes("=") || unpassable(name))
        broken(
          `${at}/env`,
          `step \`${s.id}\` of pipeline \`${p.name}\` has an environment variable named ${JSON.stringify(name)}`,
        );
  });
  let wrongNeeds = false;
  p.steps.forEach((s, j) => {
    s.needs.forEach((n, k) => {
      if (n !== s.id && ids.has(n)) return;
      wrongNeeds = true;
      broken(
        `/pipelines/${i}/steps/${j}/needs/${k}`,
        `step \`${s.id}\` of pipeline \`${p.name}\` needs ${n === s.id ? "itself" : `\`${n}\`, which the pipeline does not have`}`,
      );
    });
  });
  // As compile: a need that names no step (or itself) is said on its own, not as a cycle too.
  const cycle = wrongNeeds ? undefined : findNeedsCycle(p.steps);
  if (cycle)
    broken(
      `/pipelines/${i}/steps`,
      `the steps of pipeline \`${p.name}\` need each other in a cycle: ${cycle.join(" → ")}`,
    );
}

/** What in `text` a process could not be given as it is: a NUL byte or a lone surrogate; null when nothing. */
function unpassable(text: string): string | null {
  if (text.includes("\0")) return "a NUL byte";
  const lone = firstLoneSurrogate(text);
  return lone === null ? null : `a lone UTF-16 surrogate (${lone}), which it would get as U+FFFD`;
}
