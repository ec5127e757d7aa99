// A warm worker in Node, stdlib only (see docs/guides/warm-workers.md). gpuplan starts it once per
// (key, GPU); it loads its model, prints {"ready": true}, then answers one JSON line per task
// read from stdin. Anything else it prints goes to the step's log. It exits when stdin closes,
// which is also what happens if gpuplan itself dies.
//   node segment-worker.mjs [--load-ms 1000] [--task-ms 20]
import { createInterface } from "node:readline";

const option = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const reply = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

// "Load the model": a real worker would read its weights onto the GPU here.
process.stdout.write(
  `loading on ${process.env.GPUPLAN_DEVICE ?? "?"} (CUDA_VISIBLE_DEVICES=${process.env.CUDA_VISIBLE_DEVICES ?? ""})\n`,
);
await sleep(option("--load-ms", 1000));
const model = { name: "toy-segmenter", loadedAt: new Date().toISOString() };
reply({ ready: true });

for await (const line of createInterface({ input: process.stdin })) {
  const task = JSON.parse(line);
  try {
    // task.args.matrix: the pipeline's matrix values; task.args.argv: the step's own `run` words.
    const plate = task.args.matrix.plate ?? task.pipeline;
    await sleep(option("--task-ms", 20));
    const cells = [...String(plate)].reduce((n, c) => n + c.charCodeAt(0), 0) % 97;
    reply({ id: task.id, ok: true, result: { plate, cells, model: model.name } });
  } catch (e) {
    reply({ id: task.id, ok: false, error: String(e) });
  }
}
