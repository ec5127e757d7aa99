/**
 * gpuplan reads YAML 1.2 whatever a `%YAML` directive says (js-yaml accepts `%YAML 1.1` without a
 * word). A 1.1 file's `yes`, `on` and `0777` then read as other values than its author meant, and
 * compile said nothing; now a warning at the directive says so. Locating a problem in such a file
 * reads it as 1.2 too: the yaml package honoured the directive, made `yes:` the key true, and an
 * unknown `yes` was pointed at its step instead of at the key.
 */
import { describe, expect, it } from "vitest";
import { check, one, step } from "../helpers/pipeline.js";

const PIPELINE = [
  "version: 1",
  "pipelines:",
  "  - name: p",
  "    steps:",
  "      - id: a",
  "        run: [echo, on, 0777]",
  "        env: { A: yes }",
];
const file = (...head: string[]) => [...head, ...PIPELINE].join("\n");

describe("%YAML directives", () => {
  it("%YAML 1.1 is a warning at the directive, and the file is read as YAML 1.2", () => {
    const loaded = check(file("# a comment", "%YAML 1.1   # old", "---"));
    const p = one(loaded.problems, "yaml-version");
    expect(loaded.problems).toHaveLength(1);
    expect(p.severity).toBe("warning");
    expect([p.line, p.column]).toEqual([2, 1]);
    expect(p.message).toBe(
      "the file says it is YAML 1.1, but gpuplan reads YAML 1.2, where plain yes/no/on/off are text (not true/false), 0777 is 777 (not 511) and 1:30 is text (not 90)",
    );
    expect(p.hint).toContain("%YAML 1.2");
    expect(step(loaded, "a").argv).toEqual(["echo", "on", "777"]);
    expect(step(loaded, "a").env.A).toBe("yes");
  });

  it("a later 1.x version is a warning too; 1.2 and no directive are none", () => {
    const later = one(check(file("%YAML 1.3", "---")).problems, "yaml-version");
    expect(later.message).toBe("the file says it is YAML 1.3, but gpuplan reads YAML 1.2");
    expect([later.line, later.column]).toEqual([1, 1]);
    expect(check(file("%YAML 1.2", "---")).problems).toEqual([]);
    expect(check(file()).problems).toEqual([]);
  });

  it("`%YAML 1.1` inside a quoted string continued at column 0 is text, not a directive", () => {
    const text = ["description: 'a", "%YAML 1.1'", ...PIPELINE].join("\n");
    expect(check(text).problems).toEqual([]);
  });

  it("under %YAML 1.1 an unknown `yes:` key is located at the key", () => {
    const loaded = check(file("%YAML 1.1", "---", "# x").replace("env: { A: yes }", "yes: 1"));
    const p = one(loaded.problems, "schema-unknown-property");
    expect(p.message).toContain("`yes`");
    expect([p.line, p.column]).toEqual([10, 9]);
  });
});
