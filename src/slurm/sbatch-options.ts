/**
 * sbatch's options as sbatch reads them from `#SBATCH` lines: with getopt_long, which takes any
 * unambiguous abbreviation of a long option (`--part=gpu` is `--partition=gpu`) and a short
 * option's value attached or after flags that take none (`-pgpu`, `-Hpgpu`). What gpuplan must
 * know of a directive (which variable would beat it, whether it requeues) follows from the long
 * option it resolves to, however it is spelt.
 */

/**
 * sbatch's long options: Slurm 22.05's (each listed by `sbatch --LETTER=x`, which names every
 * option an ambiguous prefix could be), and those later versions added. A name a version lacks
 * costs nothing: an abbreviation is taken as each option it may abbreviate (resolveLongOption).
 */
const LONG_OPTIONS = [
  ...[
    "account acctg-freq array batch bb bbf begin chdir cluster cluster-constraint clusters ",
    "comment constraint container context contiguous core-spec cores-per-socket cpu-freq ",
    "cpus-per-gpu cpus-per-task deadline delay-boot dependency distribution error exclude ",
    "exclusive export export-file extra-node-info get-user-env gid gpu-bind gpu-freq gpus ",
    "gpus-per-node gpus-per-socket gpus-per-task gres gres-flags help hint hold ignore-pbs ",
    "input job-name kill-on-invalid-dep licenses mail-type mail-user mcs-label mem mem-bind ",
    "mem-per-cpu mem-per-gpu mincpus network nice no-kill no-requeue nodefile nodelist nodes ",
    "ntasks ntasks-per-core ntasks-per-gpu ntasks-per-node ntasks-per-socket ntasks-per-tres ",
    "open-mode output overcommit oversubscribe parsable partition power prefer priority ",
    "profile propagate qos quiet reboot requeue reservation signal sockets-per-node ",
    "spread-job switches tasks-per-node test-only thread-spec threads-per-core time time-min ",
    "tmp uid usage use-min-nodes verbose version wait wait-all-nodes wckey wrap",
  ]
    .join("")
    .split(" "),
  // Later versions (23.02 on).
  "tres-per-task",
  "tres-bind",
  "segment",
  "oom-kill-step",
  "spread-segments",
];

/** sbatch's one-letter options a directive may use (`-pgpu`), by their long names. */
const SHORT: Record<string, string> = {
  A: "account",
  C: "constraint",
  D: "chdir",
  G: "gpus",
  J: "job-name",
  M: "clusters",
  N: "nodes",
  O: "overcommit",
  W: "wait",
  a: "array",
  B: "extra-node-info",
  F: "nodefile",
  L: "licenses",
  S: "core-spec",
  b: "begin",
  c: "cpus-per-task",
  d: "dependency",
  e: "error",
  i: "input",
  k: "no-kill",
  m: "distribution",
  n: "ntasks",
  o: "output",
  p: "partition",
  q: "qos",
  t: "time",
  w: "nodelist",
  x: "exclude",
};

/**
 * The long options `--word` may be, as getopt_long decides: the one it names exactly, else every
 * option it abbreviates (one: that option; several: sbatch refuses it as ambiguous, and each is
 * named here so that what depends on the option covers whichever a version takes); an option
 * gpuplan does not know stands for itself.
 */
function resolveLongOption(word: string): string[] {
  if (LONG_OPTIONS.includes(word)) return [word];
  const matches = LONG_OPTIONS.filter((o) => o.startsWith(word));
  return matches.length > 0 ? matches : [word];
}

/**
 * The long options an sbatch argument (`--part=gpu`, `-pgpu`, `-Hpgpu`) may give; [] for one
 * gpuplan cannot read. A short option may follow flags that take no value in one word (`-Hpgpu`:
 * --hold, -p gpu).
 */
export function sbatchArgOptions(arg: string): string[] {
  const m = /^(?:--([A-Za-z0-9-]+)|-[hHIkOQsuvV]*([A-Za-z]))/.exec(arg);
  if (m?.[1] !== undefined) return resolveLongOption(m[1]);
  const short = SHORT[m?.[2] ?? ""];
  return short !== undefined ? [short] : [];
}

/**
 * The arguments of a script's `#SBATCH` lines, in order. sbatch reads directives up to the first
 * command: the lines after it are comments to sbatch, whatever they say.
 */
export function scriptDirectives(script: string): string[] {
  const out: string[] = [];
  for (const [i, raw] of script.split("\n").entries()) {
    const line = raw.trim();
    if (i === 0 && line.startsWith("#!")) continue;
    if (line === "") continue;
    if (!line.startsWith("#")) break;
    const m = /^#SBATCH\s+(\S+)/.exec(line);
    if (m?.[1] !== undefined) out.push(m[1]);
  }
  return out;
}
