/**
 * Data hand-offs between steps: for every `needs` edge, how the producer's output type reaches
 * the consumer's input type. Used by the conversion rule and recorded in the plan.
 */
import { type ConversionKind, classifyConversion, type MemoryType } from "./memory-types.js";
import type { ResolvedPipeline, ResolvedStep } from "./model.js";

export interface Conversion {
  fromStep: string;
  from: MemoryType;
  to: MemoryType;
  kind: ConversionKind;
  /** The producer's declared `data`, when given. */
  bytes: number | null;
}

/** PCIe 4.0 x16 moves about 25 GB/s in practice; enough for an order-of-magnitude estimate. */
const HOST_LINK_BYTES_PER_SECOND = 25e9;

// Steps by id (the first of a duplicated id, as a search would find), once per pipeline: a
// search per edge is quadratic in a pipeline of many steps.
const stepsById = new WeakMap<readonly ResolvedStep[], Map<string, ResolvedStep>>();

function stepById(steps: readonly ResolvedStep[], id: string): ResolvedStep | undefined {
  let index = stepsById.get(steps);
  if (!index) {
    index = new Map();
    for (const s of steps) if (!index.has(s.id)) index.set(s.id, s);
    stepsById.set(steps, index);
  }
  return index.get(id);
}

export function incomingConversions(pipeline: ResolvedPipeline, stepIndex: number): Conversion[] {
  const step = pipeline.steps[stepIndex]!;
  return step.needs.flatMap((need) => {
    const producer = stepById(pipeline.steps, need);
    if (!producer) return [];
    return [
      {
        fromStep: producer.id,
        from: producer.memory.output,
        to: step.memory.input,
        kind: classifyConversion(producer.memory.output, step.memory.input),
        bytes: producer.dataBytes,
      },
    ];
  });
}

/** Estimated transfer time of a conversion, in ms (a round trip crosses the link twice). */
export function transferMs(c: Conversion): number | null {
  if (c.bytes === null) return null;
  const crossings =
    c.kind === "host-roundtrip" ? 2 : c.kind === "host-to-device" || c.kind === "device-to-host" ? 1 : 0;
  return Math.round(((c.bytes * crossings) / HOST_LINK_BYTES_PER_SECOND) * 1000);
}
