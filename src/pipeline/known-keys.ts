/**
 * The property names the schema allows at a pointer, for "did you mean" on unknown keys. Read
 * from the schema itself so it cannot drift.
 */
import { readFileSync } from "node:fs";
import { fromPointer } from "../problems/problem.js";

type SchemaNode = {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  $ref?: string;
  anyOf?: SchemaNode[];
};
type RootNode = SchemaNode & { $defs: Record<string, SchemaNode> };

// Read lazily: only a file with an unknown key pays for it. (JSON module imports still warn
// "experimental" on Node 20, which would clutter stderr.)
let schema: RootNode | undefined;
const loadSchema = (): RootNode =>
  (schema ??= JSON.parse(
    readFileSync(new URL("../../schemas/pipeline.schema.json", import.meta.url), "utf8"),
  ));

function deref(node: SchemaNode | undefined): SchemaNode | undefined {
  if (node?.$ref) return deref(loadSchema().$defs[node.$ref.replace("#/$defs/", "")]);
  return node;
}

export function knownPipelineKeys(pointer: string): string[] {
  let node: SchemaNode | undefined = loadSchema();
  for (const seg of fromPointer(pointer)) {
    node = deref(node);
    if (!node) return [];
    if (/^\d+$/.test(seg) && node.items) node = node.items;
    else if (node.properties?.[seg]) node = node.properties[seg];
    else if (node.anyOf) node = node.anyOf.map(deref).find((n) => n?.properties?.[seg])?.properties?.[seg];
    else return [];
  }
  node = deref(node);
  const objectBranch = node?.anyOf?.map(deref).find((n) => n?.properties);
  return Object.keys(node?.properties ?? objectBranch?.properties ?? {});
}
