/**
 * What processes gpuplan did not start hold on the run's GPUs (run/foreign-memory.ts), for the
 * slot lock's admission: read from the run's memory sampler at most every REFRESH_MS while
 * pipelines ask, the latest figure answered at once — admission runs under a GPU's mutex and
 * cannot wait for a driver. The first reading is waited for before the first slot is taken (up to
 * FIRST_READING_MS: a hanging driver does not hold up the run), so that pipelines starting
 * together are not all admitted before anything is known.
 */
import { foreignMemory } from "../foreign-memory.js";
import type { SlotLock } from "../lock/types.js";
import type { MemorySampler } from "../record/memory-snapshot.js";

const REFRESH_MS = 250;
const FIRST_READING_MS = 2_000;

export class ForeignWatch {
  private bytes = new Map<string, number>();
  private readAt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | null = null;
  private first: Promise<void> | null = null;

  constructor(
    private readonly sampler: MemorySampler,
    private readonly lock: SlotLock,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Resolves once the first reading is in (or FIRST_READING_MS have passed). */
  ready(): Promise<void> {
    this.first ??= Promise.race([
      this.refresh(),
      new Promise<void>((resolve) => setTimeout(resolve, FIRST_READING_MS).unref()),
    ]);
    return this.first;
  }

  /** Bytes others hold on the GPU as last read (0 before anything is known); asks for a fresher reading. */
  of(uuid: string): number {
    void this.refresh();
    return this.bytes.get(uuid) ?? 0;
  }

  private refresh(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (performance.now() - this.readAt < REFRESH_MS) return Promise.resolve();
    this.readAt = performance.now();
    this.inFlight = this.read()
      .catch(() => undefined)
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }

  private async read(): Promise<void> {
    const readings = await this.sampler.gpus();
    if (!readings) return;
    this.bytes = await foreignMemory(readings, await this.lock.inspect(), this.env);
  }
}
