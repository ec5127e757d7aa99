/** Spawning the plain-node lock fixtures (fixtures/run/lock) that run the built lock. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../../..");
export const FIXTURES = join(ROOT, "fixtures/run/lock");
/** The fixtures import dist/run/lock: `npm test` builds first; while developing run `npm run build`. */
export const built = existsSync(join(ROOT, "dist/run/lock/index.js"));

/** Run a fixture to completion and parse the JSON line it prints. */
export function runFixture<T>(script: string, args: string[], timeoutMs = 30_000): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(FIXTURES, script), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`${script} exited ${code ?? signal}: ${err}`));
      else resolvePromise(JSON.parse(out) as T);
    });
  });
}

/** Start a fixture and resolve with its first stdout line (it keeps running). */
export function startFixture(script: string, args: string[]): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(FIXTURES, script), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf("\n");
      if (nl !== -1) resolvePromise({ child, line: out.slice(0, nl) });
    });
    child.on("exit", (code) => reject(new Error(`${script} exited ${code} before it was ready: ${err}`)));
  });
}

/** Resolves when the process has exited (it may already have). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => child.once("exit", () => resolvePromise()));
}
