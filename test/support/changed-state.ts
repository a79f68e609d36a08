/**
 * The head side of a diff benchmark or test: a generated state (generate-state.ts) with one flag
 * in 100 changed in a way that moves evaluation outcomes. Variant flags whose number is a multiple
 * of 200 get their first rule's split moved by 10 points; boolean flags numbered 107, 307, 507...
 * get their threshold moved by 25 points. Segment files are left as they are. Deterministic.
 */
import jsYaml from 'js-yaml';
import type { GeneratedFile } from './generate-state.js';

interface GenFlag {
  key: string;
  rules?: { distributions: { rollout: number }[] }[];
  rollouts?: { threshold?: { percentage: number } }[];
}

/** One file of the head: its text and how many of its flags were changed. */
export function changeFlags(text: string): { text: string; changed: number } {
  let changed = 0;
  const docs = jsYaml.loadAll(text) as { flags?: GenFlag[] }[];
  for (const doc of docs) {
    for (const f of doc.flags ?? []) {
      const i = Number(f.key.slice('flag_'.length));
      if (i % 100 === 0 && (i / 100) % 2 === 0 && f.rules !== undefined) {
        const [a, b] = f.rules[0]!.distributions;
        a!.rollout = a!.rollout >= 50 ? a!.rollout - 10 : a!.rollout + 10;
        b!.rollout = 100 - a!.rollout;
        changed++;
      } else if (i % 100 === 7 && ((i - 7) / 100) % 2 === 1 && f.rollouts !== undefined) {
        const th = f.rollouts.find((r) => r.threshold !== undefined)!.threshold!;
        th.percentage = th.percentage >= 50 ? th.percentage - 25 : th.percentage + 25;
        changed++;
      }
    }
  }
  return { text: docs.map((d) => jsYaml.dump(d, { lineWidth: -1 })).join('---\n'), changed };
}

/** The head of a whole generated state: every flag file changed as above, segment files as they are. */
export function changedState(base: readonly GeneratedFile[]): { files: GeneratedFile[]; changed: number } {
  let changed = 0;
  const files = base.map((f) => {
    if (f.path.includes('segments')) return f;
    const head = changeFlags(f.text);
    changed += head.changed;
    return { path: f.path, text: head.text };
  });
  return { files, changed };
}
