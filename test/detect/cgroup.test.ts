import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCpuMax, parseMemoryLimit, parseProcCgroup, readCgroupLimits } from "../../src/detect/cgroup.js";
import { parseCpuinfo, parseMeminfo, probeCpu, usableCores } from "../../src/detect/cpu.js";
import { rootsFrom } from "../../src/detect/roots.js";
import { formatCpuList, parseCpuList } from "../../src/units/cpu-list.js";
import { ROOT } from "./fake-libs.js";

const fixture = (name: string) =>
  rootsFrom({
    GPUPLAN_PROC_ROOT: join(ROOT, "fixtures/detect", name, "proc"),
    GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect", name, "sys"),
  });

describe("cgroup file parsing", () => {
  it.each([
    ["max 100000", null],
    ["max", null],
    ["200000 100000", 2],
    ["150000 100000", 1.5],
    ["50000 100000\n", 0.5],
    ["0 100000", null],
  ])("cpu.max %j → %j CPUs", (text, quota) => {
    expect(parseCpuMax(text)).toBe(quota);
  });

  it.each([
    ["max\n", null],
    ["-1", null],
    ["9223372036854771712", null],
    ["8589934592\n", 8589934592],
    ["", null],
  ])("memory limit %j → %j", (text, bytes) => {
    expect(parseMemoryLimit(text)).toBe(bytes);
  });

  it("reads the v2 path and the v1 controllers from /proc/self/cgroup", () => {
    const parsed = parseProcCgroup(
      "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/x\n0::/user.slice\n",
    );
    expect(parsed.unified).toBe("/user.slice");
    expect(parsed.controllers.get("cpu")).toBe("/docker/abc");
    expect(parsed.controllers.get("cpuacct")).toBe("/docker/abc");
    expect(parsed.controllers.get("memory")).toBe("/docker/abc");
  });
});

describe("cgroup limits from fixture trees", () => {
  it("v2: the tightest limit along the path (pod quota 2.5 CPUs, parent memory 8 GiB)", () => {
    expect(readCgroupLimits(fixture("cgroup-v2"))).toEqual({
      version: 2,
      cpuQuota: 2.5,
      memoryLimitBytes: 8589934592,
      memoryUsageBytes: 1073741824,
    });
  });

  it("v1: cfs quota/period and memory.limit_in_bytes; the root's 'unlimited' is ignored", () => {
    expect(readCgroupLimits(fixture("cgroup-v1"))).toEqual({
      version: 1,
      cpuQuota: 1.5,
      memoryLimitBytes: 2147483648,
      memoryUsageBytes: 536870912,
    });
  });

  it("a cgroup namespace whose path is not mounted falls back to the mount root", () => {
    expect(readCgroupLimits(fixture("cgroup-ns"))).toMatchObject({
      version: 2,
      cpuQuota: 0.5,
      memoryLimitBytes: 1073741824,
    });
  });

  it("no cgroup file system at all → null", () => {
    expect(readCgroupLimits(fixture("does-not-exist"))).toBeNull();
  });
});

describe("CPU probe on fixture trees", () => {
  it("v2: affinity 6 of 8, quota 2.5 → 3 usable; memory capped at the cgroup limit; NUMA nodes", () => {
    const { cpu, probe } = probeCpu(fixture("cgroup-v2"));
    expect(cpu).toMatchObject({
      model: "AMD EPYC 9654 96-Core Processor",
      logicalCores: 8,
      usableCores: 3,
      memoryBytes: 8589934592,
      availableMemoryBytes: 8589934592 - 1073741824,
      cgroup: { version: 2, cpuQuota: 2.5, memoryLimitBytes: 8589934592 },
    });
    expect(cpu.numaNodes).toEqual([
      { id: 0, cpus: [0, 1, 2, 3], memoryBytes: 32768000 * 1024 },
      { id: 1, cpus: [4, 5, 6, 7], memoryBytes: 32768000 * 1024 },
    ]);
    expect(probe).toMatchObject({ name: "cpu", status: "ok" });
    expect(probe.message).toContain("3 of 8 cores usable");
  });

  it("v1: quota 1.5 → 2 usable of 4; available memory is what the limit leaves", () => {
    const { cpu } = probeCpu(fixture("cgroup-v1"));
    expect(cpu).toMatchObject({
      model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
      logicalCores: 4,
      usableCores: 2,
      memoryBytes: 2147483648,
      availableMemoryBytes: 2147483648 - 536870912,
    });
  });

  it.each([
    [8, null, 8],
    [8, 2.5, 3],
    [8, 0.2, 1],
    [2, 16, 2],
    [4, 2, 2],
  ])("usableCores(affinity %i, quota %j) = %i", (affinity, quota, expected) => {
    expect(usableCores(affinity, quota)).toBe(expected);
  });
});

describe("kernel text formats", () => {
  it.each([
    ["0-3,8,10-11", [0, 1, 2, 3, 8, 10, 11]],
    ["0", [0]],
    ["", []],
    ["5-3", []],
    ["0-1,1-2", [0, 1, 2]],
  ])("CPU list %j", (text, cpus) => {
    expect(parseCpuList(text)).toEqual(cpus);
  });

  it("formats CPU lists back into ranges", () => {
    expect(formatCpuList([0, 1, 2, 3, 8, 10, 11])).toBe("0-3,8,10-11");
  });

  it("cpuinfo: counts processors and finds the model on x86 and arm", () => {
    expect(parseCpuinfo("processor\t: 0\nmodel name\t: X\n\nprocessor\t: 1\nmodel name\t: X\n")).toEqual({
      model: "X",
      logical: 2,
    });
    expect(parseCpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n\nModel\t: Raspberry Pi 4\n").model).toBe(
      "Raspberry Pi 4",
    );
  });

  it("meminfo in bytes", () => {
    expect(parseMeminfo("MemTotal:       16384 kB\nHugePages_Total:       0\n")).toEqual({
      MemTotal: 16384 * 1024,
      HugePages_Total: 0,
    });
  });
});
