// `gpuplan completion bash|zsh|fish`: each script is loaded into the real shell and asked what
// it completes. bash is always here; zsh and fish are installed by .ci/run, so in CI their tests
// run, and on a machine without them they skip with a message.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TARGETS } from "../../src/inventory/targets.js";
import { CODES } from "../../src/problems/codes.js";
import { gpuplan, tempDir } from "../helpers/cli.js";

const inCi = Boolean(process.env.CI) && process.env.CI !== "0" && process.env.CI !== "false";
const has = (shell: string) => spawnSync(shell, ["-c", "exit 0"]).status === 0;

let t: ReturnType<typeof tempDir>;
let script: Record<string, string>;
beforeEach(() => {
  t = tempDir();
  script = {};
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = gpuplan(["completion", shell]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    script[shell] = join(t.dir, `gpuplan.${shell}`);
    writeFileSync(script[shell]!, r.stdout);
  }
  // A run folder and a file name with a space, for the run-id and file completions.
  mkdirSync(join(t.dir, ".gpuplan/runs/20261126-120000-ab12"), { recursive: true });
  writeFileSync(join(t.dir, "my plan.json"), "{}");
});
afterEach(() => t.cleanup());

/** What bash's completion function offers for the words typed so far (the last is being completed). */
function bashComplete(words: string[], options = ""): string[] {
  const program = `${options}
source ${JSON.stringify(script.bash)}
COMP_WORDS=(${words.map((w) => `'${w.replaceAll("'", `'\\''`)}'`).join(" ")})
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
_gpuplan
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync("bash", ["--norc", "--noprofile", "-c", program], { cwd: t.dir, encoding: "utf8" });
  expect(r.stderr).toBe("");
  return r.stdout.split("\n").filter((l) => l !== "");
}

describe("bash", () => {
  it("completes commands, each command's flags and top-level flags", () => {
    expect(bashComplete(["gpuplan", "co"])).toEqual(["compile", "completion"]);
    expect(bashComplete(["gpuplan", ""])).toEqual(
      expect.arrayContaining(["compile", "detect", "run", "export", "locks", "report", "explain"]),
    );
    expect(bashComplete(["gpuplan", "-"])).toEqual(["-v", "--version", "-h", "--help"]);
    expect(bashComplete(["gpuplan", "run", "--no-w"])).toEqual(["--no-wait"]);
    expect(bashComplete(["gpuplan", "compile", "--"])).toEqual(
      expect.arrayContaining([
        "--output",
        "--inventory",
        "--target",
        "--check",
        "--format",
        "--strict",
        "--help",
      ]),
    );
    // A hidden flag is not offered.
    expect(bashComplete(["gpuplan", "compile", "--"])).not.toContain("--lock-dir");
  });

  it("completes target names after --target, with or without =", () => {
    const all = TARGETS.map((x) => x.name);
    expect(bashComplete(["gpuplan", "compile", "x.yaml", "--target", ""])).toEqual(all);
    expect(bashComplete(["gpuplan", "compile", "--target", "dgx-h"])).toEqual(["dgx-h100", "dgx-h200"]);
    expect(bashComplete(["gpuplan", "compile", "--target", "=", "dgx-h"])).toEqual(["dgx-h100", "dgx-h200"]);
    expect(bashComplete(["gpuplan", "compile", "--target", "="])).toEqual(all);
  });

  it("completes a flag's choices, codes for explain, the shells for completion", () => {
    expect(bashComplete(["gpuplan", "compile", "--format", ""])).toEqual(["human", "json", "github"]);
    expect(bashComplete(["gpuplan", "run", "--ui", ""])).toEqual(["auto", "tui", "plain", "json"]);
    expect(bashComplete(["gpuplan", "explain", "needs-c"])).toEqual(["needs-cycle"]);
    expect(bashComplete(["gpuplan", "explain", ""])).toHaveLength(Object.keys(CODES).length);
    expect(bashComplete(["gpuplan", "completion", ""])).toEqual(["bash", "zsh", "fish"]);
    // A command's subcommands.
    expect(bashComplete(["gpuplan", "locks", "i"])).toEqual(["init"]);
  });

  it("completes files (with spaces as one word), folders, and run ids", () => {
    expect(bashComplete(["gpuplan", "compile", "my"])).toEqual(["my plan.json"]);
    expect(bashComplete(["gpuplan", "compile", "-o", "my"])).toEqual(["my plan.json"]);
    expect(bashComplete(["gpuplan", "run", "--resume", "2026"])).toEqual(["20261126-120000-ab12"]);
    expect(bashComplete(["gpuplan", "report", "2026"])).toEqual(["20261126-120000-ab12"]);
    expect(bashComplete(["gpuplan", "run", "--lock-dir", ".gp"])).toEqual([".gpuplan"]);
    // A flag that takes a free value offers nothing rather than file names.
    expect(bashComplete(["gpuplan", "run", "--pipeline", "my"])).toEqual([]);
  });

  it("offers a file or folder name as it is, never as a glob pattern", () => {
    // compgen's words went through an unquoted $(…): `x[1].yaml` came back as `x1.yaml` (twice),
    // and `y*.yaml` as every file starting with y; under nullglob a pattern matching nothing vanished.
    for (const f of ["x[1].yaml", "x1.yaml", "y*.yaml", "yes.yaml"]) writeFileSync(join(t.dir, f), "");
    mkdirSync(join(t.dir, "d[1]"));
    mkdirSync(join(t.dir, "d1"));
    expect(bashComplete(["gpuplan", "compile", "x"]).sort()).toEqual(["x1.yaml", "x[1].yaml"]);
    expect(bashComplete(["gpuplan", "compile", "y"]).sort()).toEqual(["y*.yaml", "yes.yaml"]);
    expect(bashComplete(["gpuplan", "run", "--lock-dir", "d"]).sort()).toEqual(["d1", "d[1]"]);
    expect(bashComplete(["gpuplan", "compile", "z[0]"], "shopt -s failglob")).toEqual([]);
    writeFileSync(join(t.dir, "z[0].yaml"), "");
    expect(bashComplete(["gpuplan", "compile", "z["], "shopt -s nullglob")).toEqual(["z[0].yaml"]);
  });

  it("completes folders after --targets-dir, and run ids after --history", () => {
    mkdirSync(join(t.dir, "shared-targets"));
    expect(bashComplete(["gpuplan", "compile", "x.yaml", "--targets-dir", "shared"])).toEqual([
      "shared-targets",
    ]);
    expect(bashComplete(["gpuplan", "targets", "--targets-dir", "shared"])).toEqual(["shared-targets"]);
    expect(bashComplete(["gpuplan", "compile", "x.yaml", "--history", "2026"])).toEqual([
      "20261126-120000-ab12",
    ]);
  });

  it("offers a run folder's name as text, never running what it says", () => {
    // A cloned repository can bring any folder name into .gpuplan/runs; compgen -W ran $(…) in them.
    const names = ["x$(touch pwned-a)", "x`touch pwned-b`", "x$HOME", "x*"];
    for (const name of names) mkdirSync(join(t.dir, ".gpuplan/runs", name), { recursive: true });
    expect(bashComplete(["gpuplan", "run", "--resume", "x"]).sort()).toEqual([...names].sort());
    expect(existsSync(join(t.dir, "pwned-a"))).toBe(false);
    expect(existsSync(join(t.dir, "pwned-b"))).toBe(false);
  });
});

describe.skipIf(!has("fish") && !inCi)("fish", () => {
  const fishComplete = (line: string): string[] => {
    const r = spawnSync(
      "fish",
      ["--no-config", "-c", `source ${script.fish}; complete -C ${JSON.stringify(line)}`],
      {
        cwd: t.dir,
        encoding: "utf8",
      },
    );
    expect(r.stderr).toBe("");
    return r.stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => l.split("\t")[0]!);
  };

  it("loads, and completes commands, flags, targets, files and run ids", () => {
    expect(fishComplete("gpuplan comp")).toEqual(["compile", "completion"]);
    expect(fishComplete("gpuplan compile --targ")).toEqual(["--target", "--targets-dir"]);
    expect(fishComplete("gpuplan compile --target dgx-h")).toEqual(["dgx-h100", "dgx-h200"]);
    expect(fishComplete("gpuplan compile my")).toEqual(["my plan.json"]);
    expect(fishComplete("gpuplan run --resume 2026")).toEqual(["20261126-120000-ab12"]);
    expect(fishComplete("gpuplan explain needs-c")).toEqual(["needs-cycle"]);
    // No file names where none belong.
    expect(fishComplete("gpuplan locks my")).toEqual([]);
  });
});

describe.skipIf(!has("zsh") && !inCi)("zsh", () => {
  it("is valid zsh that registers gpuplan's completion with compsys", () => {
    const r = spawnSync(
      "zsh",
      [
        "-f",
        "-c",
        `autoload -U compinit && compinit -u -D && source ${script.zsh} && print -r -- $_comps[gpuplan] && whence -w _gpuplan_cmd_compile _gpuplan_run_ids`,
      ],
      { cwd: t.dir, encoding: "utf8" },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.split("\n")).toEqual([
      "_gpuplan",
      "_gpuplan_cmd_compile: function",
      "_gpuplan_run_ids: function",
      "",
    ]);
    // Every target and every choice of --format is in the script, in _arguments' (a b c) form.
    const text = gpuplan(["completion", "zsh"]).stdout;
    expect(text).toContain(`(${TARGETS.map((x) => x.name).join(" ")})`);
    expect(text).toContain("'(--format)--format=[how to report problems]:format:(human json github)'");
  });
});

it("refuses a shell it does not know, with the choices", () => {
  const r = gpuplan(["completion", "tcsh"]);
  expect(r.exitCode).toBe(2);
  expect(r.stderr).toContain("Allowed choices are bash, zsh, fish");
});
