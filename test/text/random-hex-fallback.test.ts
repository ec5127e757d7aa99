// Without /dev/urandom (a chroot, a container without /dev, out of descriptors) randomHex still
// draws from the operating system's generator, never from Math.random, whose state can be worked
// out from a few outputs — and run ids, whose suffix is randomHex, are in folder names anyone on
// the machine can list (src/text/random-hex.ts).
import type * as fs from "node:fs";
import { afterEach, expect, it, vi } from "vitest";

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return {
    ...real,
    openSync: (path: fs.PathLike, ...rest: unknown[]) => {
      if (String(path) === "/dev/urandom")
        throw Object.assign(new Error("ENOENT: no such file or directory, open '/dev/urandom'"), {
          code: "ENOENT",
        });
      return (real.openSync as (...a: unknown[]) => number)(path, ...rest);
    },
  };
});

afterEach(() => {
  vi.restoreAllMocks();
});

it("randomHex without /dev/urandom takes the system's random bytes, not Math.random's", async () => {
  const { randomHex } = await import("../../src/text/random-hex.js");
  const mathRandom = vi.spyOn(Math, "random").mockReturnValue(0);
  const drawn = new Set(Array.from({ length: 100 }, () => randomHex(8)));
  expect(mathRandom).not.toHaveBeenCalled();
  expect(drawn.size).toBe(100);
  for (const hex of drawn) expect(hex).toMatch(/^[0-9a-f]{16}$/);
});
