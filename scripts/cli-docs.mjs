// Renders the command-line reference pages from the modules the CLI itself runs on: commander's
// program (every command's --help), the code registry (problem codes, exit codes), the
// environment settings commander reads, the vendor library overrides detection honours, and the
// step environment computed by the same function `gpuplan run` uses. Modules are passed in, so
// that `npm run docs` can use the built dist/ and the tests the TypeScript sources.

const code = (value) => `\`${value}\``;
const cell = (text) => String(text).replaceAll("|", "\\|").replaceAll("\n", " ");
const fence = (text, lang = "text") => `\`\`\`${lang}\n${text.trimEnd()}\n\`\`\``;

/** Every command of a commander program, the program first, depth first. */
function commandsOf(program) {
  const out = [];
  const walk = (command, path) => {
    out.push({ command, path });
    for (const sub of command.commands) walk(sub, `${path} ${sub.name()}`);
  };
  walk(program, program.name());
  return out;
}

/** `--help` as gpuplan prints it on a terminal 80 columns wide, without colour. */
function helpOf(command) {
  command.configureHelp({ ...command.configureHelp(), helpWidth: 80 });
  return command.helpInformation();
}

export function cliPage(program) {
  const sections = commandsOf(program).map(
    ({ command, path }) => `## \`${path}\`\n\n${command.description()}\n\n${fence(helpOf(command))}`,
  );
  return `# Command line

Every command's \`--help\`, as gpuplan prints it. Options that an environment variable can set
say \`(env: …)\`: see [environment](environment.md). Exit statuses: [exit codes](exit-codes.md).

${sections.join("\n\n")}
`;
}

const WHO = { user: "the user", vendor: "a vendor library, driver or the system", bug: "a bug in gpuplan" };

export function problemCodesPage(codes) {
  const names = Object.keys(codes).sort();
  const kinds = [
    ["Problems in an input file", (e) => e.kind !== "failure"],
    ["Failures that stop a command", (e) => e.kind === "failure"],
  ];
  const parts = kinds.map(([heading, keep]) => {
    const mine = names.filter((n) => keep(codes[n]));
    const rows = mine.map((n) => {
      const e = codes[n];
      return `| [${code(n)}](#${n}) | ${e.kind} | ${WHO[e.actor]} | ${e.exit} | ${cell(e.title)} |`;
    });
    return `## ${heading}\n\n| code | reported as | who acts | exit | what |\n| --- | --- | --- | --- | --- |\n${rows.join("\n")}`;
  });
  const details = names.map((n) => {
    const e = codes[n];
    return [
      `### ${n}`,
      "",
      `**${e.title}.** Reported as ${e.kind === "failure" ? "a failure that stops the command" : `${e.kind === "error or warning" ? "an error or a warning" : `a${e.kind === "error" ? "n" : ""} ${e.kind}`}`}; ${WHO[e.actor]} acts; exit ${e.exit}${e.kind === "warning" ? " (1 with `--strict`)" : ""}.`,
      "",
      e.explanation,
      ...(e.hint ? ["", `Hint: ${e.hint}`] : []),
    ].join("\n");
  });
  return `# Problem codes

Every code gpuplan prints, from the code registry (\`src/problems/codes.ts\`). Tools match on the
code, never on the message. \`gpuplan explain CODE\` prints the same explanation in a terminal.

${parts.join("\n\n")}

## Every code

${details.join("\n\n")}
`;
}

/** What each exit status means; the test fails when the registry gains a status without words here. */
export const EXIT_MEANINGS = {
  ok: "Done. Warnings alone do not change it (unless `compile --strict`).",
  problems:
    "The input has problems: errors in a pipeline file or inventory, a stale plan (`--check`), a plan that no longer fits this machine, or (run) a step that failed.",
  usage:
    "gpuplan could not do its job: a bad flag or value, a file it cannot read or write, a vendor library that failed, or a bug in gpuplan.",
  busy: "`run --no-wait`: a GPU slot the run needs is held by someone else.",
  hangup:
    "`run` stopped by SIGHUP (128 + 1: its terminal closed, an ssh connection dropped): its steps get SIGHUP and the run's end is recorded as for Ctrl-C; `gpuplan run --resume RUN` continues it.",
  interrupted: "Stopped by SIGINT (Ctrl-C); `gpuplan run --resume RUN` continues a run.",
  quit: "`run` stopped by SIGQUIT (128 + 3, Ctrl-\\): handled as SIGINT, the steps getting SIGQUIT; `gpuplan run --resume RUN` continues it.",
  terminated:
    "`run` stopped by SIGTERM (128 + 15, as a shell reports a process SIGTERM ended; a scheduler's job end, `kill`); `gpuplan run --resume RUN` continues it.",
};

export function exitCodesPage(exit, codes) {
  const rows = Object.entries(exit).map(([name, status]) => {
    const which = Object.keys(codes)
      .filter((n) => codes[n].exit === status)
      .sort()
      .map((n) => `[${code(n)}](problem-codes.md#${n})`);
    return `| ${status} | ${name} | ${cell(EXIT_MEANINGS[name] ?? "")} | ${which.join(", ")} |`;
  });
  return `# Exit codes

The exit status of every gpuplan command, from the registry (\`EXIT\` in \`src/problems/exit-codes.ts\`),
with the codes that end a command with each.

| status | name | meaning | codes |
| --- | --- | --- | --- |
${rows.join("\n")}
`;
}

/**
 * @param {object} sources
 * @param {object} sources.program commander program
 * @param {Record<string, {override: string, soname: string}>} sources.libraries detection's vendor libraries
 * @param {{ name: string, meaning: string }[]} sources.other variables read outside commander
 * @param {{ title: string, env: { set: Record<string,string>, unset: string[] } }[]} sources.steps example step environments
 */
export function environmentPage({ program, libraries, other, slurm, steps }) {
  const settings = [];
  for (const { command, path } of commandsOf(program)) {
    for (const option of command.options) {
      if (!option.envVar) continue;
      const found = settings.find((s) => s.option.envVar === option.envVar);
      if (found) found.commands.push(path);
      else settings.push({ option, commands: [path] });
    }
  }
  const settingRows = settings.map(({ option, commands }) => {
    const fallback =
      option.defaultValueDescription ??
      (option.defaultValue === undefined ? "" : String(option.defaultValue));
    const choices = option.argChoices ? ` (${option.argChoices.map(code).join(", ")})` : "";
    return `| ${code(option.envVar)} | ${code(option.long)} on ${commands.map(code).join(", ")} | ${fallback ? code(fallback) : ""} | ${cell(option.description + choices)} |`;
  });
  const libraryRows = Object.entries(libraries).map(
    ([probe, spec]) => `| ${code(spec.override)} | ${probe} | ${code(spec.soname)} |`,
  );
  const stepSections = steps.map(({ title, env }) => {
    const set = Object.entries(env.set).map(([k, v]) => `${k}=${v}`);
    const unset = env.unset.map((k) => `unset ${k}`);
    return `### ${title}\n\n${fence([...set, ...unset].join("\n"), "sh")}`;
  });
  return `# Environment

## Settings

A flag wins over its variable, and the variable over the default; an empty variable counts as
unset.

| variable | flag | default | meaning |
| --- | --- | --- | --- |
${settingRows.join("\n")}

## Detection

\`gpuplan detect\` (and \`compile\` and \`run\` when they detect) loads each vendor library from the
dynamic loader's search path and the usual CUDA and ROCm install paths, unless a variable names
the file (a relative path is taken from the current folder, even without a \`/\`):

| variable | probe | library it replaces |
| --- | --- | --- |
${libraryRows.join("\n")}

## Other variables gpuplan reads

| variable | meaning |
| --- | --- |
${other.map((o) => `| ${code(o.name)} | ${cell(o.meaning)} |`).join("\n")}

## Slurm's variables

Slurm's client commands read options from the environment too, and sbatch's variables win over a
script's \`#SBATCH\` lines. gpuplan runs sbatch, squeue, sacct and scancel (and an exported
\`submit.sh\` runs sbatch) without these, so that what it submitted and asked is what happens;
every other variable reaches them as the user set it. An sbatch script submitted by hand
(\`sbatch 01-gpu-h100-1.sbatch\`) gets Slurm's own rule.

| command | runs without | why |
| --- | --- | --- |
${slurm.map((r) => `| ${r.command} | ${cell(r.variables)} | ${cell(r.why)} |`).join("\n")}

## What a step sees

What \`gpuplan run\` sets for a step, computed here by the function \`run\` uses
(\`computeStepEnv\` in \`src/run/step/step-env.ts\`) for three example steps; the step's own \`env\`
is applied last and wins. \`unset\` lines are inherited variables removed so that they cannot
contradict the step's view. A warm worker gets the same environment.

${stepSections.join("\n\n")}
`;
}
