#!/usr/bin/env node
// Generates the TypeScript types from the JSON Schemas (the schemas are the source of truth).
// `--check` exits 1 when the committed types differ from what the schemas give (drift gate).
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";
import { SCHEMAS } from "./schemas.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export async function generateTypes(name, file) {
  const parsed = JSON.parse(readFileSync(join(root, file), "utf8"));
  const schema = SCHEMAS.find((s) => s.name === name)?.asRead ? asRead(parsed) : parsed;
  const ts = await compile(schema, `${name[0].toUpperCase()}${name.slice(1)}Document`, {
    bannerComment: `/* Generated from ${file} by scripts/generate-types.mjs. Do not edit; edit the schema. */`,
    additionalProperties: false,
    unreachableDefinitions: true,
    style: { semi: true, singleQuote: false, printWidth: 110 },
    format: true,
    declareExternallyReferenced: true,
    // Where a $ref to another schema file ("problem.schema.json") is resolved.
    cwd: join(root, "schemas"),
  });
  return ts;
}

/**
 * The schema of the document as its reader returns it: a field with a `default` or an `x-default`
 * may be absent from the file, but the reader fills it in (src/plan/plan-defaults.ts), so the
 * code sees it required.
 */
function asRead(node) {
  if (Array.isArray(node)) return node.map(asRead);
  if (node === null || typeof node !== "object") return node;
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === "default" ? v : asRead(v)]));
  if (node.properties && typeof node.properties === "object") {
    const filled = Object.keys(node.properties).filter(
      (k) => "default" in node.properties[k] || "x-default" in node.properties[k],
    );
    if (filled.length) out.required = [...new Set([...(node.required ?? []), ...filled])];
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes("--check");
  let drift = 0;
  for (const { name, file, types } of SCHEMAS) {
    const ts = await generateTypes(name, file);
    const path = join(root, types);
    if (check) {
      let current = "";
      try {
        current = readFileSync(path, "utf8");
      } catch {}
      if (current !== ts) {
        console.error(`${types} is out of date with ${file}: run npm run generate:types`);
        drift++;
      }
    } else {
      writeFileSync(path, ts);
    }
  }
  process.exit(drift ? 1 : 0);
}
