import { describe, expect, it } from "vitest";
import { check, one, withCode, yaml } from "../../helpers/pipeline.js";

const roundtrip = (allow: string, data: string) => yaml`
  version: 1
  pipelines:
    - name: p
      ${allow}
      steps:
        - id: filter
          run: [x]
          memory: pyclesperanto
          vram: 1GiB
          ${data}
        - id: seg
          run: [y]
          memory: torch
          vram: 1GiB
`;

describe("rule: memory conversions", () => {
  it("rejects a pyclesperanto → torch hand-off that cannot go through DLPack", () => {
    const loaded = check(roundtrip("", ""));
    const p = one(loaded.problems, "host-roundtrip-conversion");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`pyclesperanto` output of step `filter`");
    expect(p.message).toContain("`torch` input of step `seg`");
    expect(p.message).toContain("DLPack");
    expect(p.hint).toContain("allow_host_roundtrip: true");
    expect(p.pointer).toBe("/pipelines/0/steps/1/memory");
    expect([p.line, p.column]).toEqual([13, 17]);
  });

  it("downgrades it to a warning with allow_host_roundtrip, showing the bytes when data is declared", () => {
    const loaded = check(roundtrip("allow_host_roundtrip: true", "data: 2GiB"));
    const p = one(loaded.problems, "host-roundtrip-conversion");
    expect(p.severity).toBe("warning");
    expect(p.message).toContain("2 GiB each way");
    // 2 GiB twice over a 25 GB/s link.
    expect(p.message).toContain(`~${Math.round(((2 * 2 * 1024 ** 3) / 25e9) * 1000)} ms`);
    expect(p.hint).not.toContain("declare `data`");
  });

  it("asks for data when the bytes are unknown", () => {
    const p = one(check(roundtrip("allow_host_roundtrip: true", "")).problems, "host-roundtrip-conversion");
    expect(p.severity).toBe("warning");
    expect(p.message).not.toContain("each way");
    expect(p.hint).toContain("declare `data`");
  });

  it("lets cupy, torch, jax and tensorflow hand off through DLPack without a problem", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, run: [x], memory: { input: numpy, output: cupy }, vram: 1GiB }
            - { id: b, run: [x], memory: torch, vram: 1GiB }
            - { id: c, run: [x], memory: { input: jax, output: tensorflow }, vram: 1GiB }
            - { id: d, run: [x], memory: { input: tensorflow, output: numpy }, vram: 1GiB }
    `);
    expect(loaded.problems).toEqual([]);
  });

  it("warns about a GPU → CPU → GPU bounce at the host step", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, run: [x], memory: cupy, vram: 1GiB }
            - { id: host, run: [x], memory: numpy }
            - { id: c, run: [x], memory: torch, vram: 1GiB }
    `);
    const p = one(loaded.problems, "gpu-host-bounce");
    expect(p.severity).toBe("warning");
    expect(p.message).toContain("host step `host`");
    expect(p.message).toContain("`c`");
    expect(p.pointer).toBe("/pipelines/0/steps/1");
    expect(withCode(loaded.problems, "host-roundtrip-conversion")).toEqual([]);
  });

  it("does not warn when the data only leaves the GPU at the end", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, run: [x], memory: cupy, vram: 1GiB }
            - { id: host, run: [x], memory: numpy }
    `);
    expect(loaded.problems).toEqual([]);
  });
});
