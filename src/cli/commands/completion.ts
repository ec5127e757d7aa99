/** `gpuplan completion bash|zsh|fish`: a completion script, made from the program's own commands and flags. */

import { TARGETS } from "../../inventory/targets.js";
import { CODES } from "../../problems/codes.js";
import { bashScript } from "../completion/bash.js";
import { fishScript } from "../completion/fish.js";
import { completionSpec } from "../completion/spec.js";
import { zshScript } from "../completion/zsh.js";
import { writeOut } from "../output.js";
import { createProgram } from "../program.js";

const SCRIPTS = { bash: bashScript, zsh: zshScript, fish: fishScript };

export default async function completion(shell: keyof typeof SCRIPTS): Promise<number> {
  const spec = completionSpec(createProgram("human"), {
    targets: TARGETS.map((t) => t.name),
    codes: Object.keys(CODES).sort(),
  });
  writeOut(SCRIPTS[shell](spec));
  return 0;
}
