import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/setup/generate.ts", "test/setup/build-fake-libs.ts", "test/setup/slurm.ts"],
    setupFiles: ["test/setup/property-seed.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    // The JSON report is what .ci/run counts from.
    reporters: ["default", ["json", { outputFile: "test-results.json" }]],
  },
});
