/**
 * Custom targets: inventory files in a folder (`.gpuplan/targets/NAME.yaml` next to the pipeline
 * or in the current folder, or `--targets-dir DIR`), each usable as `--target NAME` and listed by
 * `gpuplan targets` beside the built-in ones. A file is what `compile --inventory` reads: the short
 * form, or what `gpuplan detect --save` wrote on a machine of that kind — so a team names its node
 * types once and plans for them by name. A built-in name cannot be taken over: its file is ignored
 * for `--target` and listed as shadowed.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, extname, join, resolve } from "node:path";
import { UsageError } from "../problems/errors.js";
import { errnoOf, fileError } from "../problems/file-errors.js";
import type { Target } from "../schema-types/targets.js";
import { TARGETS } from "./targets.js";
import type { Inventory, ShortInventory } from "./types.js";

/** Where custom targets live, relative to a project folder. */
const TARGETS_FOLDER = ".gpuplan/targets";

const EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

export interface CustomTargetFile {
  /** Lower case and NFC, as --target matches names (targetKey). */
  name: string;
  file: string;
  /** A built-in target has this name: the file is not used. */
  shadowed: boolean;
  /** Other files of the same folder with this name (`ÉCOLE.yaml` beside `école.yaml`, `a.yml` beside `a.yaml`). */
  clashes: string[];
}

/**
 * The name --target matches: lower case, and NFC, as one name typed on two systems may come in
 * two Unicode forms (macOS file names are decomposed: `école` as e + U+0301).
 */
export function targetKey(name: string): string {
  return name.normalize("NFC").toLowerCase().normalize("NFC");
}

/**
 * A name two files of one folder answer to is refused where it is used: which of them a
 * `--target` read depended on the order of the folder's listing, and nothing said so.
 */
export function refuseAmbiguousTarget(target: CustomTargetFile): void {
  if (target.clashes.length === 0) return;
  const files = [target.file, ...target.clashes].join(", ");
  throw new UsageError(
    `custom target \`${target.name}\` is ambiguous: ${files} ${target.clashes.length === 1 ? "both" : "all"} name it (names match ignoring case and Unicode form)`,
    "ambiguous-target",
    "keep one file for each target name: rename or remove the others",
  );
}

/** The folders to search: the one given, else `.gpuplan/targets` in each of `projectDirs` (deduplicated). */
export function targetFolders(given: string | undefined, projectDirs: readonly string[]): string[] {
  if (given !== undefined) {
    checkGivenFolder(given);
    return [given];
  }
  const byPath = new Map(projectDirs.map((d) => [resolve(d, TARGETS_FOLDER), join(d, TARGETS_FOLDER)]));
  return [...byPath.values()];
}

/**
 * A folder the user named must be one: `--targets-dir shared/targts` (a typo) read as "no custom
 * targets", so `gpuplan targets` listed the built-in ones and exited 0, and compile said only
 * "unknown target". The default folders may well be missing.
 */
function checkGivenFolder(dir: string): void {
  let isFolder: boolean;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch (e) {
    if (errnoOf(e) !== "ENOENT") throw fileError(e, dir, "read", "targets folder");
    throw new UsageError(
      `cannot read targets folder ${dir}: no such folder`,
      "unreadable-file",
      "check the path (a relative path starts from the current folder)",
    );
  }
  if (!isFolder)
    throw new UsageError(
      `cannot read targets folder ${dir}: it is not a folder`,
      "unreadable-file",
      "name the folder that holds the inventory files (NAME.yaml)",
    );
}

/**
 * The inventory files in the folders, by name; the first folder's file wins a name, and files of
 * one folder that share a name are its clashes.
 */
export function listCustomTargets(folders: readonly string[]): CustomTargetFile[] {
  const found = new Map<string, CustomTargetFile>();
  for (const folder of folders) {
    const here = new Set<string>();
    let names: string[];
    try {
      names = readdirSync(folder).sort();
    } catch (e) {
      // No such folder: no custom targets there. One gpuplan may not read (EACCES) may hold the
      // target asked for: "unknown target" of it sent the user looking for a typo.
      const errno = errnoOf(e);
      if (errno === "ENOENT" || errno === "ENOTDIR") continue;
      throw fileError(e, folder, "read", "targets folder");
    }
    for (const entry of names) {
      if (!EXTENSIONS.has(extname(entry))) continue;
      // Only files (or links to files): listing targets must not open a FIFO (it would wait for a
      // writer) or read a device such as /dev/zero that a link points at.
      if (!isFile(join(folder, entry))) continue;
      const name = targetKey(basename(entry, extname(entry)));
      const earlier = found.get(name);
      if (earlier && here.has(name)) earlier.clashes.push(join(folder, entry));
      if (earlier) continue;
      here.add(name);
      found.set(name, {
        name,
        file: join(folder, entry),
        shadowed: TARGETS.some((t) => t.name === name),
        clashes: [],
      });
    }
  }
  return [...found.values()];
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false; // A dangling link or an unreadable entry: not a target.
  }
}

/** An inventory as a target entry (the short form `gpuplan targets --json` lists). */
export function toTarget(name: string, file: string, inventory: Inventory): Target {
  const kinds = new Map<string, NonNullable<ShortInventory["gpus"]>[number]>();
  for (const g of inventory.gpus) {
    const key = `${g.backend}\0${g.name}\0${g.memoryBytes}\0${g.computeCapability ?? ""}`;
    const kind = kinds.get(key);
    if (kind) kind.count = (kind.count ?? 1) + 1;
    else
      kinds.set(key, {
        name: g.name,
        memory: g.memoryBytes,
        count: 1,
        backend: g.backend,
        ...(g.computeCapability !== null && { compute_capability: g.computeCapability }),
      });
  }
  return {
    name,
    description: `custom: ${file}`,
    inventory: {
      gpus: [...kinds.values()],
      cpu: {
        threads: inventory.cpu.usableCores,
        memory: inventory.cpu.memoryBytes,
        model: inventory.cpu.model,
      },
    },
  };
}
