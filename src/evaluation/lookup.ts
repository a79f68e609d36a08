/** Namespace → flag lookup with Flipt's not-found errors (flipt-semantics.md §2.1). */
import { notFound } from '../errors.js';
import type { Flag, Snapshot } from '../model/snapshot.js';

/** Empty namespaceKey means `default`. */
export function namespaceOf(namespaceKey: string): string {
  return namespaceKey === '' ? 'default' : namespaceKey;
}

/** The flag, or undefined when its namespace or the flag is missing (no error object built). */
export function lookupFlag(snapshot: Snapshot, namespaceKey: string, flagKey: string): Flag | undefined {
  return snapshot.namespaces.get(namespaceOf(namespaceKey))?.flags.get(flagKey);
}

/** The flag, or NotFound `namespace "<ns>" not found` / `flag "<ns>/<key>" not found`. */
export function findFlag(snapshot: Snapshot, namespaceKey: string, flagKey: string): Flag {
  const ns = namespaceOf(namespaceKey);
  const namespace = snapshot.namespaces.get(ns);
  if (namespace === undefined) throw notFound(`namespace ${goQuote(ns)} not found`);
  const flag = namespace.flags.get(flagKey);
  if (flag === undefined) {
    // Flipt prints the resource as "<ns>/<key>", or just "<ns>" when the key is empty.
    throw notFound(`flag ${goQuote(flagKey === '' ? ns : `${ns}/${flagKey}`)} not found`);
  }
  return flag;
}

const PLAIN = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's %q (strconv.Quote): printable runes as is, `"` and `\` escaped, others as \a..\v, \xNN, \uNNNN, \UNNNNNNNN. */
export function goQuote(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0x22) out += '\\"';
    else if (cp === 0x5c) out += '\\\\';
    else if (cp === 0x20 || (cp > 0x20 && cp < 0x7f)) out += ch;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd'; // a lone surrogate: Go holds U+FFFD there
    else if (cp < 0x20 || cp === 0x7f) out += CONTROL_ESCAPES[cp] ?? `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return out + '"';
}

const CONTROL_ESCAPES: Readonly<Record<number, string>> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
};
