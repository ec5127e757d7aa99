// A command line that runs one command defines only that command (src/cli/program.ts
// createProgram with args): ~2 ms of every start. Everything a person can see stays the same:
// the command's own help and errors, and every command where the program's help or a
// suggestion is asked for.
import { expect, it } from "vitest";
import { createProgram } from "../../src/cli/program.js";
import { gpuplan } from "../helpers/cli.js";

const names = (args?: string[]) => createProgram("human", args).commands.map((c) => c.name());

it("defines only the command a command line runs", () => {
  const all = names();
  expect(all.length).toBeGreaterThan(10);
  for (const name of all) expect(names([name, "x"])).toEqual([name]);
});

it("defines every command for the program's help, a word that is no command, or no command", () => {
  const all = names();
  for (const args of [
    [],
    ["--help"],
    ["compile", "-h"],
    ["help", "compile"],
    ["compil"],
    ["-V"],
    ["--", "run"],
  ])
    expect(names(args), args.join(" ")).toEqual(all);
  // After `--`, a help flag is an operand: the command is still the only one.
  expect(names(["run", "--", "--help"])).toEqual(["run"]);
});

it("a command's help and a misspelt command read as they did with every command defined", () => {
  // The help of one command, as the full program prints it.
  const full = createProgram("human")
    .commands.find((c) => c.name() === "compile")!
    .helpInformation();
  const alone = createProgram("human", ["compile", "x"]).commands[0]!.helpInformation();
  expect(alone).toBe(full);
  const r = gpuplan(["compil", "x.yaml"]);
  expect(r.exitCode).toBe(2);
  expect(r.stderr).toMatch(/unknown command 'compil'.*\n.*\n {2}hint: did you mean compile\?/);
  const locks = gpuplan(["locks", "init", "--help"]);
  expect(locks).toMatchObject({ exitCode: 0 });
  expect(locks.stdout).toMatch(/^Usage: gpuplan locks init \[options\]/);
});
