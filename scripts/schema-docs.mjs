// Renders one JSON Schema as a Markdown reference page: the document, then each definition
// ($defs and inline objects) as a table of its properties with type, default and description.
// Everything on the page comes from the schema; nothing is written by hand.

/** Markdown table cells cannot hold `|` or line breaks. */
const cell = (text) => String(text).replaceAll("|", "\\|").replaceAll("\n", " ");
const code = (value) => `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
/** GitHub's heading anchors: lower case, spaces to dashes, most punctuation dropped. */
export const anchor = (heading) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, "")
    .replaceAll(" ", "-");

/** The page a schema file's reference lives on, relative to docs/reference/file-formats/. */
export const pageOf = (schemaFile) => `${schemaFile.replace(/\.schema\.json$/, "")}.md`;

const CONSTRAINTS = [
  ["minimum", (v) => `≥ ${v}`],
  ["exclusiveMinimum", (v) => `> ${v}`],
  ["maximum", (v) => `≤ ${v}`],
  ["minLength", (v) => `at least ${v} character${v === 1 ? "" : "s"}`],
  ["maxLength", (v) => `at most ${v} characters`],
  ["minItems", (v) => `at least ${v} item${v === 1 ? "" : "s"}`],
  ["maxItems", (v) => `at most ${v} items`],
  ["uniqueItems", (v) => (v ? "unique items" : "")],
  ["minProperties", (v) => `at least ${v} entr${v === 1 ? "y" : "ies"}`],
  ["pattern", (v) => `matches ${code(v)}`],
];

/** Renders `schema` (parsed, from `file`, e.g. "pipeline.schema.json"). */
export function schemaPage(schema, file) {
  // Named sections: $defs, then inline objects found while rendering (by title or by path).
  const sections = [];
  const named = new Map();
  const refName = (ref) => {
    const [target, pointer = ""] = ref.split("#");
    const def = pointer.replace(/^\/\$defs\//, "");
    if (target === "") return `[${def}](#${anchor(def)})`;
    return `[${def || target.replace(/\.schema\.json$/, "")}](${pageOf(target)}${def ? `#${anchor(def)}` : ""})`;
  };

  function typeOf(node, path) {
    if (node === true || node === undefined) return "any";
    if (node.$ref) return refName(node.$ref);
    if ("const" in node) return code(node.const);
    if (node.enum) return node.enum.map(code).join(" or ");
    for (const key of ["anyOf", "oneOf"])
      if (node[key]) return node[key].map((branch, i) => typeOf(branch, `${path}/${key}/${i}`)).join(" or ");
    if (node.allOf?.length === 1) return typeOf(node.allOf[0], path);
    const types = [node.type ?? (node.properties ? "object" : "any")].flat();
    return types
      .map((t) => {
        if (t === "array") return `array of ${typeOf(node.items, `${path}[]`)}`;
        if (t === "object" && node.properties) return inlineSection(node, path);
        if (t === "object" && node.additionalProperties && node.additionalProperties !== true)
          return `map of ${node.propertyNames?.pattern ? `${code(node.propertyNames.pattern)} → ` : ""}${typeOf(node.additionalProperties, `${path}.*`)}`;
        return t;
      })
      .join(" or ");
  }

  function inlineSection(node, path) {
    const name = node.title ?? path;
    if (!named.has(node)) {
      named.set(node, name);
      sections.push({ name, node });
    }
    return `[${name}](#${anchor(name)})`;
  }

  function constraintsOf(node) {
    const own = CONSTRAINTS.filter(([k]) => k in node)
      .map(([k, f]) => f(node[k]))
      .filter(Boolean);
    const branch = node.anyOf?.find((b) => b.type === "string" && b.pattern);
    if (branch) own.push(`a string matches ${code(branch.pattern)}`);
    return own;
  }

  function table(node, name) {
    const required = new Set(node.required ?? []);
    const rows = Object.entries(node.properties).map(([key, p]) => {
      const notes = [p.description, ...constraintsOf(p).map((c) => `(${c})`)].filter(Boolean).join(" ");
      return `| ${code(key)} | ${cell(typeOf(p, `${name}.${key}`))} | ${required.has(key) ? "yes" : ""} | ${"default" in p ? cell(code(p.default)) : "x-default" in p ? cell(`absent: ${p["x-default"]}`) : ""} | ${cell(notes)} |`;
    });
    const extra =
      node.additionalProperties === false
        ? "No other keys are allowed."
        : node.additionalProperties
          ? `Other keys: ${typeOf(node.additionalProperties, `${name}.*`)}.`
          : "";
    const when =
      node.if?.not?.required && node.then?.required
        ? `Without ${node.if.not.required.map(code).join(", ")}, ${node.then.required.map(code).join(", ")} is required.`
        : "";
    return [
      "| key | type | required | default | description |",
      "| --- | --- | --- | --- | --- |",
      ...rows,
      "",
      ...[extra, when].filter(Boolean),
    ].join("\n");
  }

  function body(node, name) {
    const lines = [];
    if (node.description) lines.push(node.description, "");
    if (node.properties) lines.push(table(node, name));
    else if (node.if && node.then && node.else) {
      const cond = node.if.required ? `with ${node.if.required.map(code).join(", ")}` : code(node.if);
      lines.push(
        `A document ${cond} is ${typeOf(node.then, `${name}/then`)}; any other is ${typeOf(node.else, `${name}/else`)}.`,
      );
    } else if (node.oneOf?.every((b) => b.$ref)) {
      // A tagged union: name each branch's tag (its first property with a constant value).
      const tagOf = (ref) => {
        const def = ref.startsWith("#/$defs/") ? schema.$defs?.[ref.slice(8)] : undefined;
        const tag = Object.entries(def?.properties ?? {}).find(([, p]) => "const" in p);
        return tag ? `: ${code(tag[0])} is ${code(tag[1].const)}` : "";
      };
      lines.push("One of:", "", ...node.oneOf.map((b) => `- ${refName(b.$ref)}${tagOf(b.$ref)}`));
    } else {
      const constraints = constraintsOf(node);
      lines.push(`Type: ${typeOf(node, name)}${constraints.length ? ` (${constraints.join(", ")})` : ""}.`);
      if ("default" in node) lines.push("", `Default: ${code(node.default)}.`);
    }
    return lines.join("\n").trimEnd();
  }

  const out = [
    `# ${schema.title ?? file}`,
    "",
    `[\`schemas/${file}\`](../../../schemas/${file}) · JSON Schema 2020-12 · \`$id\` ${code(schema.$id)}`,
    "",
    body(schema, "document"),
  ];
  for (const [name, def] of Object.entries(schema.$defs ?? {})) {
    if (!named.has(def)) {
      named.set(def, name);
      sections.push({ name, node: def });
    }
  }
  // Sections may add inline objects while they render: render until none is left.
  for (let i = 0; i < sections.length; i++) {
    const { name, node } = sections[i];
    sections[i].text = `## ${name}\n\n${body(node, name)}`;
  }
  return `${[
    ...out,
    "",
    ...sections
      .map((s) => s.text)
      .join("\n\n")
      .split("\n"),
  ]
    .join("\n")
    .trimEnd()}\n`;
}
