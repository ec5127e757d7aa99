// Node fires a setTimeout past 2^31−1 ms after 1 ms: an attack found a step with `timeout: 30d`
// killed at once ("timed out after 9ms"). setLongTimeout waits the whole delay, in steps.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setLongTimeout } from "../../src/run/long-timeout.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

const DAY = 24 * 3600 * 1000;

describe("setLongTimeout", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires after 30 days, not before, and not at all once cleared", () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    const cleared = vi.fn();
    setLongTimeout(fired, 30 * DAY);
    const handle = setLongTimeout(cleared, 30 * DAY);
    vi.advanceTimersByTime(25 * DAY);
    expect(fired).not.toHaveBeenCalled();
    handle.clear();
    vi.advanceTimersByTime(5 * DAY - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(60 * DAY);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(cleared).not.toHaveBeenCalled();
  });

  it("an unref'd timer stays unref'd when it waits again past Node's longest delay", () => {
    vi.useFakeTimers();
    const armed = vi.spyOn(globalThis, "setTimeout");
    setLongTimeout(() => {}, 60 * DAY).unref();
    vi.advanceTimersByTime(50 * DAY); // two steps over: two more timers armed
    const timers = armed.mock.results.map((r) => r.value as { hasRef(): boolean });
    expect(timers.length).toBe(3);
    expect(timers.map((t) => t.hasRef())).toEqual([false, false, false]);
  });

  it("a wall-clock step does not move it: it waits on the monotonic clock", () => {
    // An NTP correction or a VM resumed from a snapshot steps Date forward by days: a 30-day
    // timeout measured on it fired after its first 24.8-day wait.
    vi.useFakeTimers();
    const fired = vi.fn();
    setLongTimeout(fired, 30 * DAY);
    vi.advanceTimersByTime(DAY);
    vi.setSystemTime(Date.now() + 10 * DAY);
    vi.advanceTimersByTime(28 * DAY);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(DAY);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("a short delay fires once, on time", () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    setLongTimeout(fired, 50);
    vi.advanceTimersByTime(49);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });
});

describe("a step's timeout of 30 days", () => {
  it("lets the step finish (it was killed after a few ms)", () => {
    const t = tempDir();
    try {
      const file = join(t.dir, "p.yaml");
      writeFileSync(
        file,
        "version: 1\nname: t\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [node, -e, 'setTimeout(() => {}, 300)'], timeout: 30d }\n",
      );
      const r = gpuplan(["run", file, "--ui", "plain"], { cwd: t.dir });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.stderr).not.toContain("TimeoutOverflowWarning");
      expect(r.stderr).not.toContain("timed out");
      expect(r.exitCode, r.stderr).toBe(0);
    } finally {
      t.cleanup();
    }
  });
});
