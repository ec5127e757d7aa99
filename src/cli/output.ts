/**
 * stdout carries results, stderr carries chatter (STYLE.md §8); both quiet when their reader
 * leaves (./output-guard.ts). Colour: ./paint.ts.
 */
import { stderr, stdout } from "./output-guard.js";

export const writeOut = (text: string): void => {
  stdout().write(text);
};
export const writeErr = (text: string): void => {
  stderr().write(text);
};
