/**
 * Debian's Chromium driven by playwright-core, for the report's browser tests. Nothing downloads
 * a browser: `/usr/bin/chromium` (installed by .ci/run). Without it the tests skip with a message
 * on a developer's machine and fail in CI, where it must be there.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { ROOT } from "../../helpers/cli.js";

const CHROMIUM = process.env.GPUPLAN_TEST_CHROMIUM ?? "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const inCi = Boolean(process.env.CI) && process.env.CI !== "0" && process.env.CI !== "false";

/** Where the tests leave screenshots for a person to look at (git-ignored). */
export const ARTIFACTS = join(ROOT, "test-artifacts");

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    // Playwright adds --no-sandbox itself (Chromium refuses to start as root without it); the
    // rest keeps Chromium from reaching for the network or a GPU.
    args: [
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--log-level=3",
    ],
  });
}

/** Skip the browser tests with a reason, unless in CI, where a missing Chromium is a failure. */
export function chromiumMissing(): string | null {
  if (hasChromium) return null;
  const why = `no Chromium at ${CHROMIUM} (apt-get install chromium; GPUPLAN_TEST_CHROMIUM names another)`;
  if (inCi) throw new Error(`the report's browser tests need Chromium in CI: ${why}`);
  console.warn(`gpuplan tests: ${why}; the report's browser tests are skipped.`);
  return why;
}
