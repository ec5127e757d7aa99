#!/usr/bin/env node
// Bundles the report page's script (src/ui/report/client/, browser code type-checked by its own
// tsconfig) into one minified string, src/generated/report-client.js, that `gpuplan report`
// writes inline into each report: the page loads nothing. Run by `npm run build` and the test setup.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "src/generated");
mkdirSync(outDir, { recursive: true });
const result = await build({
  entryPoints: [join(root, "src/ui/report/client/main.ts")],
  bundle: true,
  write: false,
  format: "iife",
  platform: "browser",
  target: "chrome110",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
const js = result.outputFiles[0].text.trim();
// Inline in a script element: a `</script` or `<!--` in it would end or change the element.
if (/<\/script|<!--/i.test(js)) throw new Error("report client: the bundle contains </script or <!--");
const banner = "// Generated from src/ui/report/client/ by scripts/generate-report-client.mjs. Do not edit.";
writeFileSync(
  join(outDir, "report-client.js"),
  `${banner}\nexport const REPORT_CLIENT_JS = ${JSON.stringify(js)};\n`,
);
writeFileSync(
  join(outDir, "report-client.d.ts"),
  `${banner}\nexport declare const REPORT_CLIENT_JS: string;\n`,
);
