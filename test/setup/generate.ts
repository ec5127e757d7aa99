// Tests import the sources directly, so the precompiled validators must exist first.
import { execFileSync } from "node:child_process";

export default function setup(): void {
  execFileSync(process.execPath, ["scripts/generate-validators.mjs"], { stdio: "inherit" });
}
