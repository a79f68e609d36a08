/**
 * Deterministic resource ids. Flipt gives every variant, rule, distribution, rollout and constraint
 * a random UUID on each build; vexil derives them from where the resource sits (namespace, flag or
 * segment, position or key), so an id read from one response still resolves after a reload with
 * unchanged content.
 *
 * One SHA-1 per flag or segment, not one per id: a 10k-flag state holds ~100k ids, and hashing
 * each one cost about a quarter of building the snapshot. The owner's digest (of a name such as
 * `flag/<ns>/<flag>`; the leading kind keeps flags and segments apart) fills the first 74 free
 * bits of the UUID; the last 12 hex digits say which part of the owner it is:
 *
 *   xxxxxxxx-xxxx-8xxx-Vxxx-KPPPPPPPPPPP     x: owner digest, V: RFC 9562 variant (10xx)
 *                                            K: kind (1 variant, 2 rule, 3 distribution,
 *                                               4 rollout, 5 constraint), P: 44-bit position
 *
 * Version 8 (RFC 9562 "custom"): the layout is ours, not a v5 hash of a name.
 *
 * Uniqueness within a snapshot: two parts of the same owner differ in K or P by construction
 * (positions are encoded exactly; variant keys by a 44-bit hash whose rare collisions within a flag
 * are detected, see FlagIds.variant); parts of different owners differ unless 74 bits of two
 * SHA-1 digests coincide. When a position does not fit its field, or a variant hash collides, the
 * part gets a v5 UUID (SHA-1 of its full name), which collides with nothing in practice.
 */
import { hash } from 'node:crypto';

/**
 * The UUID namespace of vexil state ids: 76657869-6c2d-7374-6174-652d69647321, whose 16 bytes are
 * the ASCII text `vexil-state-ids!`. Being ASCII, namespace + name is one UTF-8 string, so each
 * digest is a single one-shot hash call.
 */
const NAMESPACE_TEXT = 'vexil-state-ids!';

// Hex digit -> the digit with its two high bits set to 10 (the RFC 4122 variant), by char code.
const VARIANT_DIGIT: string[] = [];
for (const d of '0123456789abcdef') VARIANT_DIGIT[d.charCodeAt(0)] = ((parseInt(d, 16) & 0x3) | 0x8).toString(16);

const KIND_VARIANT = 1;
const KIND_RULE = 2;
const KIND_DISTRIBUTION = 3;
const KIND_ROLLOUT = 4;
const KIND_CONSTRAINT = 5;
const P44 = 2 ** 44;
/** Distribution payload: rank in the high 24 bits, index in the low 20. */
const P20 = 2 ** 20;
const P24 = 2 ** 24;

/** UUID v5 of `name` (the fallback, and the scheme of every id before the per-owner digest). */
export function stateId(name: string): string {
  const hex = hash('sha1', NAMESPACE_TEXT + name, 'hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${VARIANT_DIGIT[hex.charCodeAt(16)]}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const DASH = 0x2d;
const EIGHT = 0x38;
const VARIANT_CODE: number[] = VARIANT_DIGIT.map((d) => (d === undefined ? 0 : d.charCodeAt(0)));

/**
 * The first 24 characters of every id of the owner named `name`: `xxxxxxxx-xxxx-8xxx-Vxxx-`.
 * Written as one flat string: a template over slices is a tree of about ten small strings that
 * every id of the owner keeps alive (~300 bytes per flag or segment, ~10% of a snapshot).
 */
function ownerPrefix(name: string): string {
  const x = hash('sha1', NAMESPACE_TEXT + name, 'hex');
  const c = (i: number) => x.charCodeAt(i);
  return String.fromCharCode(
    c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), DASH,
    c(8), c(9), c(10), c(11), DASH,
    EIGHT, c(13), c(14), c(15), DASH,
    VARIANT_CODE[c(16)], c(17), c(18), c(19), DASH,
  );
}

const HEX_CODES = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/**
 * The 12 hex digits of kind·2^44 + payload, written digit by digit in one fromCharCode call:
 * Number#toString(16) of a 48-bit double costs about 10x more (V8's generic double-to-radix path),
 * and a 10k-flag state has ~100k ids.
 */
function suffix(kind: number, payload: number): string {
  const hi = kind * 2 ** 20 + Math.floor(payload / P24); // the top 24 bits: kind and payload bits 24..43
  const lo = payload % P24;
  const h = HEX_CODES;
  return String.fromCharCode(
    h[hi >>> 20], h[(hi >>> 16) & 15], h[(hi >>> 12) & 15], h[(hi >>> 8) & 15], h[(hi >>> 4) & 15], h[hi & 15],
    h[lo >>> 20], h[(lo >>> 16) & 15], h[(lo >>> 12) & 15], h[(lo >>> 8) & 15], h[(lo >>> 4) & 15], h[lo & 15],
  );
}

/**
 * Suffixes of small positions repeat across owners (rule 1 of every flag ends in 200000000001):
 * they are made once and shared, so such an id is a two-part string over its owner's prefix and
 * a shared suffix. (Ids are the largest part of a snapshot after the parsed documents.)
 * Slots: kind·256 + position for rules, rollouts and constraints; 2048 + rank·16 + index for
 * distributions of rank < 64 and index < 16.
 */
const suffixCache: string[] = [];

function cachedSuffix(slot: number, kind: number, payload: number): string {
  return (suffixCache[slot] ??= suffix(kind, payload));
}

function position(prefix: string, kind: number, n: number): string {
  return prefix + (n < 256 ? cachedSuffix(kind * 256 + n, kind, n) : suffix(kind, n));
}

const fits = (n: number, limit: number) => Number.isInteger(n) && n >= 0 && n < limit;

/**
 * 44 bits of a key: two independent 32-bit multiply-xorshift lanes, folded. Only uniqueness among
 * the variants of one flag matters, and collisions there are detected.
 */
function hash44(s: string): number {
  let a = 0x9e3779b9;
  let b = 0x85ebca6b;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0xcc9e2d51);
    a ^= a >>> 15;
    b = Math.imul(b ^ c, 0x1b873593);
    b ^= b >>> 13;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b) ^ s.length;
  a ^= a >>> 13;
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  b ^= b >>> 16;
  return (b & 0xfff) * 2 ** 32 + (a >>> 0);
}

/** The ids of one flag's variants, rules, distributions and rollouts. Make one per flag build. */
export class FlagIds {
  private readonly name: string;
  /** Hashed on first use: a flag without variants, rules or rollouts costs nothing. */
  private prefix = '';
  /** Variant payloads and keys handed out so far, in pairs, to detect a hash collision between two keys. */
  private variants: (number | string)[] | null = null;

  constructor(ns: string, flag: string) {
    this.name = `flag/${ns}/${flag}`;
  }

  private owner(): string {
    if (this.prefix === '') this.prefix = ownerPrefix(this.name);
    return this.prefix;
  }

  variant(key: string): string {
    const payload = hash44(key);
    const seen = this.variants;
    if (seen === null) {
      this.variants = [payload, key];
    } else {
      for (let i = 0; i < seen.length; i += 2) {
        if (seen[i] === payload && seen[i + 1] !== key) return stateId(`${this.name}/variant/${key}`);
      }
      seen.push(payload, key);
    }
    return this.owner() + suffix(KIND_VARIANT, payload);
  }

  rule(rank: number): string {
    return fits(rank, P44) ? position(this.owner(), KIND_RULE, rank) : stateId(`${this.name}/rule/${rank}`);
  }

  distribution(rank: number, index: number): string {
    if (!fits(rank, P24) || !fits(index, P20)) return stateId(`${this.name}/rule/${rank}/distribution/${index}`);
    const payload = rank * P20 + index;
    const tail = rank < 64 && index < 16 ? cachedSuffix(2048 + rank * 16 + index, KIND_DISTRIBUTION, payload) : suffix(KIND_DISTRIBUTION, payload);
    return this.owner() + tail;
  }

  rollout(rank: number): string {
    return fits(rank, P44) ? position(this.owner(), KIND_ROLLOUT, rank) : stateId(`${this.name}/rollout/${rank}`);
  }
}

/** The ids of one segment's constraints. */
export class SegmentIds {
  private readonly name: string;
  private prefix = '';

  constructor(ns: string, segment: string) {
    this.name = `segment/${ns}/${segment}`;
  }

  constraint(index: number): string {
    if (!fits(index, P44)) return stateId(`${this.name}/constraint/${index}`);
    if (this.prefix === '') this.prefix = ownerPrefix(this.name);
    return position(this.prefix, KIND_CONSTRAINT, index);
  }
}
