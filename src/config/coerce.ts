/**
 * Turns a string from the environment (a `VEXIL_*` variable, or a `${VAR}` placeholder in the file)
 * into the type the schema expects at that key. A string that does not convert is returned as it is,
 * so the schema check reports it with the key's path and the expected type.
 */
import type { SchemaNode } from './schema.js';

export type Coerced = { ok: true; value: unknown } | { ok: false; message: string };

export function coerceFromString(node: SchemaNode | undefined, text: string): Coerced {
  switch (node?.type) {
    case 'integer': {
      const t = text.trim();
      return { ok: true, value: /^[-+]?\d+$/.test(t) ? Number(t) : text };
    }
    case 'number': {
      const t = text.trim();
      return { ok: true, value: t !== '' && Number.isFinite(Number(t)) ? Number(t) : text };
    }
    case 'boolean': {
      const t = text.trim().toLowerCase();
      if (t === 'true' || t === '1') return { ok: true, value: true };
      if (t === 'false' || t === '0') return { ok: true, value: false };
      return { ok: true, value: text };
    }
    case 'array': {
      const t = text.trim();
      if (t.startsWith('[')) {
        const parsed = parseJson(t);
        if (!parsed.ok || !Array.isArray(parsed.value)) {
          return { ok: false, message: `expected a JSON array or a comma-separated list (got ${quote(text)})` };
        }
        return parsed;
      }
      const items = t === '' ? [] : t.split(',').map((s) => s.trim());
      return { ok: true, value: items.map((s) => (node.items ? valueOf(coerceFromString(node.items, s), s) : s)) };
    }
    case 'object': {
      const parsed = parseJson(text.trim());
      if (!parsed.ok || parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
        return { ok: false, message: `expected a JSON object (got ${quote(text)})` };
      }
      return parsed;
    }
    default:
      return { ok: true, value: text };
  }
}

function valueOf(c: Coerced, fallback: unknown): unknown {
  return c.ok ? c.value : fallback;
}

function parseJson(text: string): Coerced {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, message: 'invalid JSON' };
  }
}

/** A value as shown in messages: JSON, cut to a readable length. */
export function quote(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
