/**
 * JSON as a person reads it, at a fraction of JSON.stringify(v, null, 2)'s size: an object or
 * array whose one-line form fits the line (`"argv": ["python3", "x.py"]`, `{ "input": "numpy" }`)
 * stays on one line, anything longer opens one line per entry, indented by two — the layout
 * biome and prettier give JSON. A big plan written with one value per line is mostly indentation
 * (docs/decisions/0015-compact-plans.md). `valueText` writes one value of a bigger document, so a
 * caller may stream a long list entry by entry. Same value, same bytes; strings are escaped as
 * jsonText does.
 */
import { escapeRaw } from "./json-text.js";

/** The longest line an inline object or array may make, indentation included. */
const WIDTH = 100;

/** `value` as compact JSON with a final newline. */
export function compactJson(value: unknown, width = WIDTH): string {
  return `${valueText(value, "", width)}\n`;
}

/**
 * The text of `value` placed after `used` characters of its line (indentation and key), its
 * further lines indented by `indent`: one line when it fits, else one line per entry.
 */
export function valueText(value: unknown, indent: string, width = WIDTH, used = indent.length): string {
  if (typeof value !== "object" || value === null) return scalar(value);
  if (inlineLength(value, width - used) >= 0) return oneLine(value);
  const inner = `${indent}  `;
  let text: string;
  if (Array.isArray(value)) {
    text = "[\n";
    for (let i = 0; i < value.length; i++) {
      text += inner + valueText(isSkipped(value[i]) ? null : value[i], inner, width);
      text += i < value.length - 1 ? ",\n" : "\n";
    }
    return `${text}${indent}]`;
  }
  text = "{\n";
  let first = true;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (!Object.hasOwn(value, key) || isSkipped(v)) continue;
    if (!first) text += ",\n";
    first = false;
    const head = `${inner}${keyText(key)}: `;
    text += head + valueText(v, inner, width, head.length);
  }
  return `${text}\n${indent}}`;
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const isSkipped = (v: unknown) => v === undefined || typeof v === "function" || typeof v === "symbol";

/**
 * The length of `value`'s one-line form, or -1 once it would pass `room` characters. Measured
 * without building it: a big plan tries every object on one line, and most do not fit.
 */
function inlineLength(value: unknown, room: number): number {
  if (typeof value !== "object" || value === null) {
    const n = scalarLength(value);
    return n <= room ? n : -1;
  }
  if (Array.isArray(value)) {
    const n = value.length;
    if (n === 0) return 2;
    // Each item takes a character at least, and each separator two.
    if (3 * n > room) return -1;
    let length = 1;
    for (let i = 0; i < n; i++) {
      if (i > 0) length += 2;
      const part = inlineLength(isSkipped(value[i]) ? null : value[i], room - length - 1);
      if (part < 0) return -1;
      length += part;
    }
    length += 1;
    return length <= room ? length : -1;
  }
  let length = 2;
  let empty = true;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (!Object.hasOwn(value, key) || isSkipped(v)) continue;
    if (!empty) length += 2;
    empty = false;
    length += keyText(key).length + 2;
    if (length > room) return -1;
    const part = inlineLength(v, room - length - 2);
    if (part < 0) return -1;
    length += part;
  }
  if (empty) return 2;
  length += 2;
  return length <= room ? length : -1;
}

/** The one-line form of `value`: `[1, 2]`, `{ "a": 1 }`. */
function oneLine(value: unknown): string {
  if (typeof value !== "object" || value === null) return scalar(value);
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ", ";
      text += oneLine(isSkipped(value[i]) ? null : value[i]);
    }
    return `${text}]`;
  }
  let text = "";
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (!Object.hasOwn(value, key) || isSkipped(v)) continue;
    text += `${text === "" ? "{ " : ", "}${keyText(key)}: ${oneLine(v)}`;
  }
  return text === "" ? "{}" : `${text} }`;
}

/** A string JSON writes as it is, between quotes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the C0 controls are what JSON escapes
const PLAIN = /^[^"\\\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/;

function scalarLength(value: unknown): number {
  return typeof value === "string" && PLAIN.test(value) ? value.length + 2 : scalar(value).length;
}

/** Keys repeat across a plan's pipelines and steps: each is escaped once. */
const keys = new Map<string, string>();
function keyText(key: string): string {
  let text = keys.get(key);
  if (text === undefined) {
    text = scalar(key);
    if (keys.size < 4096) keys.set(key, text);
  }
  return text;
}

function scalar(value: unknown): string {
  switch (typeof value) {
    case "string":
      return escapeRaw(JSON.stringify(value));
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    default:
      // null, and what JSON.stringify writes as null (a bigint would throw there; it never occurs).
      return "null";
  }
}
