/**
 * The `yaml` package, loaded on first use (synchronously, so that locating stays a plain
 * function): most files never need it — only a problem to locate (document-offsets.ts) or a
 * duplicate key to list (duplicate-keys.ts) does.
 */
import { createRequire } from "node:module";

type YamlModule = typeof import("yaml");
let yamlModule: YamlModule | undefined;

export const yaml = (): YamlModule => (yamlModule ??= createRequire(import.meta.url)("yaml") as YamlModule);
