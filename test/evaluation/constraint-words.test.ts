/**
 * Constraints in words (src/evaluation/constraint-words.ts): every operator of every comparison type
 * Flipt v1 evaluates (flipt-semantics §2.6), the one-of lists, the operators that never match,
 * and the match type sentences of the segment page.
 */
import t from 'tap';
import { constraintText, matchTypeLabel, matchTypeSentence, oneOfChange, oneOfList } from '../../src/evaluation/constraint-words.js';

const S = 'STRING_COMPARISON_TYPE';
const E = 'ENTITY_ID_COMPARISON_TYPE';
const N = 'NUMBER_COMPARISON_TYPE';
const D = 'DATETIME_COMPARISON_TYPE';
const B = 'BOOLEAN_COMPARISON_TYPE';
const text = (type: string, property: string, operator: string, value = '') => constraintText({ type, property, operator, value });

t.test('string operators', async (t) => {
  t.equal(text(S, 'plan', 'eq', 'pro'), 'plan is "pro"');
  t.equal(text(S, 'plan', 'neq', 'free'), 'plan is not "free"');
  t.equal(text(S, 'email', 'empty'), 'email is empty');
  t.equal(text(S, 'email', 'notempty'), 'email is not empty');
  t.equal(text(S, 'client', 'prefix', 'web-'), 'client starts with "web-"');
  t.equal(text(S, 'email', 'suffix', '@example.com'), 'email ends with "@example.com"');
  t.equal(text(S, 'ua', 'contains', 'Mobile Safari'), 'ua contains "Mobile Safari"');
  t.equal(text(S, 'ua', 'notcontains', 'bot'), 'ua does not contain "bot"');
  t.equal(text(S, 'plan', 'isoneof', '["enterprise", "pro"]'), 'plan is one of [enterprise, pro]');
  t.equal(text(S, 'plan', 'isnotoneof', '["free"]'), 'plan is not one of [free]');
  t.equal(text(S, 'plan', 'eq', ''), 'plan is ""', 'an empty value stays visible');
  t.equal(text(S, 'plan', 'present'), 'plan present (no such operator for this type: never matches)');
  t.equal(text(S, 'plan', 'gt', 'a'), 'plan gt "a" (no such operator for this type: never matches)');
});

t.test('entity id: the subject is the entity id, the property is not shown', async (t) => {
  t.equal(text(E, 'ignored', 'prefix', 'emp-'), 'entity id starts with "emp-"');
  t.equal(text(E, 'x', 'eq', 'alice'), 'entity id is "alice"');
  t.equal(text(E, 'x', 'isoneof', '["qa-bot-1","qa-bot-2"]'), 'entity id is one of [qa-bot-1, qa-bot-2]');
  t.equal(text(E, 'x', 'notempty'), 'entity id is not empty');
});

t.test('number operators', async (t) => {
  t.equal(text(N, 'age', 'eq', '18'), 'age = 18');
  t.equal(text(N, 'age', 'neq', '18'), 'age ≠ 18');
  t.equal(text(N, 'age', 'lt', '18'), 'age < 18');
  t.equal(text(N, 'age', 'lte', '18'), 'age ≤ 18');
  t.equal(text(N, 'age', 'gt', '18'), 'age > 18');
  t.equal(text(N, 'age', 'gte', '18'), 'age ≥ 18');
  t.equal(text(N, 'age', 'present'), 'age is present');
  t.equal(text(N, 'age', 'notpresent'), 'age is not present');
  t.equal(text(N, 'tier', 'isoneof', '[1, 2.5]'), 'tier is one of [1, 2.5]');
  t.equal(text(N, 'tier', 'isnotoneof', '[3]'), 'tier is not one of [3]');
  t.equal(text(N, 'age', 'le', '18'), 'age le 18 (no such operator for this type: never matches)', 'Flipt accepts `le` but never matches it');
  t.equal(text(N, 'tier', 'isoneof', '["1"]'), 'tier is one of "[\\"1\\"]" (not a JSON array of numbers: never matches)');
});

t.test('datetime operators', async (t) => {
  t.equal(text(D, 'signed_up_at', 'eq', '2024-01-01'), 'signed_up_at is at 2024-01-01');
  t.equal(text(D, 'signed_up_at', 'neq', '2024-01-01'), 'signed_up_at is not at 2024-01-01');
  t.equal(text(D, 'signed_up_at', 'lt', '2024-01-01T00:00:00Z'), 'signed_up_at is before 2024-01-01T00:00:00Z');
  t.equal(text(D, 'signed_up_at', 'lte', '2024-01-01'), 'signed_up_at is at or before 2024-01-01');
  t.equal(text(D, 'signed_up_at', 'gt', '2023-01-01'), 'signed_up_at is after 2023-01-01');
  t.equal(text(D, 'signed_up_at', 'gte', '2023-01-01'), 'signed_up_at is at or after 2023-01-01');
  t.equal(text(D, 'signed_up_at', 'present'), 'signed_up_at is present');
  t.equal(text(D, 'signed_up_at', 'notpresent'), 'signed_up_at is not present');
  t.equal(text(D, 'signed_up_at', 'le', '2023-01-01'), 'signed_up_at le 2023-01-01 (no such operator for this type: never matches)');
});

t.test('boolean operators (the value is ignored)', async (t) => {
  t.equal(text(B, 'beta', 'true', 'false'), 'beta is true');
  t.equal(text(B, 'beta', 'false'), 'beta is false');
  t.equal(text(B, 'beta', 'present'), 'beta is present');
  t.equal(text(B, 'beta', 'notpresent'), 'beta is not present');
  t.equal(text(B, 'beta', 'eq'), 'beta eq (no such operator for this type: never matches)');
});

t.test('an unknown comparison type says so', async (t) => {
  t.equal(text('OTHER_TYPE', 'p', 'eq', 'v'), 'p eq "v" (unknown type OTHER_TYPE)');
});

t.test('one-of lists', async (t) => {
  t.equal(oneOfList('["a","b"]', false), '[a, b]');
  t.equal(oneOfList('[]', false), '[]');
  t.equal(oneOfList('["a b", "c,d", "", "[x]"]', false), '["a b", "c,d", "", "[x]"]', 'items that could be misread are quoted');
  t.equal(oneOfList('[1, "2"]', false), undefined, 'a non-string item: not a list of strings');
  t.equal(oneOfList('[1, "2"]', true), undefined);
  t.equal(oneOfList('{"a":1}', false), undefined, 'an object is not a list');
  t.equal(oneOfList('not json', false), undefined);
  t.equal(text(S, 'plan', 'isnotoneof', 'pro'), 'plan is not one of "pro" (not a JSON array of strings: never matches)');
});

t.test('one-of lists stay linear on ~1 MB values', async (t) => {
  const items = Array.from({ length: 100_000 }, (_, i) => `item-${i}`);
  const out = text(S, 'plan', 'isoneof', JSON.stringify(items));
  t.ok(out.startsWith('plan is one of [item-0, item-1, '));
  t.ok(out.endsWith('item-99999]'));
});

t.test('match types', async (t) => {
  t.equal(matchTypeLabel('ALL_MATCH_TYPE'), 'ALL');
  t.equal(matchTypeLabel('ANY_MATCH_TYPE'), 'ANY');
  t.equal(matchTypeSentence('ALL_MATCH_TYPE', 2), 'An entity is in this segment when all of these constraints match:');
  t.equal(matchTypeSentence('ANY_MATCH_TYPE', 1), 'An entity is in this segment when any of these constraints match:');
  t.equal(matchTypeSentence('ANY_MATCH_TYPE', 0), 'No constraints: every entity is in this segment.', 'zero constraints match for both types');
});

t.test('a changed one-of list reads as the values added and removed', async (t) => {
  const c = (value: string, operator = 'isoneof', type = S, property = 'country') => ({ type, property, operator, value });
  t.equal(oneOfChange(c('["DE","FR"]'), c('["DE","IT"]')), 'country is one of: added IT; removed FR');
  t.equal(oneOfChange(c('["DE"]'), c('["DE","FR","a b"]')), 'country is one of: added FR, "a b"');
  t.equal(oneOfChange(c('["DE","FR"]', 'isnotoneof'), c('["DE"]', 'isnotoneof')), 'country is not one of: removed FR');
  t.equal(oneOfChange(c('[1,2]', 'isoneof', N, 'tier'), c('[2,3]', 'isoneof', N, 'tier')), 'tier is one of: added 3; removed 1');
  t.equal(oneOfChange(c('["DE","FR"]'), c('["FR","DE"]')), 'country is one of: the same values, reordered');
  t.equal(oneOfChange(c('["DE"]'), c('["DE"]', 'isnotoneof')), undefined, 'another operator: not a set change');
  t.equal(oneOfChange(c('["DE"]'), c('["DE"]', 'isoneof', S, 'region')), undefined, 'another property');
  t.equal(oneOfChange(c('["DE"]'), c('not json')), undefined, 'an invalid list on one side');
  t.equal(oneOfChange(c('pro', 'eq'), c('free', 'eq')), undefined, 'not a one-of operator');
});

t.test('a set change of ~100,000 items stays linear', async (t) => {
  const before = Array.from({ length: 100_000 }, (_, i) => `v${i}`);
  const after = [...before.slice(1), 'new'];
  const c = (items: string[]) => ({ type: S, property: 'p', operator: 'isoneof', value: JSON.stringify(items) });
  t.equal(oneOfChange(c(before), c(after)), 'p is one of: added new; removed v0');
});
