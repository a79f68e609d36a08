import t from 'tap';
import { get, isErrorBody, startTestServer } from './support.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

t.test('management reads', async (t) => {
  const { url, store } = await startTestServer(t);
  const api = `${url}/api/v1`;
  const revision = store.get()!.revision;

  t.test('namespaces list and get', async (t) => {
    const r = await get(`${api}/namespaces`);
    t.equal(r.status, 200);
    t.match(r.headers.get('content-type'), /^application\/json/);
    t.equal(r.headers.get('x-vexil-revision'), revision);
    t.same(
      r.body.namespaces.map((n: { key: string }) => n.key),
      ['default', 'paging', 'production'],
      'namespaces in key order',
    );
    t.equal(r.body.totalCount, 3);
    t.equal(r.body.nextPageToken, '');
    const prod = r.body.namespaces[2];
    t.same(Object.keys(prod), ['key', 'name', 'description', 'protected', 'createdAt', 'updatedAt']);
    t.match(prod, { key: 'production', name: 'Production', description: 'Live traffic', protected: false });
    t.match(prod.createdAt, RFC3339);

    const one = await get(`${api}/namespaces/production`);
    t.equal(one.status, 200);
    t.same(one.body, prod);

    const missing = await get(`${api}/namespaces/nope`);
    t.equal(missing.status, 404);
    t.same(missing.body, { code: 5, message: 'namespace "nope" not found', details: [] });
  });

  t.test('flag get: the full shape', async (t) => {
    const r = await get(`${api}/namespaces/default/flags/color`);
    t.equal(r.status, 200);
    const f = r.body;
    t.same(Object.keys(f), [
      'key', 'name', 'description', 'enabled', 'createdAt', 'updatedAt', 'variants', 'namespaceKey', 'type',
      'defaultVariant', 'metadata',
    ]);
    t.match(f, { key: 'color', name: 'Color', description: 'Button color', enabled: true, namespaceKey: 'default', type: 'VARIANT_FLAG_TYPE' });
    t.same(f.metadata, { team: 'web' });
    t.equal(f.variants.length, 2);
    const [red, blue] = f.variants;
    t.same(Object.keys(red), ['id', 'flagKey', 'key', 'name', 'description', 'createdAt', 'updatedAt', 'attachment', 'namespaceKey']);
    t.match(red, { flagKey: '', key: 'red', name: 'Red', description: '', attachment: 'null', namespaceKey: 'default' });
    t.equal(typeof red.id, 'string');
    t.not(red.id, '');
    t.equal(blue.attachment, '{"b":"x","size":2}', 'attachment is compact JSON with sorted keys');
    t.same(f.defaultVariant, blue, 'defaultVariant is the full variant');
    t.equal(f.createdAt, f.updatedAt);
    t.match(f.createdAt, RFC3339);

    const plain = await get(`${api}/namespaces/default/flags/plain`);
    t.equal(plain.status, 200);
    t.notOk('defaultVariant' in plain.body, 'defaultVariant omitted when unset');
    t.notOk('metadata' in plain.body, 'metadata omitted when unset');
    t.equal(plain.body.enabled, false, 'false is emitted');

    const boolFlag = await get(`${api}/namespaces/default/flags/new-checkout`);
    t.equal(boolFlag.body.type, 'BOOLEAN_FLAG_TYPE');
    t.same(boolFlag.body.variants, [], 'empty arrays are emitted');

    const missing = await get(`${api}/namespaces/default/flags/nope`);
    t.equal(missing.status, 404);
    t.same(missing.body, { code: 5, message: 'flag "default/nope" not found', details: [] });
    const missingNs = await get(`${api}/namespaces/nope/flags/color`);
    t.same(missingNs.body, { code: 5, message: 'namespace "nope" not found', details: [] });
  });

  t.test('flags list, namespaced and legacy', async (t) => {
    const r = await get(`${api}/namespaces/default/flags`);
    t.equal(r.status, 200);
    t.same(Object.keys(r.body), ['flags', 'nextPageToken', 'totalCount']);
    t.same(r.body.flags.map((f: { key: string }) => f.key), ['color', 'new-checkout', 'plain']);
    t.equal(r.body.totalCount, 3);
    const legacy = await get(`${api}/flags`);
    t.same(legacy.body, r.body, '/api/v1/flags reads namespace default');
    const legacyOne = await get(`${api}/flags/color`);
    t.equal(legacyOne.body.key, 'color');
    const prod = await get(`${api}/namespaces/production/flags`);
    t.same(prod.body.flags.map((f: { variants: { key: string }[] }) => f.variants[0]!.key), ['green']);
  });

  t.test('segments with constraints', async (t) => {
    const r = await get(`${api}/namespaces/default/segments/internal`);
    t.equal(r.status, 200);
    const s = r.body;
    t.same(Object.keys(s), ['key', 'name', 'description', 'createdAt', 'updatedAt', 'constraints', 'matchType', 'namespaceKey']);
    t.match(s, { key: 'internal', name: 'Internal', description: '', matchType: 'ALL_MATCH_TYPE', namespaceKey: 'default' });
    t.equal(s.constraints.length, 4);
    t.same(Object.keys(s.constraints[0]), [
      'id', 'segmentKey', 'type', 'property', 'operator', 'value', 'createdAt', 'updatedAt', 'namespaceKey', 'description',
    ]);
    t.same(
      s.constraints.map((c: { type: string; operator: string }) => `${c.type}:${c.operator}`),
      ['STRING_COMPARISON_TYPE:suffix', 'NUMBER_COMPARISON_TYPE:gte', 'BOOLEAN_COMPARISON_TYPE:true', 'DATETIME_COMPARISON_TYPE:lt'],
    );
    t.equal(s.constraints[2].value, '', 'absent value is ""');
    const beta = await get(`${api}/segments/beta-users`);
    t.equal(beta.body.constraints[0].description, 'on the beta plan', 'legacy segment route');
    const list = await get(`${api}/namespaces/default/segments`);
    t.same(list.body.segments.map((x: { key: string }) => x.key), ['beta-users', 'everyone', 'internal']);
    t.equal(list.body.segments[1].matchType, 'ANY_MATCH_TYPE');
    t.same(list.body.segments[1].constraints, []);
    const missing = await get(`${api}/namespaces/default/segments/nope`);
    t.same(missing.body, { code: 5, message: 'segment "default/nope" not found', details: [] });
  });

  t.test('rules', async (t) => {
    const r = await get(`${api}/namespaces/default/flags/color/rules`);
    t.equal(r.status, 200);
    t.equal(r.body.totalCount, 2);
    const [first, second] = r.body.rules;
    t.same(Object.keys(first), [
      'id', 'flagKey', 'segmentKey', 'distributions', 'rank', 'createdAt', 'updatedAt', 'namespaceKey', 'segmentKeys', 'segmentOperator',
    ]);
    t.match(first, { flagKey: 'color', segmentKey: 'beta-users', rank: 1, segmentKeys: [], segmentOperator: 'OR_SEGMENT_OPERATOR' });
    t.match(second, { segmentKey: '', segmentKeys: ['everyone', 'internal'], segmentOperator: 'AND_SEGMENT_OPERATOR', rank: 2 });
    const flag = await get(`${api}/namespaces/default/flags/color`);
    const redId = flag.body.variants[0].id;
    t.same(Object.keys(first.distributions[0]), ['id', 'ruleId', 'variantId', 'rollout', 'createdAt', 'updatedAt']);
    t.match(first.distributions[0], { ruleId: first.id, variantId: redId, rollout: 100 });
    t.equal(second.distributions.length, 2);

    const one = await get(`${api}/namespaces/default/flags/color/rules/${second.id}`);
    t.same(one.body, second);
    const anyFlag = await get(`${api}/namespaces/default/flags/not-this-one/rules/${second.id}`);
    t.same(anyFlag.body, second, 'rule ids are looked up namespace-wide; the flag key is ignored');
    const legacy = await get(`${api}/flags/color/rules`);
    t.same(legacy.body, r.body);
    const missing = await get(`${api}/namespaces/default/flags/color/rules/nope`);
    t.same(missing.body, { code: 5, message: 'rule "default/nope" not found', details: [] });

    const noFlag = await get(`${api}/namespaces/default/flags/nope/rules`);
    t.equal(noFlag.status, 200, 'rules of a missing flag: empty list');
    t.same(noFlag.body, { rules: [], nextPageToken: '', totalCount: 0 });
    const noNs = await get(`${api}/namespaces/nope/flags/color/rules`);
    t.equal(noNs.status, 404);
  });

  t.test('rollouts', async (t) => {
    const r = await get(`${api}/namespaces/default/flags/new-checkout/rollouts`);
    t.equal(r.status, 200);
    t.same(Object.keys(r.body), ['rules', 'rollouts', 'nextPageToken', 'totalCount']);
    t.same(r.body.rules, r.body.rollouts, 'the same items under rules and rollouts');
    t.equal(r.body.totalCount, 2);
    const [seg, thr] = r.body.rollouts;
    t.same(Object.keys(seg), ['id', 'namespaceKey', 'flagKey', 'type', 'rank', 'description', 'createdAt', 'updatedAt', 'segment']);
    t.match(seg, { namespaceKey: 'default', flagKey: 'new-checkout', type: 'SEGMENT_ROLLOUT_TYPE', rank: 1, description: '' });
    t.same(seg.segment, { segmentKey: 'beta-users', value: true, segmentKeys: [], segmentOperator: 'OR_SEGMENT_OPERATOR' });
    t.match(thr, { type: 'THRESHOLD_ROLLOUT_TYPE', rank: 2 });
    t.same(thr.threshold, { percentage: 50, value: true });
    t.notOk('segment' in thr);

    const one = await get(`${api}/namespaces/default/flags/whatever/rollouts/${thr.id}`);
    t.same(one.body, thr, 'rollout ids are looked up namespace-wide');
    const missing = await get(`${api}/namespaces/default/flags/new-checkout/rollouts/nope`);
    t.same(missing.body, { code: 5, message: 'rollout "default/nope" not found', details: [] });
    const noFlag = await get(`${api}/namespaces/default/flags/nope/rollouts`);
    t.same(noFlag.body, { rules: [], rollouts: [], nextPageToken: '', totalCount: 0 });
    const legacy = await get(`${api}/flags/new-checkout/rollouts`);
    t.equal(legacy.status, 404, 'rollouts are namespaced-only');
    t.ok(isErrorBody(legacy.body));
  });

  t.test('ids are stable across reads of one snapshot', async (t) => {
    const a = await get(`${api}/namespaces/default/flags/color/rules`);
    const b = await get(`${api}/namespaces/default/flags/color/rules`);
    t.same(a.body, b.body);
  });

  t.test('reference', async (t) => {
    const def = store.defaultReference;
    const ok = await get(`${api}/namespaces/default/flags/color?reference=${def}`);
    t.equal(ok.status, 200, 'the default reference by name');
    const empty = await get(`${api}/namespaces/default/flags/color?reference=`);
    t.equal(empty.status, 200, 'an empty reference is the default');
    const unknown = await get(`${api}/namespaces/default/flags/color?reference=feature-x`);
    t.equal(unknown.status, 404);
    t.same(unknown.body, { code: 5, message: 'reference "feature-x" not found', details: [] });
    t.ok(unknown.headers.has('x-vexil-revision'));
    const list = await get(`${api}/namespaces?reference=nope`);
    t.equal(list.status, 404);
  });

  t.test('trailing slash, ?pretty, HEAD', async (t) => {
    const slash = await get(`${api}/namespaces/default/flags/`);
    t.equal(slash.status, 200);
    t.equal(slash.body.totalCount, 3);
    const pretty = await get(`${api}/namespaces/default/flags/color?pretty`);
    t.match(pretty.text, /^\{\n {2}"key": "color",/);
    const compact = await get(`${api}/namespaces/default/flags/color`);
    t.notMatch(compact.text, /\n/);
    const head = await fetch(`${api}/namespaces/default/flags/color`, { method: 'HEAD' });
    t.equal(head.status, 200);
    t.equal(await head.text(), '');
    const upper = await get(`${api}/Namespaces/default/flags`);
    t.equal(upper.status, 404, 'paths are case-sensitive');
  });
});

t.test('pagination (declarative)', async (t) => {
  const { url } = await startTestServer(t);
  const ns = `${url}/api/v1/namespaces/paging`;

  t.test('flags, page size 10 over 25', async (t) => {
    const keys: string[] = [];
    const tokens: string[] = [];
    let token = '';
    let pages = 0;
    do {
      const r = await get(`${ns}/flags?limit=10${token ? `&pageToken=${token}` : ''}`);
      t.equal(r.status, 200);
      t.equal(r.body.totalCount, 25);
      keys.push(...r.body.flags.map((f: { key: string }) => f.key));
      token = r.body.nextPageToken;
      tokens.push(token);
      pages++;
    } while (token !== '' && pages < 10);
    t.equal(pages, 3);
    t.same(tokens, ['10', '20', '']);
    t.equal(keys.length, 25);
    t.same(keys, [...keys].sort(), 'key order');
    t.equal(new Set(keys).size, 25);
  });

  t.test('segments: the last page is short', async (t) => {
    const r = await get(`${ns}/segments?limit=10&pageToken=20`);
    t.equal(r.body.segments.length, 3);
    t.equal(r.body.nextPageToken, '');
    t.equal(r.body.totalCount, 23);
    const snake = await get(`${ns}/segments?limit=10&page_token=20`);
    t.same(snake.body, r.body, 'page_token is accepted');
  });

  t.test('rules and rollouts', async (t) => {
    const rules = await get(`${ns}/flags/flag-01/rules?limit=2`);
    t.same(rules.body.rules.map((r: { rank: number }) => r.rank), [1, 2]);
    t.equal(rules.body.nextPageToken, '2');
    const sizes: number[] = [];
    let token = '';
    do {
      const r = await get(`${ns}/flags/flag-02/rollouts?limit=2${token ? `&pageToken=${token}` : ''}`);
      sizes.push(r.body.rollouts.length);
      t.same(r.body.rules, r.body.rollouts);
      token = r.body.nextPageToken;
    } while (token !== '' && sizes.length < 10);
    t.same(sizes, [2, 2, 1], 'rollouts page size 2 → 2,2,1');
  });

  t.test('no limit means everything', async (t) => {
    const all = await get(`${ns}/flags`);
    t.equal(all.body.flags.length, 25);
    t.equal(all.body.nextPageToken, '');
    const zero = await get(`${ns}/flags?limit=0`);
    t.equal(zero.body.flags.length, 25);
    const nsTok = await get(`${url}/api/v1/namespaces?pageToken=1`);
    t.equal(nsTok.status, 200, 'namespaces accept a token without a limit');
    t.same(nsTok.body.namespaces.map((n: { key: string }) => n.key), ['paging', 'production']);
    const rolloutTok = await get(`${ns}/flags/flag-02/rollouts?pageToken=3`);
    t.equal(rolloutTok.body.rollouts.length, 2);
  });

  t.test('errors', async (t) => {
    const bad = await get(`${ns}/flags?limit=10&pageToken=abc`);
    t.equal(bad.status, 400);
    t.same(bad.body, { code: 3, message: 'pageToken is not valid: "abc"', details: [] });
    const beyond = await get(`${ns}/flags?limit=10&pageToken=25`);
    t.equal(beyond.status, 400);
    t.same(beyond.body, { code: 3, message: 'invalid offset: 25', details: [] });
    const far = await get(`${ns}/segments?limit=10&pageToken=1000`);
    t.same(far.body, { code: 3, message: 'invalid offset: 1000', details: [] });
    for (const path of ['flags', 'segments', 'flags/flag-01/rules']) {
      const noLimit = await get(`${ns}/${path}?pageToken=10`);
      t.equal(noLimit.status, 400, path);
      t.same(noLimit.body, { code: 3, message: 'limit must be set when offset or pageToken is set', details: [] });
      const offset = await get(`${ns}/${path}?offset=5`);
      t.same(offset.body.message, 'limit must be set when offset or pageToken is set');
    }
    const withOffset = await get(`${ns}/flags?limit=5&offset=7`);
    t.equal(withOffset.body.flags[0].key, 'flag-01', 'the deprecated offset does not page');
    const badLimit = await get(`${ns}/flags?limit=ten`);
    t.equal(badLimit.status, 400);
    t.equal(badLimit.body.message, 'invalid field limit: must be an integer');
    const negative = await get(`${ns}/flags?limit=-1`);
    t.equal(negative.status, 400);
    const empty = await get(`${ns}/flags/flag-03/rules?limit=10&pageToken=garbage`);
    t.equal(empty.status, 200, 'an empty collection ignores the token');
    t.same(empty.body, { rules: [], nextPageToken: '', totalCount: 0 });
  });
});
