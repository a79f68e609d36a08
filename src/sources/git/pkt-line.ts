/**
 * Git's pkt-line framing (gitprotocol-common): a 4-hex-digit length that counts itself, then the
 * payload; `0000` flush, `0001` delimiter, `0002` response end.
 */
export type Pkt = { readonly kind: 'data'; readonly data: Buffer } | { readonly kind: 'flush' | 'delim' | 'end' };

export function pktLine(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0'), 'ascii'), payload]);
}

export const FLUSH = Buffer.from('0000', 'ascii');
export const DELIM = Buffer.from('0001', 'ascii');

/** Splits a whole response into packets; throws on a malformed length. */
export function parsePktLines(buf: Buffer): Pkt[] {
  const out: Pkt[] = [];
  let at = 0;
  while (at < buf.length) {
    if (at + 4 > buf.length) throw new Error('truncated pkt-line length');
    const hex = buf.toString('ascii', at, at + 4);
    if (!/^[0-9a-f]{4}$/i.test(hex)) throw new Error(`invalid pkt-line length ${JSON.stringify(hex)}`);
    const len = parseInt(hex, 16);
    if (len === 0) out.push({ kind: 'flush' });
    else if (len === 1) out.push({ kind: 'delim' });
    else if (len === 2) out.push({ kind: 'end' });
    else if (len < 4 || at + len > buf.length) throw new Error('truncated pkt-line');
    else out.push({ kind: 'data', data: buf.subarray(at + 4, at + len) });
    at += len < 4 ? 4 : len;
  }
  return out;
}

/** The payload as text without its trailing newline. */
export function pktText(p: Pkt): string | undefined {
  if (p.kind !== 'data') return undefined;
  const s = p.data.toString('utf8');
  return s.endsWith('\n') ? s.slice(0, -1) : s;
}
