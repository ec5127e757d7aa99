// Generated inputs for `gpuplan compile`: what a fuzzer, a careless editor or a hostile file can
// hand it. Deterministic: the same seed gives the same inputs. Used by the campaign
// (`npm run fuzz`, test/fuzz/campaign.mjs) and a small seeded sample in `npm test`.
//
// Each input is { id, category, describe, pipeline: Buffer, inventory?: Buffer, target? }.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { parse, stringify } from "yaml";

const ROOT = new URL("../../", import.meta.url);
const EXAMPLES = ["cell-painting", "diffusion-inference", "jax-training", "hello-cpu", "warm-workers"].map(
  (n) => readFileSync(new URL(`examples/${n}.yaml`, ROOT), "utf8"),
);
const TARGETS = ["dgx-h100", "rtx4090", "mi300x-8", "cpu-only", "dgx-a100-80gb", "l4-x4"];
const INVENTORY =
  "gpus:\n  - { name: NVIDIA H100 80GB HBM3, memory: 80GiB, count: 4, compute_capability: '9.0' }\ncpu: { threads: 64, memory: 512GiB }\n";

/** mulberry32: small, fast, good enough to pick among cases. */
function random(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return {
    next,
    int,
    /** Integer in [lo, hi]. */
    between: (lo, hi) => lo + int(hi - lo + 1),
    pick: (list) => list[int(list.length)],
    chance: (p) => next() < p,
  };
}

// ---- pieces ---------------------------------------------------------------------------------

const CONTROL = [
  "\u0000",
  "\u0007",
  "\u0008",
  "\u000b",
  "\u000c",
  "\r",
  "\u001b",
  "\u001b[2J",
  "\u001b[31m",
  "\u001b]0;pwned\u0007",
  "\u001bc",
  "\u007f",
  "\u0085",
  "\u009b31m",
  "\u202e",
  "\u2028",
  "\u200f",
  "\ufeff",
  "\ud800",
  "\t",
];
const YAML_ESCAPES = [
  "\\0",
  "\\a",
  "\\e",
  "\\e[2J",
  "\\x9b",
  "\\u202e",
  "\\e]0;x\\a",
  "\\L",
  "\\P",
  "\\N",
  "\\r",
  "\\b",
];
const SYNTAX = [
  ":",
  ": ",
  "- ",
  "[",
  "]",
  "{",
  "}",
  ",",
  "&a ",
  "*a",
  "!!str ",
  "|",
  ">",
  "'",
  '"',
  "#",
  "%",
  "@",
  "`",
  "? ",
  "---\n",
  "...\n",
  "<<: *a\n",
];
const HUGE = [
  1e308,
  -1e308,
  2 ** 53 + 1,
  1e21,
  -1,
  0,
  0.1,
  -0.5,
  4294967296,
  "1e999",
  ".inf",
  "-.inf",
  ".nan",
  "9".repeat(400),
  "99999999999999999999999GiB",
  "1e30GiB",
  "18446744073709551616",
  "0x7fffffffffffffff",
  "99999999999d",
  "1.7976931348623157e308ms",
  "8PiB",
];
const NUMERIC_KEYS = [
  "vram",
  "data",
  "estimate",
  "timeout",
  "retries",
  "gpus",
  "max_pipelines_per_gpu",
  "max_warm_per_gpu",
  "max_parallel_pipelines",
  "memory_fraction",
  "context_reserve",
  "min_memory",
  "ready_timeout",
  "ttl",
  "max_pipelines",
  "max_steps",
];

/** Every path in parsed data, for data mutations. */
function paths(value, at = []) {
  const out = at.length ? [at] : [];
  if (Array.isArray(value)) for (const [i, v] of value.entries()) out.push(...paths(v, [...at, i]));
  else if (value !== null && typeof value === "object")
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

function parentOf(root, path) {
  let node = root;
  for (const seg of path.slice(0, -1)) node = node[seg];
  return { parent: node, key: path[path.length - 1] };
}

function randomScalar(r) {
  return r.pick([
    () => r.pick(HUGE),
    () =>
      r.pick([
        "",
        "0",
        "12GiB",
        "12 gigs",
        "30s",
        "Torch",
        "torch",
        "{x}",
        "{{",
        "cuda:0",
        "*",
        "~",
        "null",
        "yes",
      ]),
    () => r.between(-5, 5),
    () => r.next() * 1e6,
    () => r.chance(0.5),
    () => null,
    () => Array.from({ length: r.between(0, 12) }, () => String.fromCharCode(r.between(32, 0x2fff))).join(""),
    () => r.pick(CONTROL) + r.pick(["x", "echo", "id"]),
  ])();
}

function randomValue(r, depth = 0) {
  if (depth > 2 || r.chance(0.6)) return randomScalar(r);
  if (r.chance(0.5)) return Array.from({ length: r.between(0, 3) }, () => randomValue(r, depth + 1));
  const out = {};
  for (let i = r.between(0, 3); i > 0; i--)
    out[r.pick(["id", "run", "memory", "vram", "needs", "name", "steps", "matrix", "env", "x", "worker"])] =
      randomValue(r, depth + 1);
  return out;
}

function typo(r, key) {
  const s = String(key);
  if (s.length < 2) return `${s}_`;
  const i = r.int(s.length - 1);
  return r.pick([
    () => s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2),
    () => s.toUpperCase(),
    () => s.slice(0, i) + s.slice(i + 1),
    () => `${s}s`,
    () => s.replaceAll("_", "-"),
  ])();
}

/** One edit on the parsed data, written back as YAML (in a random style). */
function dataMutation(r, text) {
  let data;
  try {
    data = parse(text, { uniqueKeys: false, logLevel: "silent" });
  } catch {
    return text;
  }
  const all = paths(data);
  if (all.length === 0) return text;
  const path = r.pick(all);
  const { parent, key } = parentOf(data, path);
  const kind = r.pick(["delete", "retype", "rename", "duplicate", "unknown-key", "huge"]);
  if (Array.isArray(parent)) {
    if (kind === "delete") parent.splice(key, 1);
    else if (kind === "duplicate") parent.splice(key, 0, structuredClone(parent[key]));
    else parent[key] = kind === "huge" ? r.pick(HUGE) : randomValue(r);
  } else if (kind === "delete") delete parent[key];
  else if (kind === "rename") {
    parent[typo(r, key)] = parent[key];
    delete parent[key];
  } else if (kind === "duplicate") parent[`${key}_`] = structuredClone(parent[key]);
  else if (kind === "unknown-key") parent[typo(r, r.pick(NUMERIC_KEYS))] = randomScalar(r);
  else parent[key] = kind === "huge" ? r.pick(HUGE) : randomValue(r);
  try {
    return stringify(data, { indent: r.between(1, 4), flowCollectionPadding: r.chance(0.5), lineWidth: 0 });
  } catch {
    return text;
  }
}

/** One edit on the raw text. */
function textMutation(r, text) {
  const lines = text.split("\n");
  const i = r.int(lines.length);
  const j = r.int(lines.length);
  const at = r.int(text.length + 1);
  switch (
    r.pick([
      "truncate",
      "insert",
      "syntax",
      "indent",
      "dedent",
      "dup-line",
      "del-line",
      "swap",
      "replace-char",
    ])
  ) {
    case "truncate":
      return text.slice(0, at);
    case "insert":
      return text.slice(0, at) + r.pick(CONTROL) + text.slice(at);
    case "syntax":
      return text.slice(0, at) + r.pick(SYNTAX) + text.slice(at);
    case "indent":
      lines[i] = " ".repeat(r.between(1, 5)) + lines[i];
      break;
    case "dedent":
      lines[i] = lines[i].replace(/^ {1,4}/, "");
      break;
    case "dup-line":
      lines.splice(i, 0, lines[i]);
      break;
    case "del-line":
      lines.splice(i, 1);
      break;
    case "swap":
      [lines[i], lines[j]] = [lines[j], lines[i]];
      break;
    default:
      return text.slice(0, at) + String.fromCharCode(r.between(32, 126)) + text.slice(at + 1);
  }
  return lines.join("\n");
}

// ---- categories -----------------------------------------------------------------------------

function mutation(r) {
  let text = r.pick(EXAMPLES);
  const n = r.between(1, 4);
  const done = [];
  for (let k = 0; k < n; k++) {
    const data = r.chance(0.5);
    done.push(data ? "data" : "text");
    text = data ? dataMutation(r, text) : textMutation(r, text);
  }
  return { describe: `${n} mutations (${done.join(", ")})`, pipeline: Buffer.from(text) };
}

function laughs(depth, width) {
  const names = Array.from({ length: depth }, (_, i) => `l${i}`);
  const rows = [`${names[0]}: &${names[0]} [${Array(width).fill('"lol"').join(", ")}]`];
  for (let i = 1; i < depth; i++)
    rows.push(
      `${names[i]}: &${names[i]} [${Array(width)
        .fill(`*${names[i - 1]}`)
        .join(", ")}]`,
    );
  return { rows, top: names[depth - 1] };
}

function bomb(r) {
  const kind = r.pick([
    "laughs-env",
    "laughs-top",
    "laughs-pipelines",
    "quadratic",
    "cycle",
    "matrix",
    "matrix-steps",
    "unknown-keys",
    "dup-ids",
    "slots",
    "gpus",
    "limits",
  ]);
  const steps = "[{ id: a, run: [echo, x] }]";
  let text;
  switch (kind) {
    case "laughs-env": {
      const { rows } = laughs(r.between(4, 12), r.between(5, 20));
      text = `version: 1\npipelines:\n  - name: p\n    env:\n      ${rows.join("\n      ")}\n    steps: ${steps}\n`;
      break;
    }
    case "laughs-top": {
      const { rows, top } = laughs(r.between(4, 12), r.between(5, 20));
      text = `version: 1\n${rows.join("\n")}\npipelines:\n  - name: p\n    description: *${top}\n    steps: ${steps}\n`;
      break;
    }
    case "laughs-pipelines": {
      const w = r.between(3, 12);
      const d = r.between(3, 9);
      let prev = `&s0 { id: a, run: [echo, x] }`;
      const rows = [];
      for (let i = 1; i <= d; i++) {
        rows.push(
          `  s${i}: &s${i} [${i === 1 ? `${prev}, ` : ""}${Array(w)
            .fill(`*s${i - 1}`)
            .join(", ")}]`,
        );
        prev = `*s${i}`;
      }
      text = `version: 1\nx:\n${rows.join("\n")}\npipelines: [&p { name: p, steps: *s1 }${", *p".repeat(r.between(1, 3000))}]\n`;
      break;
    }
    case "quadratic": {
      const n = r.between(100, 4000);
      const m = r.between(100, 4000);
      text = `version: 1\npipelines: [&p { name: x, steps: [&s { id: a, run: [echo] }${", *s".repeat(m - 1)}] }${", *p".repeat(n - 1)}]\n`;
      break;
    }
    case "cycle":
      text = r.pick([
        "version: 1\npipelines: &p\n  - name: x\n    steps: [*p]\n",
        "version: 1\npipelines:\n  - &q\n    name: x\n    steps:\n      - { id: a, run: [echo], env: *q }\n",
        "version: 1\npipelines: [{ name: x, steps: [&s { id: a, run: [echo], needs: [*s] }] }]\n",
      ]);
      break;
    case "matrix":
    case "matrix-steps": {
      const vars = r.between(3, 30);
      const values = r.between(5, 60);
      const list = `[${Array.from({ length: values }, (_, i) => i).join(", ")}]`;
      const names = Array.from({ length: vars }, (_, i) => `v${i}`);
      const stepList =
        kind === "matrix"
          ? steps
          : `[${Array.from({ length: r.between(20, 200) }, (_, i) => `{ id: s${i}, run: [echo] }`).join(", ")}]`;
      const limits = r.chance(0.3) ? `limits: { max_pipelines: ${r.pick([10000000, 1000000, 5])} }\n` : "";
      text = `version: 1\n${limits}pipelines:\n  - name: p-${names.map((n) => `{${n}}`).join("-")}\n    matrix: { ${names.map((n) => `${n}: ${list}`).join(", ")} }\n    steps: ${stepList}\n`;
      break;
    }
    case "unknown-keys": {
      const n = r.pick([1000, 10000, 50000, 100000]);
      text = `version: 1\npipelines: [{ name: p, steps: ${steps} }]\n${Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join("\n")}\n`;
      break;
    }
    case "dup-ids": {
      const n = r.pick([1000, 10000, 30000]);
      text = `version: 1\npipelines:\n  - name: p\n    steps:\n${Array.from({ length: n }, () => "      - { id: a, run: [echo] }").join("\n")}\n`;
      break;
    }
    case "slots":
      text = `version: 1\nregistry: { max_pipelines_per_gpu: ${r.pick([100000, 1e9, 1024, 2 ** 31])}, max_warm_per_gpu: ${r.pick([100000, 1, 1e12])} }\npipelines:\n  - name: p\n    steps: [{ id: a, run: [echo], memory: torch, vram: 1GiB }]\n`;
      break;
    case "gpus":
      text = `version: 1\npipelines:\n  - name: p\n    gpus: ${r.pick([100000, 1e9, 1025, 2 ** 53])}\n    steps: [{ id: a, run: [echo], memory: torch, vram: 1GiB }]\n`;
      break;
    default:
      text = `version: 1\nlimits: { max_pipelines: ${r.pick([1e11, 2 ** 53, -1, 0])}, max_steps: ${r.pick([1e12, 0, 1.5])} }\npipelines: [{ name: p, steps: ${steps} }]\n`;
  }
  return { describe: `bomb: ${kind}`, pipeline: Buffer.from(text) };
}

function oneLine(r) {
  let data;
  try {
    data = parse(r.chance(0.5) ? dataMutation(r, r.pick(EXAMPLES)) : r.pick(EXAMPLES), {
      uniqueKeys: false,
      logLevel: "silent",
    });
  } catch {
    data = parse(EXAMPLES[0]);
  }
  if (r.chance(0.5) && data && Array.isArray(data.pipelines) && data.pipelines.length > 0) {
    // Grow it to a few hundred KB: the same pipelines many times over (names clash: more problems).
    const copies = r.between(50, 600);
    const base = data.pipelines;
    data.pipelines = Array.from({ length: copies }, (_, i) => ({
      ...base[i % base.length],
      name: `p${r.chance(0.7) ? i : 0}`,
    }));
  }
  let text = r.chance(0.7)
    ? JSON.stringify(data)
    : stringify(data, { collectionStyle: "flow", lineWidth: 0 });
  if (r.chance(0.3)) text = textMutation(r, text);
  return { describe: `one line, ${text.length} bytes`, pipeline: Buffer.from(text) };
}

function hugeNumbers(r) {
  let data;
  try {
    data = parse(r.pick(EXAMPLES));
  } catch {
    return mutation(r);
  }
  const all = paths(data).filter((p) => typeof p[p.length - 1] === "string");
  const edits = r.between(1, 4);
  for (let k = 0; k < edits; k++) {
    const path = r.chance(0.5) ? r.pick(all) : [...(r.pick(all) ?? []).slice(0, -1), r.pick(NUMERIC_KEYS)];
    try {
      const { parent, key } = parentOf(data, path);
      if (parent && typeof parent === "object") parent[key] = r.pick(HUGE);
    } catch {
      // The path ran through a scalar: leave it.
    }
  }
  let text = stringify(data, { lineWidth: 0 });
  // Numbers YAML writes as plain scalars (2^53 + 1, 400 nines) stay what they are in the text.
  if (r.chance(0.3))
    text = text.replace(
      /\b\d+\b/,
      r.pick(["1e400", "99999999999999999999999999", "-0", "0x1F", "0o777", "1_000"]),
    );
  return { describe: `huge numbers (${edits})`, pipeline: Buffer.from(text) };
}

function controlChars(r) {
  let text = r.pick(EXAMPLES);
  const n = r.between(1, 5);
  for (let k = 0; k < n; k++) {
    if (r.chance(0.5)) {
      // Raw, anywhere.
      const at = r.int(text.length + 1);
      text = text.slice(0, at) + r.pick(CONTROL) + text.slice(at);
    } else {
      // As YAML escapes in a double-quoted value, key or name: they reach messages.
      const target = r.pick([
        /(name: )([^\n]+)/,
        /(id: )([^\n,}]+)/,
        /(memory: )([^\n,}]+)/,
        /(run: \[)([^,\]]+)/,
        /(\n\s+)(\w+)(:)/,
      ]);
      text = text.replace(
        target,
        (_m, a, b, c = "") => `${a}"${String(b).replaceAll('"', "")}${r.pick(YAML_ESCAPES)}"${c}`,
      );
    }
  }
  return { describe: `control characters (${n})`, pipeline: Buffer.from(text) };
}

function deepNesting(r) {
  const depth = r.pick([20, 99, 100, 101, 1000, 10000, 100000]);
  const kind = r.pick(["flow-seq", "flow-map", "block", "in-env", "in-steps"]);
  let text;
  switch (kind) {
    case "flow-seq":
      text = `${"[".repeat(depth)}${"]".repeat(depth)}\n`;
      break;
    case "flow-map":
      text = `${"{a: ".repeat(depth)}1${"}".repeat(depth)}\n`;
      break;
    case "block":
      text = `${Array.from({ length: Math.min(depth, 3000) }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n")} 1\n`;
      break;
    case "in-env":
      text = `version: 1\npipelines:\n  - name: p\n    env: ${"{a: ".repeat(depth)}1${"}".repeat(depth)}\n    steps: [{ id: a, run: [echo] }]\n`;
      break;
    default:
      text = `version: 1\npipelines:\n  - name: p\n    steps: ${"[".repeat(depth)}{ id: a, run: [echo] }${"]".repeat(depth)}\n`;
  }
  return { describe: `deep nesting: ${kind} ${depth}`, pipeline: Buffer.from(text) };
}

function encoding(r) {
  const text = r.pick(EXAMPLES);
  const kind = r.pick([
    "utf16le-bom",
    "utf16be-bom",
    "utf16le",
    "utf8-bom",
    "latin1",
    "invalid-utf8",
    "crlf",
    "lone-cr",
    "gzip",
    "random",
    "empty",
    "spaces",
    "bom-only",
    "overlong",
    "surrogate",
  ]);
  let bytes;
  switch (kind) {
    case "utf16le-bom":
      bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
      break;
    case "utf16be-bom":
      bytes = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, "utf16le").swap16()]);
      break;
    case "utf16le":
      bytes = Buffer.from(text, "utf16le");
      break;
    case "utf8-bom":
      bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
      break;
    case "latin1":
      bytes = Buffer.from(text.replace("name: ", "name: café-"), "latin1");
      break;
    case "invalid-utf8":
    case "overlong":
    case "surrogate": {
      const seq = { "invalid-utf8": [0x80], overlong: [0xc0, 0x80], surrogate: [0xed, 0xa0, 0x80] }[kind];
      const raw = Buffer.from(text);
      const at = r.int(raw.length);
      bytes = Buffer.concat([raw.subarray(0, at), Buffer.from(seq), raw.subarray(at)]);
      break;
    }
    case "crlf":
      bytes = Buffer.from(text.replaceAll("\n", "\r\n"));
      break;
    case "lone-cr":
      bytes = Buffer.from(text.replaceAll("\n", "\r"));
      break;
    case "gzip":
      bytes = gzipSync(text);
      break;
    case "random":
      bytes = Buffer.from(Array.from({ length: r.between(1, 4000) }, () => r.int(256)));
      break;
    case "empty":
      bytes = Buffer.alloc(0);
      break;
    case "spaces":
      bytes = Buffer.from(" \n\t\n  \n");
      break;
    default:
      bytes = Buffer.from([0xef, 0xbb, 0xbf]);
  }
  return { describe: `encoding: ${kind}`, pipeline: bytes };
}

function inventory(r) {
  const base = { describe: "", pipeline: Buffer.from(r.pick(EXAMPLES)) };
  const kind = r.pick([
    "count",
    "threads",
    "many-kinds",
    "memory",
    "mutated",
    "laughs",
    "binary",
    "detect-json",
  ]);
  let inv;
  switch (kind) {
    case "count":
      inv = `gpus:\n  - { name: H100, memory: 80GiB, count: ${r.pick([10000000, 1025, 1024, 2 ** 40, -1, 0])} }\ncpu: { threads: 8 }\n`;
      break;
    case "threads":
      inv = `gpus: [{ name: H100, memory: 80GiB }]\ncpu: { threads: ${r.pick([1e9, 16384, 16385, 2 ** 53, 0])} }\n`;
      break;
    case "many-kinds":
      inv = `gpus:\n${Array.from({ length: r.between(2, 20) }, (_, i) => `  - { name: G${i}, memory: 80GiB, count: ${r.pick([1, 100, 500, 1024])} }`).join("\n")}\ncpu: { threads: 64 }\n`;
      break;
    case "memory":
      inv = `gpus: [{ name: H100, memory: ${r.pick(HUGE)}, count: 2 }]\ncpu: { threads: 8, memory: ${r.pick(HUGE)} }\n`;
      break;
    case "laughs": {
      const { rows } = laughs(r.between(5, 10), r.between(5, 15));
      inv = `cpu: { threads: 8 }\ngpus: []\nx:\n  ${rows.join("\n  ")}\n`;
      break;
    }
    case "binary":
      inv = Buffer.from(Array.from({ length: 500 }, () => r.int(256)));
      break;
    case "detect-json":
      inv = JSON.stringify({
        schema: "gpuplan/inventory@1",
        cpu: { model: "x", logicalCores: r.pick([8, 1e9]), usableCores: r.pick([8, 1e9]), memoryBytes: 1 },
        gpus: Array.from({ length: r.pick([0, 2, 1025]) }, (_, i) => ({ id: `cuda:${i}` })),
        probes: [],
      });
      break;
    default:
      inv = r.chance(0.5) ? dataMutation(r, INVENTORY) : textMutation(r, INVENTORY);
  }
  return {
    ...base,
    describe: `inventory: ${kind}`,
    inventory: Buffer.isBuffer(inv) ? inv : Buffer.from(inv),
  };
}

/** Category → generator and its share of the inputs. */
const CATEGORIES = [
  ["mutation", mutation, 30],
  ["bomb", bomb, 12],
  ["one-line", oneLine, 10],
  ["huge-numbers", hugeNumbers, 10],
  ["control-chars", controlChars, 12],
  ["deep-nesting", deepNesting, 6],
  ["encoding", encoding, 12],
  ["inventory", inventory, 8],
];
export const CATEGORY_NAMES = CATEGORIES.map(([name]) => name);

/**
 * `count` inputs from `seed`. Every category comes round in turn by its share, so a small
 * sample still has some of each.
 */
export function* fuzzInputs(seed, count) {
  const total = CATEGORIES.reduce((s, [, , w]) => s + w, 0);
  const order = [];
  for (const [name, make, weight] of CATEGORIES) for (let i = 0; i < weight; i++) order.push([name, make]);
  // Interleave the shares: category k at positions spread over the cycle.
  const cycle = [];
  for (let i = 0; i < total; i++) cycle.push(order[(i * 37) % total]);
  for (let id = 0; id < count; id++) {
    const [category, make] = id < CATEGORIES.length ? CATEGORIES[id] : cycle[id % total];
    const r = random(seed * 1_000_003 + id);
    const input = make(r);
    yield { id, category, target: r.pick(TARGETS), ...input };
  }
}
