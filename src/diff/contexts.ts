/**
 * A contexts file (JSONL: one `{"entityId": "...", "context": {"k": "v"}}` per line) → the impact
 * sample. Pure: the caller reads the text. Bounded: at most MAX_IMPACT_ENTITIES lines of at most
 * MAX_LINE_LENGTH characters; a bad line is an error naming its line number. Blank lines are skipped.
 */
import { invalidArgument } from '../errors.js';
import { MAX_IMPACT_ENTITIES } from './impact.js';
import type { SampleContext } from './types.js';

export const MAX_LINE_LENGTH = 64 * 1024;

export function parseContexts(text: string, name = 'contexts file'): SampleContext[] {
  const out: SampleContext[] = [];
  let start = 0;
  let line = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    line++;
    const raw = text.slice(start, end).trim();
    start = end + 1;
    if (raw === '') continue;
    if (raw.length > MAX_LINE_LENGTH) throw invalidArgument(`${name}:${line}: line longer than ${MAX_LINE_LENGTH} characters`);
    if (out.length === MAX_IMPACT_ENTITIES) throw invalidArgument(`${name}: more than ${MAX_IMPACT_ENTITIES} entries`);
    out.push(parseEntry(raw, `${name}:${line}`));
  }
  return out;
}

function parseEntry(raw: string, where: string): SampleContext {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalidArgument(`${where}: not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidArgument(`${where}: expected an object {entityId, context}`);
  const { entityId, context } = value as Record<string, unknown>;
  if (typeof entityId !== 'string') throw invalidArgument(`${where}: entityId must be a string`);
  // Null prototype, as the server builds contexts: `constructor` must read as absent.
  const ctx = Object.create(null) as Record<string, string>;
  if (context !== undefined) {
    if (context === null || typeof context !== 'object' || Array.isArray(context)) throw invalidArgument(`${where}: context must be an object of strings`);
    for (const [k, v] of Object.entries(context)) {
      if (typeof v !== 'string') throw invalidArgument(`${where}: context.${k} must be a string`);
      ctx[k] = v;
    }
  }
  return { entityId, context: ctx };
}
