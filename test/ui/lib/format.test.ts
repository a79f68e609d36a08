/** Small formatters of the UI (src/ui/lib/format.ts, cookies.ts, session-token.ts). */
import t from 'tap';
import { cookieValue } from '../../../src/ui/lib/cookies.js';
import { age, countOf, flagTypeLabel, formatCount, formatPercent, formatShare, prettyJson, shortRevision } from '../../../src/ui/lib/format.js';
import { forgetToken, readToken, saveToken } from '../../../src/ui/lib/session-token.js';

t.test('revisions and ages', async (t) => {
  t.equal(shortRevision('e789cca2ea65f31293ad3f0e611382bd3d0a5c6d'), 'e789cca');
  t.equal(shortRevision('sha256:0123456789abcdef0123'), '0123456');
  t.equal(shortRevision('v1.2'), 'v1.2');
  t.equal(shortRevision('x'.repeat(40)), `${'x'.repeat(24)}…`);
  const now = Date.parse('2026-01-01T12:00:00Z');
  t.equal(age('2026-01-01T11:59:55Z', now), 'just now');
  t.equal(age('2026-01-01T11:59:30Z', now), '30 s ago');
  t.equal(age('2026-01-01T11:55:00Z', now), '5 min ago');
  t.equal(age('2026-01-01T09:00:00Z', now), '3 h ago');
  t.equal(age('2025-12-28T12:00:00Z', now), '4 days ago');
  t.equal(age('2023-01-01T12:00:00Z', now), '1,096 days ago', 'grouped as every count is');
  t.equal(age('2026-01-01T12:00:10Z', now), 'just now', 'a clock slightly ahead');
  t.equal(age(undefined, now), '');
  t.equal(age('not a time', now), '');
});

t.test('attachments pretty-printed when they are JSON', async (t) => {
  t.equal(prettyJson('{"a":[1,2],"b":{"c":true}}'), '{\n  "a": [\n    1,\n    2\n  ],\n  "b": {\n    "c": true\n  }\n}');
  t.equal(prettyJson(''), '');
  t.equal(prettyJson('not json {'), 'not json {', 'as it is');
  t.equal(flagTypeLabel('BOOLEAN_FLAG_TYPE'), 'boolean');
  t.equal(flagTypeLabel('VARIANT_FLAG_TYPE'), 'variant');
});

t.test('cookies: one value by name, decoded, absent when missing', async (t) => {
  const jar = 'a=1; svc_csrf_token=abc%2Fdef; other=x=y';
  t.equal(cookieValue(jar, 'svc_csrf_token'), 'abc/def');
  t.equal(cookieValue(jar, 'other'), 'x=y');
  t.equal(cookieValue(jar, 'svc'), undefined, 'a prefix is not a name');
  t.equal(cookieValue('', 'a'), undefined);
  t.equal(cookieValue('a=%E0', 'a'), '%E0', 'undecodable: as it is');
});

t.test('the pasted token lives in the given storage only', async (t) => {
  const m = new Map<string, string>();
  const storage = { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k) };
  t.equal(readToken(storage), undefined);
  saveToken(storage, '  tok-123 \n');
  t.equal(readToken(storage), 'tok-123', 'trimmed');
  forgetToken(storage);
  t.equal(readToken(storage), undefined);
  saveToken(storage, '   ');
  t.equal(readToken(storage), undefined, 'blank is no token');
});

t.test('numbers and percentages: one style (en-US grouping, the % right after the number)', async (t) => {
  t.equal(formatCount(3000), '3,000');
  t.equal(formatCount(12), '12');
  t.equal(formatCount(1234567), '1,234,567');
  t.equal(formatCount(0.5), '0.5');
  t.equal(formatCount(2 / 3), '0.67');
  t.equal(formatPercent(50), '50%');
  t.equal(formatPercent(33.333333), '33.33%');
  t.equal(formatPercent(0.5), '0.5%');
  t.equal(formatPercent(100), '100%');
  t.equal(formatPercent(1000), '1000%', 'no grouping: a percentage above 100 is rare and reads as one figure');
  t.equal(formatShare(0.124), '12.4%');
  t.equal(formatShare(1 / 3, 2), '33.33%');
  t.equal(formatShare(0), '0%');
  t.equal(countOf(1, 'reference'), '1 reference');
  t.equal(countOf(3000, 'flag'), '3,000 flags');
  t.equal(countOf(0, 'entry', 'entries'), '0 entries');
  t.equal(countOf(2, 'entry', 'entries'), '2 entries');
});
