/**
 * The precompiled validators import ajv's CommonJS runtime helpers and call `.default` on them,
 * which is right under plain Node (the import is `module.exports`) but not under vitest, whose
 * CommonJS interop already unwraps `default`. Give the validators what Node gives them.
 * Import this module first in any test that loads a pipeline, inventory or plan validator.
 */
import { vi } from "vitest";

vi.mock("ajv/dist/runtime/equal.js", async (importOriginal) => {
  const mod = await importOriginal<{ default: unknown }>();
  return { default: { default: mod.default } };
});
vi.mock("ajv/dist/runtime/ucs2length.js", async (importOriginal) => {
  const mod = await importOriginal<{ default: unknown }>();
  return { default: { default: mod.default } };
});
