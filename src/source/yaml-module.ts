/**
 * The `yaml` package, loaded on first use (synchronously, so that locating stays a plain
 * function): most files never need it — only a problem to locate (document-offsets.ts) or a
 * duplicate key to list (duplicate-keys.ts) does.
 */
import { createRequire } from "node:module";

type YamlModule = typeof import("yaml");
let yamlModule: YamlModule | undefined;

export const yaml = (): YamlModule => (yamlModule ??= createRequire(import.meta.url)("yaml") as YamlModule);

/**
 * How gpuplan builds a `yaml` document: as js-yaml reads the data — YAML 1.2's core schema even
 * under `%YAML 1.1` (which the yaml package would honour, making `yes:` the key true and missing
 * the key js-yaml reads), duplicate keys kept for listing, errors as plain data.
 */
export const DOCUMENT_OPTIONS = { schema: "core", uniqueKeys: false, prettyErrors: false } as const;
