/**
 * What a run session needs of whoever shows the run: the events and the steps' output as they
 * happen, and a close that hands over the summary and resolves once the terminal is let go of.
 * The core owns this contract; the presentation layer (src/ui/run) implements it and the CLI,
 * which decides the UI mode and the colour level, hands the session a factory — so the core
 * never imports the presentation layer (test/architecture/layers.test.ts checks).
 */
import type { GpuplanPlan } from "../schema-types/plan.js";
import type { RunSummary } from "./outcome/run-tally.js";
import type { RunEvent } from "./record/events.js";

export interface RunView {
  onEvent(event: RunEvent): void;
  /** One line a step printed (already split; without the newline). */
  onOutput(pipeline: string, step: string, stream: "stdout" | "stderr", line: string): void;
  /**
   * Final words (summary, failures) and teardown; resolves when the view has let go of the
   * terminal. Null: the run stopped on an error, which the CLI prints next — no summary, since
   * counts of a run that did not finish would read as a run that did.
   */
  close(summary: RunSummary | null, ending?: RunEnding): Promise<void>;
}

/** What the session knows of the run's end beyond its summary. */
export interface RunEnding {
  /**
   * False when no `--resume` can continue the run (its journal was deleted with its folder): an
   * interrupted run is then offered none, as the CLI's records-incomplete error says next.
   */
  resumable: boolean;
}

/** What the session knows when it opens the view. */
export interface RunViewContext {
  plan: GpuplanPlan;
  /** Pipelines selected for this run (names). */
  pipelines: string[];
  /**
   * Present when the session writes the events to the view's output itself (`--ui json`), byte
   * for byte as the run's events file holds them: the view writes nothing for them, and adds its
   * own last line through `append`, behind them.
   */
  eventLines?: { append(text: string): void };
}

/** Opens the view once the run's folder, journal and lock are in place. */
export type OpenRunView = (context: RunViewContext) => Promise<RunView>;
