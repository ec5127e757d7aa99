import { didYouMean } from "../../problems/did-you-mean.js";
import { error } from "../../problems/problem.js";
import { findNeedsCycle } from "../needs-cycle.js";
import type { Rule } from "./rule.js";

/** `needs` must name steps of the same pipeline and form a DAG. */
export const needsGraph: Rule = ({ pipeline, spec, file, report }) => {
  const ids = pipeline.steps.map((s) => s.id);
  // With a duplicated id (its own problem) `needs` cannot say which step it means, and the
  // second step's default need would be itself: no cycle or unknown-need follows from it.
  if (new Set(ids).size < ids.length) return;
  let broken = false;
  pipeline.steps.forEach((step, j) => {
    const explicit = spec.steps[j]?.needs ?? [];
    explicit.forEach((need, k) => {
      const at = `${step.pointer}/needs/${k}`;
      if (need === step.id) {
        broken = true;
        report(error({ code: "needs-self", message: `step \`${step.id}\` needs itself`, file, pointer: at }));
      } else if (!ids.includes(need)) {
        broken = true;
        const suggestion = didYouMean(need, ids);
        report(
          error({
            code: "unknown-need",
            message: `step \`${step.id}\` needs \`${need}\`, which is not a step of pipeline \`${pipeline.name}\``,
            hint: suggestion ? `did you mean \`${suggestion}\`?` : `steps: ${ids.join(", ")}`,
            file,
            pointer: at,
          }),
        );
      }
    });
  });
  if (broken) return;
  const cycle = findNeedsCycle(pipeline.steps);
  if (cycle) {
    const first = pipeline.steps.find((s) => s.id === cycle[0])!;
    report(
      error({
        code: "needs-cycle",
        message: `steps of pipeline \`${pipeline.name}\` need each other in a cycle: ${cycle.join(" → ")}`,
        hint: "remove one of these `needs` so the steps can run in some order",
        file,
        pointer: `${first.pointer}/needs`,
      }),
    );
  }
};
