/**
 * A step's output goes to `logs/<pipeline>@<step>.out.log` in the run folder: on a
 * case-insensitive file system (macOS, SMB shares, some Docker mounts) steps `A` and `a`, or
 * pipelines `P` and `p` with a step in common, wrote into one file, and compile said nothing.
 * Now a warning [log-name-case] at the second name, naming the first. Names that differ beyond
 * ASCII are written with a hash of the whole name, so they never share a file and get none.
 */
import { describe, expect, it } from "vitest";
import { stepLogPaths } from "../../src/run/record/log-names.js";
import { gpuplan } from "../helpers/cli.js";
import { check, one, withCode, yaml } from "../helpers/pipeline.js";

const at = (problems: ReturnType<typeof check>["problems"]) =>
  withCode(problems, "log-name-case").map((p) => [p.pointer, p.line, p.column]);

describe("names whose log files differ only in case", () => {
  it("step ids of one pipeline: a warning at the second id, naming the first; the same id twice is only the error", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: load, run: [a], memory: numpy }
            - { id: Load, run: [a], memory: numpy }
            - { id: seg, run: [a], memory: numpy }
            - { id: seg, run: [a], memory: numpy }
    `);
    const p = one(loaded.problems, "log-name-case");
    expect(p.severity).toBe("warning");
    expect([p.pointer, p.line, p.column]).toEqual(["/pipelines/0/steps/1/id", 6, 15]);
    expect(p.message).toBe(
      "step id `Load` differs only in case from step `load` of pipeline `p`: on a case-insensitive file system (macOS, Windows, SMB shares, some Docker mounts) their logs would be one file",
    );
    expect(withCode(loaded.problems, "duplicate-step-id")).toHaveLength(1);
  });

  it("pipeline names: a warning at the second name when the pipelines share a step id (in any case)", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: Plate
          steps: [{ id: load, run: [a], memory: numpy }]
        - name: plate
          steps: [{ id: LOAD, run: [a], memory: numpy }]
        - name: other
          steps: [{ id: load, run: [a], memory: numpy }]
        - name: OTHER
          steps: [{ id: measure, run: [a], memory: numpy }]
    `);
    expect(at(loaded.problems)).toEqual([["/pipelines/1/name", 5, 11]]);
    expect(one(loaded.problems, "log-name-case").message).toBe(
      "pipeline name `plate` differs only in case from pipeline `Plate`: on a case-insensitive file system (macOS, Windows, SMB shares, some Docker mounts) the logs of their steps `load` and `LOAD` would be one file",
    );
  });

  it("matrix expansions: once per template, naming both combinations; across templates too", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: well-{w}
          matrix: { w: [A, a, b, B] }
          steps: [{ id: s, run: [a], memory: numpy }]
        - name: WELL-{w}
          matrix: { w: [c] }
          steps: [{ id: s, run: [a], memory: numpy }]
        - name: well-c
          steps: [{ id: s, run: [a], memory: numpy }]
    `);
    expect(at(loaded.problems)).toEqual([
      ["/pipelines/0/name", 3, 11],
      ["/pipelines/2/name", 9, 11],
    ]);
    const [matrix, across] = withCode(loaded.problems, "log-name-case");
    expect(matrix!.message).toBe(
      'two combinations of the matrix make pipeline names that differ only in case, `well-A` ({ w: "A" }) and `well-a` ({ w: "a" }): on a case-insensitive file system (macOS, Windows, SMB shares, some Docker mounts) the logs of their step `s` would be one file',
    );
    expect(across!.message).toContain("pipeline name `well-c` differs only in case from pipeline `WELL-c`");
  });

  it("worker keys of the file: a warning at the second key, unless both are step ids of one pipeline", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: a
          steps:
            - { id: seg, worker: { run: [w], key: Cellpose }, memory: torch, vram: 1GiB }
            - { id: Model, worker: { run: [m] }, memory: torch, vram: 1GiB }
            - { id: model, worker: { run: [m] }, memory: torch, vram: 1GiB }
        - name: b
          steps:
            - { id: seg, worker: { run: [v], key: cellpose }, memory: torch, vram: 1GiB }
            - { id: MODEL, worker: { run: [m] }, memory: torch, vram: 1GiB }
    `);
    expect(at(loaded.problems)).toEqual([
      ["/pipelines/0/steps/2/id", 7, 15],
      ["/pipelines/1/steps/0/worker/key", 10, 45],
      ["/pipelines/1/steps/1/id", 11, 15],
    ]);
    expect(withCode(loaded.problems, "log-name-case")[1]!.message).toBe(
      "worker key `cellpose` differs only in case from worker key `Cellpose`: on a case-insensitive file system (macOS, Windows, SMB shares, some Docker mounts) the two workers' logs on one GPU would be one file",
    );
  });

  it("names that differ beyond ASCII are hashed into different files: no warning", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: É
          steps: [{ id: s, run: [a], memory: numpy }]
        - name: é
          steps: [{ id: s, run: [a], memory: numpy }]
        - name: Straße
          steps: [{ id: s, run: [a], memory: numpy }]
        - name: STRASSE
          steps: [{ id: s, run: [a], memory: numpy }]
        - name: a b
          steps: [{ id: s, run: [a], memory: numpy }]
        - name: A B
          steps: [{ id: s, run: [a], memory: numpy }]
    `);
    expect(at(loaded.problems)).toEqual([]);
    const names = ["É", "é", "Straße", "STRASSE", "a b", "A B"].map((n) =>
      stepLogPaths("", n, { id: "s", worker: null }, 1).logPath.toLowerCase(),
    );
    expect(new Set(names).size).toBe(names.length);
  });

  it("gpuplan explain log-name-case explains it", () => {
    const r = gpuplan(["explain", "log-name-case"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^log-name-case: Two steps or pipelines whose log files differ only in case/);
    expect(r.stdout).toContain("exit 0 (1 with --strict)");
  });
});
