/**
 * A one-pass reader for the JSON bodies evaluation requests nearly always are: an object whose
 * members are plain strings or objects of plain strings, in ASCII, e.g.
 * `{"namespaceKey":"default","flagKey":"f","entityId":"u","context":{"plan":"pro"}}`.
 *
 * It reads the bytes straight into the value `JSON.parse` would return for them and declines
 * (returns undefined) anything else: a byte outside printable ASCII or a backslash in a string,
 * any other kind of value, a key `__proto__` at the top, malformed or trailing text. A declined
 * body goes the general way (UTF-8 check, JSON.parse, depth limit), so the outcome for every body
 * is exactly the general one; only the common case skips decoding the text and parsing it again
 * generically, which showed in the evaluation profile.
 *
 * Nested objects are made without a prototype (so a key `__proto__` is an ordinary member, as
 * JSON.parse makes it); readers treat them as the plain objects JSON.parse returns.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;

function skipSpace(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else return i;
  }
}

/** The end (index of the closing quote) of a plain string starting after `b[start - 1]` = `"`; -1 when not plain. */
function plainStringEnd(b: Buffer, start: number): number {
  for (let i = start; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) return i;
    // Only printable ASCII without escapes is read here; anything else declines.
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return -1;
  }
  return -1;
}

type Members = Record<string, unknown>;

/**
 * Reads `{ "key": <plain string | nested object> , ... }` starting at `b[i]` = `{`, into `out`.
 * Returns the index after the closing brace, or -1 to decline.
 */
function readObject(b: Buffer, i: number, out: Members, nested: boolean): number {
  i = skipSpace(b, i + 1);
  if (b[i] === CLOSE) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const keyEnd = plainStringEnd(b, i + 1);
    if (keyEnd < 0) return -1;
    const key = b.toString('latin1', i + 1, keyEnd);
    if (!nested && key === '__proto__') return -1;
    i = skipSpace(b, keyEnd + 1);
    if (b[i] !== COLON) return -1;
    i = skipSpace(b, i + 1);
    const c = b[i];
    if (c === QUOTE) {
      const end = plainStringEnd(b, i + 1);
      if (end < 0) return -1;
      out[key] = b.toString('latin1', i + 1, end);
      i = end + 1;
    } else if (c === OPEN && !nested) {
      const inner = Object.create(null) as Members;
      i = readObject(b, i, inner, true);
      if (i < 0) return -1;
      out[key] = inner;
    } else {
      return -1;
    }
    i = skipSpace(b, i);
    if (b[i] === COMMA) {
      i = skipSpace(b, i + 1);
      continue;
    }
    if (b[i] === CLOSE) return i + 1;
    return -1;
  }
}

/** The value JSON.parse would give for these bytes, when they are a flat object of plain strings; else undefined. */
export function readFlatJsonObject(bytes: Buffer): Members | undefined {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN) return undefined;
  const out: Members = {};
  i = readObject(bytes, i, out, false);
  if (i < 0 || skipSpace(bytes, i) !== bytes.length) return undefined;
  return out;
}
