/**
 * A JSON-stream reader that keeps offsets: used only for files with problems, to locate them
 * (the fast path uses JSON.parse). Iterative, so deep nesting cannot exhaust the stack.
 */

export interface JsonNode {
  readonly kind: 'object' | 'array' | 'scalar';
  readonly start: number;
  end: number;
  /** Objects: property names with the offsets of their keys, in order. */
  readonly keys?: string[];
  readonly keyStarts?: number[];
  /** Objects: values parallel to `keys`; arrays: items. */
  readonly children?: JsonNode[];
}

export type JsonStream =
  | { readonly docs: JsonNode[] }
  | { readonly docs: JsonNode[]; readonly error: { readonly offset: number; readonly message: string } };

const isWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

class Fail {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

export function readJsonStream(text: string): JsonStream {
  const docs: JsonNode[] = [];
  let i = 0;
  const skipWs = () => {
    while (i < text.length && isWs(text.charCodeAt(i))) i++;
  };
  const char = (k: number) => (k < text.length ? JSON.stringify(text[k]) : 'end of input');

  const readString = (): string => {
    const start = i;
    i++;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Fail(i, 'invalid \\u escape in string');
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else throw new Fail(i, 'invalid escape in string');
      } else if (c === 0x22) {
        i++;
        return JSON.parse(text.slice(start, i)) as string;
      } else if (c < 0x20) {
        throw new Fail(i, 'control character in string');
      }
    }
    throw new Fail(start, 'unterminated string');
  };

  const readScalar = (): JsonNode => {
    const start = i;
    const c = text[i];
    if (c === '"') {
      readString();
      return { kind: 'scalar', start, end: i };
    }
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return { kind: 'scalar', start, end: i };
      }
    }
    const m = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    m.lastIndex = i;
    if (m.exec(text) && m.lastIndex > i) {
      i = m.lastIndex;
      return { kind: 'scalar', start, end: i };
    }
    throw new Fail(i, `unexpected ${char(i)}`);
  };

  // One value, with an explicit stack of open containers.
  const readValue = (): JsonNode => {
    type Frame = { node: JsonNode; first: boolean };
    const stack: Frame[] = [];
    let result: JsonNode | undefined;
    const open = (): JsonNode | undefined => {
      skipWs();
      const c = text[i];
      if (c === '{' || c === '[') {
        const node: JsonNode =
          c === '{'
            ? { kind: 'object', start: i, end: -1, keys: [], keyStarts: [], children: [] }
            : { kind: 'array', start: i, end: -1, children: [] };
        i++;
        stack.push({ node, first: true });
        return undefined;
      }
      return readScalar();
    };
    const attach = (child: JsonNode) => {
      const top = stack[stack.length - 1];
      if (!top) result = child;
      else top.node.children!.push(child);
    };
    const first = open();
    if (first) return first;
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      const node = top.node;
      skipWs();
      const c = text[i];
      const closer = node.kind === 'object' ? '}' : ']';
      if (c === closer) {
        i++;
        node.end = i;
        stack.pop();
        attach(node);
        continue;
      }
      if (!top.first) {
        if (c !== ',') throw new Fail(i, `expected ',' or '${closer}', found ${char(i)}`);
        i++;
        skipWs();
      }
      top.first = false;
      if (node.kind === 'object') {
        if (text[i] !== '"') throw new Fail(i, `expected a property name, found ${char(i)}`);
        node.keyStarts!.push(i);
        node.keys!.push(readString());
        skipWs();
        if (text[i] !== ':') throw new Fail(i, `expected ':', found ${char(i)}`);
        i++;
      }
      const scalar = open();
      if (scalar) attach(scalar);
    }
    return result!;
  };

  try {
    skipWs();
    while (i < text.length) {
      docs.push(readValue());
      skipWs();
    }
    return { docs };
  } catch (err) {
    if (err instanceof Fail) return { docs, error: { offset: err.offset, message: err.message } };
    throw err;
  }
}
