/**
 * Random (version 4) UUIDs for request ids, as flat strings. `crypto.randomUUID()` builds its
 * text by concatenating twenty pieces, and V8 then flattens that string the first time anything
 * reads it (header validation, the response body): in the evaluation profile the two together
 * cost as much as the evaluation. Here the 36 characters are written into a buffer and read out
 * in one piece. The random bytes come from the same source (`crypto.randomFillSync`), fetched for
 * 256 ids at a time, as Node does for randomUUID.
 */
import { randomFillSync } from 'node:crypto';

const IDS_PER_FILL = 256;
const random = Buffer.alloc(16 * IDS_PER_FILL);
let next = IDS_PER_FILL;
const text = Buffer.alloc(36);
/** ASCII codes of the two hex digits of each byte value. */
const HEX = new Uint8Array(512);
for (let b = 0; b < 256; b++) {
  const h = b.toString(16).padStart(2, '0');
  HEX[2 * b] = h.charCodeAt(0);
  HEX[2 * b + 1] = h.charCodeAt(1);
}
/** Where the text of each of the 16 bytes starts: `xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx`. */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
text[8] = text[13] = text[18] = text[23] = 0x2d; // '-'

/** A new random UUID (RFC 9562 version 4, lower-case), like `crypto.randomUUID()`. */
export function newUuid(): string {
  if (next === IDS_PER_FILL) {
    randomFillSync(random);
    next = 0;
  }
  const o = 16 * next++;
  for (let i = 0; i < 16; i++) {
    let b = random[o + i]!;
    if (i === 6) b = (b & 0x0f) | 0x40; // version 4
    else if (i === 8) b = (b & 0x3f) | 0x80; // variant 10xx
    const at = AT[i]!;
    text[at] = HEX[2 * b]!;
    text[at + 1] = HEX[2 * b + 1]!;
  }
  return text.toString('latin1', 0, 36);
}
