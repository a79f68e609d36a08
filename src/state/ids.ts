/**
 * Deterministic resource ids. Flipt gives every variant, rule, distribution, rollout and constraint
 * a random UUID on each build; vexil derives them from where the resource sits (namespace, flag or
 * segment, position or key), so an id read from one response still resolves after a reload with
 * unchanged content. UUID v5 (RFC 4122: SHA-1 of a namespace UUID and a name) over names such as
 * `flag/<ns>/<flag>/rule/1/distribution/0`: the leading kind keeps the name spaces of flags and
 * segments apart.
 */
import { hash } from 'node:crypto';

/**
 * The UUID namespace of vexil state ids: 76657869-6c2d-7374-6174-652d69647321, whose 16 bytes are
 * the ASCII text `vexil-state-ids!`. Being ASCII, namespace + name is one UTF-8 string, so each id
 * is a single one-shot hash call (about 3x cheaper than createHash().update().update()).
 */
const NAMESPACE_TEXT = 'vexil-state-ids!';

// Hex digit -> the digit with its two high bits set to 10 (the RFC 4122 variant), by char code.
const VARIANT_DIGIT: string[] = [];
for (const d of '0123456789abcdef') VARIANT_DIGIT[d.charCodeAt(0)] = ((parseInt(d, 16) & 0x3) | 0x8).toString(16);

export function stateId(name: string): string {
  const hex = hash('sha1', NAMESPACE_TEXT + name, 'hex');
  // Version 5 in the high nibble of byte 6; the variant in the high bits of byte 8.
  return (
    hex.slice(0, 8) + '-' + hex.slice(8, 12) + '-5' + hex.slice(13, 16) + '-' +
    VARIANT_DIGIT[hex.charCodeAt(16)] + hex.slice(17, 20) + '-' + hex.slice(20, 32)
  );
}

export const variantId = (ns: string, flag: string, variantKey: string) => stateId(`flag/${ns}/${flag}/variant/${variantKey}`);
export const ruleId = (ns: string, flag: string, rank: number) => stateId(`flag/${ns}/${flag}/rule/${rank}`);
export const distributionId = (ns: string, flag: string, rank: number, index: number) =>
  stateId(`flag/${ns}/${flag}/rule/${rank}/distribution/${index}`);
export const rolloutId = (ns: string, flag: string, rank: number) => stateId(`flag/${ns}/${flag}/rollout/${rank}`);
export const constraintId = (ns: string, segment: string, index: number) => stateId(`segment/${ns}/${segment}/constraint/${index}`);
