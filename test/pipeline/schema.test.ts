import { describe, expect, it } from "vitest";
import { mayHoldCollectionKey } from "../../src/source/collection-keys.js";
import { check, one, yaml } from "../helpers/pipeline.js";

describe("schema problems", () => {
  it("points an unknown key at the key, with a did-you-mean from the schema", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: s
              run: [x]
              vrma: 2GiB
    `);
    const p = one(loaded.problems, "schema-unknown-property");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`vrma`");
    expect(p.hint).toBe("did you mean `vram`?");
    expect(p.pointer).toBe("/pipelines/0/steps/0/vrma");
    expect([p.line, p.column]).toEqual([7, 9]);
  });

  // Ajv's own words reached the user: "`pipelines.0.steps` must NOT have fewer than 1 items".
  it("says an empty list or string that must not be empty in plain words, at its value", () => {
    const loaded = check(yaml`
      version: 1
      name: ""
      pipelines:
        - name: a
          steps: []
        - name: b
          steps:
            - { id: s, run: [] }
    `);
    expect(loaded.problems.map((p) => [p.code, p.message, p.line])).toEqual([
      ["schema-invalid-value", "`name` must not be empty", 2],
      ["schema-invalid-value", "`pipelines.0.steps` must not be empty", 5],
      ["schema-invalid-value", "`pipelines.1.steps.0.run` must not be empty", 8],
    ]);
    expect(check("version: 1\npipelines: []\n").problems.map((p) => p.message)).toEqual([
      "`pipelines` must not be empty",
    ]);
  });

  it("suggests top-level and registry keys too", () => {
    const top = one(check("version: 1\npipeline: []\n").problems, "schema-unknown-property");
    expect(top.hint).toBe("did you mean `pipelines`?");
    const reg = one(
      check(
        "version: 1\nregistry: { memory_stratgy: balanced }\npipelines: [{ name: p, steps: [{ id: s, run: [x] }] }]\n",
      ).problems,
      "schema-unknown-property",
    );
    expect(reg.hint).toBe("did you mean `memory_strategy`?");
    expect([reg.line, reg.column]).toEqual([2, 13]);
  });

  it("points a missing required property at its parent", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: s
              memory: torch
    `);
    const p = one(loaded.problems, "schema-missing-property");
    expect(p.message).toContain("`run`");
    expect(p.pointer).toBe("/pipelines/0/steps/0");
    expect([p.line, p.column]).toEqual([5, 9]);
  });

  it("reports a bad size string once, at the value, with a size hint", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: s
              run: [x]
              memory: torch
              vram: 12 gigs
    `);
    const p = one(loaded.problems, "schema-invalid-value");
    expect(p.message).toContain("`pipelines.0.steps.0.vram`");
    expect(p.hint).toContain("12GiB");
    expect([p.line, p.column]).toEqual([8, 15]);
  });

  it("reports a bad duration with a duration hint", () => {
    const p = one(
      check("version: 1\npipelines: [{ name: p, steps: [{ id: s, run: [x], timeout: 5 minutes }] }]\n")
        .problems,
      "schema-invalid-value",
    );
    expect(p.hint).toContain("15m");
  });

  it("collects every schema problem in one pass", () => {
    const loaded = check(yaml`
      version: 2
      registry: { memory_strategy: greedy }
      pipelines:
        - name: p
          gpus: 0
          steps:
            - { id: "bad id", run: [x] }
    `);
    expect(loaded.problems.map((p) => p.pointer).sort()).toEqual([
      "/pipelines/0/gpus",
      "/pipelines/0/steps/0/id",
      "/registry/memory_strategy",
      "/version",
    ]);
    expect(loaded.problems.every((p) => p.line !== undefined && p.column !== undefined)).toBe(true);
  });

  it("wrong type", () => {
    const p = one(check("version: 1\npipelines: { name: p }\n").problems, "schema-wrong-type");
    expect(p.message).toBe("`pipelines` must be array");
    expect([p.line, p.column]).toEqual([2, 12]);
  });

  it("a value of none of three types names them all", () => {
    const text =
      "version: 1\npipelines:\n  - name: p-{x}\n    matrix: { x: [a, null] }\n    steps: [{ id: a, run: [echo] }]\n";
    const p = one(check(text).problems, "schema-wrong-type");
    expect(p.message).toBe("`pipelines.0.matrix.x.1` must be string, number or boolean");
  });
});

describe("syntax problems", () => {
  it("reports a YAML syntax error at its offset", () => {
    const loaded = check("version: 1\npipelines:\n  - name: [unclosed\n");
    expect(loaded.problems.length).toBeGreaterThan(0);
    expect(loaded.problems[0]!.code).toBe("syntax-error");
    expect(loaded.problems[0]!.line).toBeGreaterThanOrEqual(3);
    expect(loaded.resolved).toBeUndefined();
  });

  it("reports a duplicate key at the second key", () => {
    const p = one(check("version: 1\nversion: 1\npipelines: []\n").problems, "duplicate-key");
    expect(p.severity).toBe("error");
    expect(p.line).toBe(2);
  });

  it("reports every duplicate key at once, naming the key and where it first was", () => {
    // js-yaml stops at the first: a file with three took three compiles, and never said which key.
    const text = [
      "version: 1",
      "pipelines:",
      "  - name: a",
      "    name: b",
      "    steps:",
      "      - { id: s, run: [true], run: [false] }",
      "      - id: t",
      "        memory: numpy",
      "        id: u",
      "        memory: numpy",
      "",
    ].join("\n");
    const found = check(text).problems.filter((p) => p.code === "duplicate-key");
    expect(found.map((p) => [p.line, p.column, p.message])).toEqual([
      [4, 5, "`name` appears twice in this mapping (first at 3:5)"],
      [6, 31, "`run` appears twice in this mapping (first at 6:18)"],
      [9, 9, "`id` appears twice in this mapping (first at 7:9)"],
      [10, 9, "`memory` appears twice in this mapping (first at 8:9)"],
    ]);
    // Lone-CR line ends count as line ends here too.
    const cr = check(text.replaceAll("\n", "\r")).problems.filter((p) => p.code === "duplicate-key");
    expect(cr.map((p) => [p.line, p.message])).toEqual(found.map((p) => [p.line, p.message]));
  });

  it("names a duplicate that is an alias key (`*k : 2`) and where the key first was", () => {
    const text = "version: 1\nname: &k version\npipelines: []\n*k : 2\n";
    const found = check(text).problems.filter((p) => p.code === "duplicate-key");
    expect(found.map((p) => [p.line, p.column, p.message])).toEqual([
      [4, 1, "`version` appears twice in this mapping (first at 1:1)"],
    ]);
  });

  it("shows a duplicate key's name escaped and cut, and stops at 100", () => {
    const key = `k\u001b[31m${"x".repeat(500)}`;
    const [p] = check(
      `version: 1\n"${key.replace("\u001b", "\\e")}": 1\n"${key.replace("\u001b", "\\e")}": 2\n`,
    ).problems;
    expect(p!.code).toBe("duplicate-key");
    expect(p!.message).not.toContain("\u001b");
    expect(p!.message.length).toBeLessThan(160);
    const many = Array.from({ length: 150 }, (_, i) => `k${i}: 1\nk${i}: 2`).join("\n");
    expect(check(`${many}\n`).problems.filter((x) => x.code === "duplicate-key")).toHaveLength(100);
  });

  it("reports an empty file and a second document", () => {
    expect(one(check("").problems, "empty-file").line).toBe(1);
    // A file whose content is all commented out holds no document: it is empty, as the code says.
    for (const text of [
      "# only a comment\n",
      "  \n# one\n\n   # two",
      "---\n# x\n...\n",
      "%YAML 1.2\n--- # c\n",
    ]) {
      const comment = check(text).problems;
      expect(
        comment.map((p) => [p.code, p.message, p.line, p.column]),
        text,
      ).toEqual([["empty-file", "the file is empty: it holds only comments", 1, 1]]);
    }
    // An explicit null is a document, of the wrong type.
    expect(check("# c\n~\n").problems.map((p) => p.code)).toEqual(["schema-wrong-type"]);
    const p = one(check("version: 1\n---\nversion: 1\n").problems, "multiple-documents");
    expect(p.line).toBeGreaterThanOrEqual(1);
  });

  it("names a YAML merge key instead of an unknown `<<` and a missing `run`", () => {
    const loaded = check(yaml`
      version: 1
      x: &d { run: [echo], memory: numpy }
      pipelines:
        - name: p
          env: &e { A: "1" }
          steps:
            - { id: a, <<: *d }
            - { id: b, run: ["<<"], description: "a << b", env: { <<: *e } }
    `);
    expect(loaded.problems.map((p) => [p.code, p.pointer, p.line, p.column])).toEqual([
      ["merge-key", "/pipelines/0/steps/0/<<", 7, 18],
      ["merge-key", "/pipelines/0/steps/1/env/<<", 8, 61],
    ]);
    expect(loaded.problems[0]!.message).toMatch(/`<<` is a YAML merge key/);
    expect(loaded.resolved).toBeUndefined();
  });

  it("reports a scalar document as the wrong type", () => {
    expect(check("just text\n").problems.map((p) => p.code)).toEqual(["schema-wrong-type"]);
  });
});

describe("one pass after schema errors", () => {
  it("keeps checking the sound parts of a file with schema errors", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, run: [x], memory: Torch, vrma: 1GiB }
            - { id: b, run: [x], needs: [zz] }
        - name: q
          steps:
            - { id: c }
    `);
    const codes = loaded.problems.map((p) => p.code).sort();
    expect(codes).toEqual(
      expect.arrayContaining([
        "schema-missing-property",
        "schema-unknown-property",
        "unknown-memory-type",
        "unknown-need",
      ]),
    );
    for (const p of loaded.problems) expect(p.line, p.code).toBeGreaterThan(0);
  });

  describe("a list or mapping used as a key", () => {
    const step = (lines: string) =>
      `version: 1\npipelines:\n  - name: p\n    steps:\n      - id: s\n        run: [x]\n        memory: torch\n        vram: 1GiB\n${lines}`;
    const at = (text: string) =>
      check(text).problems.map((p) => [p.code, p.line, p.column, p.message.includes("undefined")]);

    it("is an error at the key, once, where js-yaml would have named it a,b", () => {
      const text = step(
        "        device_map:\n          preset: a100-80gb\n          overrides: {[a, b]: cpu}\n",
      );
      expect(at(text)).toEqual([["collection-key", 11, 23, false]]);
    });

    it("is an error for an explicit list key in a pipeline and a mapping key in a step", () => {
      const text = step("        ? {k: v}\n        : 1\n").replace(
        "  - name: p\n",
        "  - name: p\n    ? [a, b]\n    : x\n",
      );
      expect(at(text)).toEqual([
        ["collection-key", 4, 7, false],
        ["collection-key", 11, 11, false],
      ]);
    });

    it("is an error for an alias of a list used as a key, at the alias", () => {
      const text = step(
        "        env: { A: &k [a, b] }\n        device_map:\n          overrides:\n            *k : cpu\n",
      );
      expect(at(text)).toEqual([["collection-key", 12, 13, false]]);
    });

    it("is an error inside a node that aliases repeat, reported once at the node", () => {
      const text = step(
        "        device_map: &m { overrides: { ? [a] : cpu } }\n      - id: t\n        run: [x]\n        memory: torch\n        vram: 1GiB\n        device_map: *m\n",
      );
      expect(at(text)).toEqual([["collection-key", 9, 41, false]]);
    });

    it("is an error for a key without a value that opens a flow mapping, or an alias of a list there", () => {
      const text = step("        env: {[a, b]}\n        device_map: { overrides: {*l} }\n").replace(
        "run: [x]",
        "run: &l [x]",
      );
      expect(at(text)).toEqual([
        ["collection-key", 9, 15, false],
        ["collection-key", 10, 35, false],
      ]);
    });

    it("is an error for a list or mapping key after the first entry of a flow mapping", () => {
      const text = step(
        "        env: {B: 1, [c]}\n        device_map: { overrides: {x: cpu, &k {a: b}, y: cpu} }\n",
      );
      expect(at(text)).toEqual([
        ["collection-key", 9, 21, false],
        ["collection-key", 10, 46, false],
      ]);
    });

    it("is an error with a comment between the comma, brace or alias and the rest of the key", () => {
      const text = step(
        "        env: {B: 1, # note\n          [c]}\n        device_map: { overrides: { # note\n          &k {a: b}, *l # note\n          } }\n",
      ).replace("run: [x]", "run: &l [x]");
      expect(at(text)).toEqual([
        ["collection-key", 10, 11, false],
        ["collection-key", 12, 14, false],
        ["collection-key", 12, 22, false],
      ]);
    });

    it("is looked for after a comma only where the text is not JSON, as JSON keys are strings", () => {
      const json = JSON.stringify({
        version: 1,
        pipelines: [{ name: "p", steps: [{ id: "a" }, { id: "b" }] }],
      });
      expect(mayHoldCollectionKey(json)).toBe(false);
      expect(mayHoldCollectionKey(json.replace('{"id":"b"}', '{"id":"b", [c]}'))).toBe(true);
    });

    it("is no error where the yaml package recovers into a key that js-yaml's data does not hold", () => {
      // js-yaml reads one description, "tile the plate [then]: normalise it"; the yaml package
      // says the quote is not closed and reads `[then]` as a list key of a new entry.
      const text = step('        description: "tile the plate\n[then]: normalise it"\n');
      expect(mayHoldCollectionKey(text)).toBe(true);
      const loaded = check(text);
      expect(loaded.problems).toEqual([]);
      expect(loaded.resolved?.pipelines[0]?.steps.map((s) => s.id)).toEqual(["s"]);
      // A real one after such a string is still one, wherever that document's recovery puts it.
      const real = `${text}        device_map: { overrides: {[a, b]: cpu} }\n`;
      expect(at(real)).toEqual([["collection-key", 11, 35, false]]);
    });

    it("is an error where the yaml package reads the file otherwise (a key past 1,024 characters)", () => {
      const key = `[${"a,".repeat(600)}b]`;
      const text = step(`        device_map:\n          overrides:\n            ${key}: cpu\n`);
      expect(at(text)).toEqual([["collection-key", 11, 13, false]]);
    });
  });
});
