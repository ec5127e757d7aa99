/**
 * How learned samples are keyed: (pipeline template, step id). Its own module so that the compiler
 * (learn-estimates.ts) needs nothing of the history reader, which brings the run-folder and journal
 * readers with it: a compile without --history loads none of them
 * (docs/decisions/0017-compile-without-history-code.md).
 */
export const stepKey = (template: string, step: string): string => `${template}\u0000${step}`;
