/** The console's context input and address (src/ui/lib/context-input.ts). */
import t from 'tap';
import {
  consoleQuery,
  contextFromJson,
  contextFromRows,
  jsonFromContext,
  parseConsoleQuery,
  rowsFromContext,
  withContextKey,
  withSuggestedRows,
} from '../../../src/ui/lib/context-input.js';

t.test('rows', async (t) => {
  t.same(contextFromRows([{ key: ' plan ', value: 'pro' }, { key: '', value: '' }, { key: 'age', value: '' }]), { ok: true, context: { plan: 'pro', age: '' } }, 'keys trimmed, empty rows ignored, empty values kept');
  t.same(contextFromRows([]), { ok: true, context: {} });
  t.same(contextFromRows([{ key: '', value: 'x' }]), { ok: false, error: 'Row 1: the value "x" has no key.' });
  t.same(contextFromRows([{ key: 'a', value: '1' }, { key: 'a', value: '2' }]), { ok: false, error: 'Row 2: the key "a" is given twice.' });
});

t.test('JSON', async (t) => {
  t.same(contextFromJson(' '), { ok: true, context: {} });
  t.same(contextFromJson('{"plan":"pro","n":"1"}'), { ok: true, context: { plan: 'pro', n: '1' } });
  const bad = contextFromJson('{"plan": }');
  t.equal(bad.ok, false);
  t.match(!bad.ok && bad.error, /^The context is not valid JSON: .+\.$/);
  t.same(contextFromJson('[1]'), { ok: false, error: 'The context must be a JSON object like {"plan": "pro"}, not an array.' });
  t.same(contextFromJson('"x"'), { ok: false, error: 'The context must be a JSON object like {"plan": "pro"}, not the string "x".' });
  t.same(contextFromJson('null'), { ok: false, error: 'The context must be a JSON object like {"plan": "pro"}, not null.' });
  t.same(contextFromJson('{"age": 30}'), { ok: false, error: 'The value of "age" must be a string (write "30"), not the number 30.' });
  t.same(contextFromJson('{"a": {"b": "c"}}'), { ok: false, error: 'The value of "a" must be a string, not an object.' });
  t.same(contextFromJson('{"__proto__": "x"}'), { ok: true, context: Object.fromEntries([['__proto__', 'x']]) }, 'an own key, not the prototype');
});

t.test('round trips between rows and JSON', async (t) => {
  t.same(rowsFromContext({}), [{ key: '', value: '' }], 'one empty row to type into');
  t.same(rowsFromContext({ a: '1', b: '' }), [{ key: 'a', value: '1' }, { key: 'b', value: '' }]);
  t.equal(jsonFromContext({}), '{}');
  const ctx = { plan: 'pro', 'x y': 'é"' };
  t.same(contextFromJson(jsonFromContext(ctx)), { ok: true, context: ctx });
  t.same(contextFromRows(rowsFromContext(ctx)), { ok: true, context: ctx });
});

t.test('a large context parses in one pass', async (t) => {
  const big: Record<string, string> = {};
  for (let i = 0; i < 20_000; i++) big[`key-${i}`] = 'v'.repeat(40);
  const text = JSON.stringify(big);
  t.ok(text.length > 1_000_000, 'about 1 MB');
  const parsed = contextFromJson(text);
  t.equal(parsed.ok && Object.keys(parsed.context).length, 20_000);
  const rows = contextFromRows(rowsFromContext(big));
  t.equal(rows.ok && Object.keys(rows.context).length, 20_000);
});

t.test('the address', async (t) => {
  const q = new URLSearchParams('namespace=default&flag=color-theme&entity=u-1&context=%7B%22plan%22%3A%22pro%22%7D&mode=json&ref=main');
  const setup = parseConsoleQuery(q);
  t.same(setup, { namespace: 'default', flag: 'color-theme', entityId: 'u-1', context: '{"plan":"pro"}', mode: 'json' });
  t.same(consoleQuery(setup), { namespace: 'default', flag: 'color-theme', entity: 'u-1', context: '{"plan":"pro"}', mode: 'json' });
  t.same(parseConsoleQuery(new URLSearchParams('')), { namespace: '', flag: '', entityId: '', context: '', mode: 'rows' });
  t.same(consoleQuery({ namespace: '', flag: '', entityId: '', context: ' {} ', mode: 'rows' }), {
    namespace: undefined, flag: undefined, entity: undefined, context: undefined, mode: undefined,
  }, 'empty parts and an empty context are left out');
  t.notOk(Object.keys(consoleQuery(setup)).some((k) => /token|auth/i.test(k)), 'no credential in the address');
});

t.test('ready rows: offered for the keys the segments read, sent only once a value is typed', async (t) => {
  const ready = withSuggestedRows([{ key: '', value: '' }], ['age', 'plan']);
  t.same(ready, [{ key: 'age', value: '', suggested: true }, { key: 'plan', value: '', suggested: true }], 'the blank row gives way to the ready rows');
  t.same(contextFromRows(ready), { ok: true, context: {} }, 'an empty ready row is not in the context');
  t.same(contextFromRows([{ key: 'age', value: '30', suggested: true }, { key: 'plan', value: '', suggested: true }]), { ok: true, context: { age: '30' } });
  t.same(contextFromRows([{ key: 'plan', value: 'pro' }, { key: 'plan', value: '', suggested: true }]), { ok: true, context: { plan: 'pro' } }, 'a typed row and an empty ready row of the same key are no repetition');

  const typed = [{ key: 'plan', value: 'pro' }, { key: 'age', value: '', suggested: true }, { key: 'region', value: 'eu', suggested: true }];
  t.same(
    withSuggestedRows(typed, ['country']),
    [{ key: 'plan', value: 'pro' }, { key: 'region', value: 'eu', suggested: true }, { key: 'country', value: '', suggested: true }],
    'another namespace: empty ready rows no longer offered go, rows with values stay, new keys are added once',
  );
  t.same(withSuggestedRows([{ key: '', value: '' }], []), [{ key: '', value: '' }], 'nothing offered: the blank row stays');
  t.same(withSuggestedRows([], []), [{ key: '', value: '' }]);
});

t.test('a key the trace found missing becomes a row to type its value into', async (t) => {
  t.same(withContextKey([{ key: 'plan', value: 'pro' }], 'age'), { rows: [{ key: 'plan', value: 'pro' }, { key: 'age', value: '', suggested: true }], index: 1 });
  t.same(withContextKey([{ key: '', value: '' }], 'age'), { rows: [{ key: 'age', value: '', suggested: true }], index: 0 }, 'the blank row takes it');
  t.same(withContextKey([{ key: 'age', value: '', suggested: true }], 'age'), { rows: [{ key: 'age', value: '', suggested: true }], index: 0 }, 'a row holding it already');
});
