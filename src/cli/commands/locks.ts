// Placeholder until the `locks` command lands: it exists so the CLI builds; it reports that it is not there yet.
import { UsageError } from "../../problems/errors.js";

export default async function locks(): Promise<number> {
  throw new UsageError("`gpuplan locks` is not available in this build yet", "not-implemented");
}
