#!/usr/bin/env node
// Precompiles the JSON Schemas into standalone ajv validators (src/generated/), so that no
// schema is compiled at run time: `gpuplan compile` starts faster and ships no codegen step.
// Run by `npm run build` (and so by `npm install` via prepare) and by the test setup.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import standaloneCode from "ajv/dist/standalone/index.js";
import { exportName, literalType, schemaValues } from "./schema-values.mjs";
import { SCHEMAS } from "./schemas.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "src/generated");
mkdirSync(outDir, { recursive: true });

// The version as a build-time constant: the bundled CLI lives in dist/bundle/, where a
// package.json lookup relative to the module would miss.
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
writeFileSync(
  join(outDir, "version.js"),
  `// Generated from package.json. Do not edit.\nexport const VERSION = ${JSON.stringify(version)};\n`,
);
writeFileSync(join(outDir, "version.d.ts"), "export declare const VERSION: string;\n");

// Every schema file, so that one schema's $ref to another ("pipeline.schema.json#/$defs/Size")
// resolves; each validator then carries the definitions it uses.
const schemaDir = join(root, "schemas");
const allSchemas = readdirSync(schemaDir)
  .filter((f) => f.endsWith(".schema.json"))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(schemaDir, f), "utf8")));

const values = [];
const valueTypes = [];
for (const { name, file } of SCHEMAS) {
  const schema = JSON.parse(readFileSync(join(root, file), "utf8"));
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    code: { source: true, esm: true },
    verbose: false,
    discriminator: true,
  });
  // `x-default`: what an absent plan field means when no constant can say it (an annotation).
  ajv.addKeyword({ keyword: "x-default", schemaType: "string" });
  for (const other of allSchemas) if (other.$id !== schema.$id) ajv.addSchema(other);
  const validate = ajv.compile(schema);
  const own = schemaValues(schema);
  values.push(`export const ${exportName(name)} = ${JSON.stringify(own)};`);
  valueTypes.push(`export declare const ${exportName(name)}: ${literalType(own)};`);
  // ajv's ESM output still require()s its small runtime helpers; turn those into imports.
  const imports = [];
  const code = standaloneCode(ajv, validate).replace(/require\("([^"]+)"\)\.default/g, (_, mod) => {
    const id = `runtime${imports.length}`;
    imports.push(`import ${id} from "${mod}.js";`);
    // Node hands ESM a CommonJS module as module.exports (function on .default); vite's interop
    // hands over the function itself. Accept both.
    return `(${id}.default ?? ${id})`;
  });
  writeFileSync(
    join(outDir, `${name}-validator.js`),
    `// Generated from ${file} by scripts/generate-validators.mjs. Do not edit.\n${imports.join("\n")}\n${code}`,
  );
  writeFileSync(
    join(outDir, `${name}-validator.d.ts`),
    `import type { AjvError } from "../problems/schema-errors.js";\ndeclare const validate: { (data: unknown): boolean; errors?: AjvError[] | null };\nexport default validate;\n`,
  );
}

// Defaults, enumerations and string patterns the code uses as the schemas state them
// (scripts/schema-values.mjs): the schema is their only source.
const banner = "// Generated from schemas/*.schema.json by scripts/generate-validators.mjs. Do not edit.";
writeFileSync(join(outDir, "schema-values.js"), `${banner}\n${values.join("\n")}\n`);
writeFileSync(join(outDir, "schema-values.d.ts"), `${banner}\n${valueTypes.join("\n")}\n`);
