/**
 * stdout carries results, stderr carries chatter (STYLE.md §8); both quiet when their reader
 * leaves, and written without Node's streams where nothing else uses them (./output-guard.ts).
 * Colour: ./paint.ts.
 */
export { printErr as writeErr, printOut as writeOut } from "./output-guard.js";
