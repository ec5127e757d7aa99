/** A mistake on the command line itself (bad flag, missing argument…), with the command's usage line. */
import type { Code } from "../problems/codes.js";
import { UsageError } from "../problems/errors.js";

export class CommandLineError extends UsageError {
  override name = "CommandLineError";
  constructor(
    message: string,
    code: Code,
    /** `gpuplan compile [options] <file>` */
    readonly usage: string,
    /** `gpuplan compile` — where `--help` tells more. */
    readonly command: string,
    /** commander's did-you-mean, when it has one. */
    readonly suggestion?: string,
  ) {
    super(message, code);
  }
}
