/**
 * One record of `scontrol show <entity> --oneliner`: `Key=Value` pairs separated by spaces. Some
 * values hold spaces themselves (OS=Linux 6.1 #1 SMP …, Reason=Not responding [slurm@…]), so a
 * word without `=` belongs to the value before it. `Reason=` is free text an admin typed and
 * scontrol prints it last, so everything after it is its value. Another value may still contain
 * text that looks like `Key=`: a key seen twice is recorded, and a reader that relies on it
 * refuses the record rather than guess which one Slurm meant.
 */
export interface KeyValueRecord {
  values: Map<string, string>;
  /** Keys that appeared more than once (their first value is kept). */
  repeated: Set<string>;
}

const PAIR = /^([A-Za-z][A-Za-z0-9_:./]*)=(.*)$/s;

export function parseKeyValueLine(line: string): KeyValueRecord {
  const reason = line.indexOf(" Reason=");
  if (reason >= 0) {
    const record = parseKeyValueLine(line.slice(0, reason));
    if (record.values.has("Reason")) record.repeated.add("Reason");
    else record.values.set("Reason", line.slice(reason + " Reason=".length).trim());
    return record;
  }
  const values = new Map<string, string>();
  const repeated = new Set<string>();
  let key: string | undefined;
  let value = "";
  const flush = () => {
    if (key === undefined) return;
    if (values.has(key)) repeated.add(key);
    else values.set(key, value);
  };
  for (const word of line.split(" ")) {
    const pair = PAIR.exec(word);
    if (pair) {
      flush();
      key = pair[1]!;
      value = pair[2]!;
    } else if (key !== undefined) {
      value = value === "" && word === "" ? "" : `${value} ${word}`;
    }
  }
  flush();
  for (const [k, v] of values) values.set(k, v.trimEnd());
  return { values, repeated };
}
