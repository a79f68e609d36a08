import t from 'tap';
import { MAX_BODY_BYTES } from '../../src/http/limits.js';
import { call, get, isErrorBody, parseRawResponse, post, rawExchange, rawRequest, startTestServer } from './support.js';

t.test('error catalogue over HTTP', async (t) => {
  const { url, store } = await startTestServer(t);
  const ev = `${url}/evaluate/v1`;
  const ns = `${url}/api/v1/namespaces/default`;

  t.test('malformed JSON bodies → 400 naming the problem', async (t) => {
    for (const body of ['{', '{"flagKey": }', 'nope', '{"a":1,}', "{'a':1}"]) {
      const r = await post(`${ev}/variant`, body, { 'Content-Type': 'application/json' });
      t.equal(r.status, 400, body);
      t.ok(isErrorBody(r.body), body);
      t.equal(r.body.code, 3);
      t.match(r.body.message, /^malformed JSON body: /);
    }
    const notObject = await post(`${ev}/variant`, '[1,2]');
    t.same(notObject.body, { code: 3, message: 'request body must be a JSON object', details: [] });
    const nul = await post(`${ev}/variant`, 'null');
    t.equal(nul.status, 400);
    const badUtf8 = await rawRequest(url, { method: 'POST', path: '/evaluate/v1/variant', body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) });
    t.equal(badUtf8.status, 400);
    t.equal(JSON.parse(badUtf8.text).message, 'request body is not valid UTF-8');
  });

  t.test('wrong field types and missing fields name the field', async (t) => {
    const cases: Array<[unknown, string]> = [
      [{ entityId: 'u' }, 'invalid field flagKey: is required'],
      [{ flagKey: 1, entityId: 'u' }, 'invalid field flagKey: must be a string'],
      [{ flagKey: 'color', entityId: ['u'] }, 'invalid field entityId: must be a string'],
      [{ flagKey: 'color', entityId: 'u', namespaceKey: false }, 'invalid field namespaceKey: must be a string'],
      [{ flagKey: 'color', entityId: 'u', context: { age: 42 } }, 'invalid field context.age: must be a string'],
      [{ flagKey: 'color', entityId: 'u', context: { x: {} } }, 'invalid field context.x: must be a string'],
      [{ flagKey: 'color', entityId: 'u', context: ['a'] }, 'invalid field context: must be an object of string values'],
      [{ flagKey: 'color', entityId: 'u', context: 'plan=beta' }, 'invalid field context: must be an object of string values'],
      [{ flagKey: 'color', entityId: 'u', requestId: 7 }, 'invalid field requestId: must be a string'],
      [{ flagKey: 'color', entityId: 'u', reference: {} }, 'invalid field reference: must be a string'],
    ];
    for (const [body, message] of cases) {
      const r = await post(`${ev}/variant`, body);
      t.equal(r.status, 400, message);
      t.same(r.body, { code: 3, message, details: [] });
    }
    const empty = await post(`${ev}/boolean`, '');
    t.same(empty.body, { code: 3, message: 'invalid field flagKey: is required', details: [] }, 'an empty body is {}');
    const batchCases: Array<[unknown, string]> = [
      [{ requests: {} }, 'invalid field requests: must be an array'],
      [{ requests: [1] }, 'invalid field requests[0]: must be an object'],
      [{ requests: [{ flagKey: 'color', entityId: 'u' }, { entityId: 'u' }] }, 'invalid field requests[1].flagKey: is required'],
      [{ requests: [], requestId: 1 }, 'invalid field requestId: must be a string'],
    ];
    for (const [body, message] of batchCases) {
      const r = await post(`${ev}/batch`, body);
      t.equal(r.status, 400, message);
      t.same(r.body, { code: 3, message, details: [] });
    }
  });

  t.test('unknown path → 404 Not Found', async (t) => {
    for (const path of ['/nope', '/api/v1/nope', '/api/v2/flags', '/evaluate/v1/nope', '/api/v1/namespaces/default/flags/color/variants/x/y']) {
      const r = await get(`${url}${path}`);
      t.equal(r.status, 404, path);
      t.same(r.body, { code: 5, message: 'Not Found', details: [] }, path);
      t.ok(r.headers.has('x-vexil-revision'), path);
    }
    const postUnknown = await post(`${url}/nope`, {});
    t.equal(postUnknown.status, 404);
    const pretty = await get(`${url}/nope?pretty`);
    t.match(pretty.text, /^\{\n {2}"code": 5,/, '?pretty indents error bodies too');
    t.ok(isErrorBody(pretty.body));
  });

  t.test('known path, wrong method → 405 with Allow', async (t) => {
    const g = await get(`${ev}/variant`);
    t.equal(g.status, 405);
    t.same(g.body, { code: 12, message: 'Method Not Allowed', details: [] });
    t.equal(g.headers.get('allow'), 'POST');
    const p = await call(`${url}/health`, { method: 'POST', body: '{}' });
    t.equal(p.status, 405);
    t.match(p.headers.get('allow'), /GET/);
    const patch = await call(`${ns}/flags/color`, { method: 'PATCH', body: '{}' });
    t.equal(patch.status, 405);
    for (const m of ['GET', 'PUT', 'DELETE']) t.match(patch.headers.get('allow'), m);
    t.ok(isErrorBody(patch.body));
    const other = await rawRequest(url, { method: 'PROPFIND', path: '/evaluate/v1/variant' });
    t.equal(other.status, 405, 'a method no route serves at all');
    t.equal(other.headers.allow, 'POST');
    const otherUnknown = await rawRequest(url, { method: 'PROPFIND', path: '/nope' });
    t.equal(otherUnknown.status, 404);
  });

  t.test('body over 1 MiB → 413', async (t) => {
    const big = JSON.stringify({ flagKey: 'color', entityId: 'u', context: { pad: 'x'.repeat(MAX_BODY_BYTES) } });
    const r = await post(`${ev}/variant`, big);
    t.equal(r.status, 413);
    t.same(r.body, { code: 8, message: `request body exceeds ${MAX_BODY_BYTES} bytes`, details: [] });
    const chunked = await rawRequest(url, {
      method: 'POST',
      path: '/evaluate/v1/variant',
      headers: { 'Transfer-Encoding': 'chunked' },
      body: big,
    });
    t.equal(chunked.status, 413, 'without a Content-Length too');
    const write = await post(`${ns}/flags`, big);
    t.equal(write.status, 413);
    // The unread rest of a refused body must not be parsed as the next request on the connection.
    for (let i = 0; i < 3; i++) {
      const again = await rawRequest(url, { method: 'POST', path: '/evaluate/v1/variant', body: 'y'.repeat(1_300_000) });
      t.equal(again.status, 413, `keep-alive connection still usable (${i})`);
    }
    const huge = await rawRequest(url, { method: 'POST', path: '/evaluate/v1/variant', body: 'y'.repeat(10_000_000) });
    t.equal(huge.status, 413);
    t.equal(huge.headers.connection, 'close', 'far over the limit: answered, then the connection closes');
  });

  t.test('deep nesting → 400', async (t) => {
    for (const depth of [65, 1000, 200_000]) {
      const body = `{"flagKey":"color","entityId":"u","context":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const r = await post(`${ev}/variant`, body);
      t.equal(r.status, 400, `depth ${depth}`);
      t.equal(r.body.message, 'malformed JSON body: nesting deeper than 64 levels');
    }
    const open = await post(`${ev}/variant`, '['.repeat(MAX_BODY_BYTES - 10));
    t.equal(open.status, 400, 'a MiB of [');
    const fine = await post(`${ev}/variant`, { flagKey: 'color', entityId: 'u', extra: JSON.parse(`${'['.repeat(60)}${']'.repeat(60)}`) });
    t.equal(fine.status, 200, 'moderate nesting in ignored fields is fine');
  });

  t.test('bad percent-encoding → 400', async (t) => {
    for (const path of ['/api/v1/namespaces/default/flags/%zz', '/api/v1/namespaces/%E0%A4%A/flags', '/api/v1/flags/%C3%28']) {
      const r = await rawRequest(url, { path });
      t.equal(r.status, 400, path);
      t.same(JSON.parse(r.text), { code: 3, message: 'invalid percent-encoding in path', details: [] });
    }
    const q = await rawRequest(url, { path: '/api/v1/namespaces/default/flags?reference=%zz' });
    t.equal(q.status, 400);
    t.same(JSON.parse(q.text), { code: 3, message: 'invalid percent-encoding in query', details: [] });
    const okEncoded = await rawRequest(url, { path: '/api/v1/namespaces/default/flags/%63olor' });
    t.equal(okEncoded.status, 200, 'valid percent-encoding is decoded');
  });

  t.test('Expect other than 100-continue → 417 with the JSON body', async (t) => {
    const r = await rawRequest(url, {
      method: 'POST',
      path: '/evaluate/v1/variant',
      headers: { Expect: 'something-else', 'Content-Type': 'application/json' },
      body: '{}',
    });
    t.equal(r.status, 417);
    const body = JSON.parse(r.text);
    t.ok(isErrorBody(body));
    t.equal(body.code, 3);
    t.match(body.message, /Expect/);
    t.equal(r.headers['x-vexil-revision'], store.get()!.revision);
    const evalBody = '{"flagKey":"color","entityId":"u"}';
    const cont = await rawExchange(
      url,
      `POST /evaluate/v1/variant HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${evalBody.length}\r\nConnection: close\r\n\r\n${evalBody}`,
    );
    t.match(cont, /200 OK/, '100-continue still works');
  });

  t.test('unparsable HTTP → 400 with the JSON body', async (t) => {
    const raw = await rawExchange(url, 'THIS IS NOT HTTP\r\n\r\n');
    const res = parseRawResponse(raw);
    t.equal(res.status, 400);
    t.ok(isErrorBody(JSON.parse(res.body)));
    const badLength = parseRawResponse(
      await rawExchange(url, 'POST /evaluate/v1/variant HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}'),
    );
    t.equal(badLength.status, 400);
    t.ok(isErrorBody(JSON.parse(badLength.body)));
    const hugeHeader = parseRawResponse(
      await rawExchange(url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    t.equal(hugeHeader.status, 431);
    t.ok(isErrorBody(JSON.parse(hugeHeader.body)));
  });

  t.test('unsupported content encodings and charsets → 415', async (t) => {
    const gz = await post(`${ev}/variant`, '{}', { 'Content-Encoding': 'gzip' });
    t.equal(gz.status, 415);
    t.ok(isErrorBody(gz.body));
    const latin = await post(`${ev}/variant`, '{}', { 'Content-Type': 'application/json; charset=latin1' });
    t.equal(latin.status, 415);
    const form = await post(`${ev}/variant`, { flagKey: 'color', entityId: 'u' }, { 'Content-Type': 'application/x-www-form-urlencoded' });
    t.equal(form.status, 200, 'any content type is read as JSON (curl -d)');
  });

  t.test('read-only writes: validation first, then code 9', async (t) => {
    const readOnly = { code: 9, message: 'modification is not allowed in read-only mode', details: [] };
    const ok: Array<[string, string, unknown]> = [
      ['POST', '/api/v1/namespaces', { key: 'n', name: 'N' }],
      ['PUT', '/api/v1/namespaces/default', { name: 'N' }],
      ['DELETE', '/api/v1/namespaces/default', undefined],
      ['POST', '/api/v1/namespaces/default/flags', { key: 'f', name: 'F', type: 'BOOLEAN_FLAG_TYPE' }],
      ['PUT', '/api/v1/namespaces/default/flags/color', { name: 'Color' }],
      ['DELETE', '/api/v1/namespaces/default/flags/color', undefined],
      ['POST', '/api/v1/flags', { key: 'f', name: 'F' }],
      ['POST', '/api/v1/namespaces/default/flags/color/variants', { key: 'green', attachment: '{"a":1}' }],
      ['POST', '/api/v1/namespaces/default/segments', { key: 's', name: 'S', matchType: 'ANY_MATCH_TYPE' }],
      ['POST', '/api/v1/namespaces/default/segments/internal/constraints', { type: 'STRING_COMPARISON_TYPE', property: 'p', operator: 'eq', value: 'v' }],
      ['POST', '/api/v1/namespaces/default/segments/internal/constraints', { type: 'BOOLEAN_COMPARISON_TYPE', property: 'p', operator: 'true' }],
      ['POST', '/api/v1/namespaces/default/flags/color/rules', { segmentKey: 'everyone', rank: 3 }],
      ['PUT', '/api/v1/namespaces/default/flags/color/rules/order', { ruleIds: ['a', 'b'] }],
      ['POST', '/api/v1/namespaces/default/flags/color/rules/r1/distributions', { variantId: 'v', rollout: 50 }],
      // A rollout left out is 0 (protojson clients leave zeros out), which is valid.
      ['POST', '/api/v1/namespaces/default/flags/color/rules/r1/distributions', { variantId: 'v' }],
      ['PUT', '/api/v1/namespaces/default/flags/color/rules/r1/distributions/d1', { variantId: 'v', rollout: 50 }],
      ['POST', '/api/v1/namespaces/default/flags/new-checkout/rollouts', { rank: 3, threshold: { percentage: 10, value: true } }],
      ['PUT', '/api/v1/namespaces/default/flags/new-checkout/rollouts/x', { description: 'd' }],
      ['DELETE', '/api/v1/namespaces/default/flags/new-checkout/rollouts/x', undefined],
    ];
    for (const [method, path, body] of ok) {
      const r = await call(`${url}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      t.equal(r.status, 400, `${method} ${path}`);
      t.same(r.body, readOnly, `${method} ${path}`);
    }
    const invalid: Array<[string, string, unknown, string]> = [
      ['POST', '/api/v1/namespaces/default/flags', { name: 'F' }, 'invalid field key: must not be empty'],
      ['POST', '/api/v1/namespaces/default/flags', { key: 'f' }, 'invalid field name: must not be empty'],
      ['POST', '/api/v1/namespaces/default/flags', { key: 'f', name: 'F', type: 'NOPE' }, 'invalid field type: must be one of VARIANT_FLAG_TYPE, BOOLEAN_FLAG_TYPE'],
      ['POST', '/api/v1/namespaces/default/flags/color/variants', { name: 'x' }, 'invalid field key: must not be empty'],
      ['POST', '/api/v1/namespaces/default/flags/color/variants', { key: 'k', attachment: '{' }, 'invalid field attachment: must be a json string'],
      ['POST', '/api/v1/namespaces/default/segments/internal/constraints', { property: 'p', operator: 'eq', value: 'v' }, 'invalid field type: must not be empty'],
      ['POST', '/api/v1/namespaces/default/segments/internal/constraints', { type: 'STRING_COMPARISON_TYPE', operator: 'eq', value: 'v' }, 'invalid field property: must not be empty'],
      ['POST', '/api/v1/namespaces/default/segments/internal/constraints', { type: 'STRING_COMPARISON_TYPE', property: 'p', value: 'v' }, 'invalid field operator: must not be empty'],
      ['POST', '/api/v1/namespaces/default/segments/internal/constraints', { type: 'STRING_COMPARISON_TYPE', property: 'p', operator: 'gt', value: 'v' }, 'invalid field operator: "gt" is not valid for type STRING_COMPARISON_TYPE'],
      ['POST', '/api/v1/namespaces/default/segments/internal/constraints', { type: 'NUMBER_COMPARISON_TYPE', property: 'p', operator: 'gt' }, 'invalid field value: must not be empty'],
      ['POST', '/api/v1/namespaces/default/flags/new-checkout/rollouts', { threshold: { percentage: 10 } }, 'invalid field rank: must be greater than 0'],
      ['POST', '/api/v1/namespaces/default/flags/new-checkout/rollouts', { rank: '1' }, 'invalid field rank: must be a number'],
      ['POST', '/api/v1/namespaces/default/flags/new-checkout/rollouts', { rank: 1, threshold: { percentage: 101 } }, 'invalid field percentage: must be within range [0, 100]'],
      ['POST', '/api/v1/namespaces/default/flags/color/rules/r1/distributions', { rollout: 10 }, 'invalid field variantId: must not be empty'],
      ['POST', '/api/v1/namespaces/default/flags/color/rules/r1/distributions', { variantId: 'v', rollout: -1 }, 'invalid field rollout: must be within range [0, 100]'],
      // Left out and empty answer alike.
      ['PUT', '/api/v1/namespaces/default/flags/color/rules/order', {}, 'invalid field ruleIds: must not be empty'],
      ['PUT', '/api/v1/namespaces/default/flags/color/rules/order', { ruleIds: [] }, 'invalid field ruleIds: must not be empty'],
      ['PUT', '/api/v1/namespaces/default/flags/new-checkout/rollouts/order', { rolloutIds: [] }, 'invalid field rolloutIds: must not be empty'],
      ['POST', '/api/v1/namespaces/default/flags', { key: '', name: 'F' }, 'invalid field key: must not be empty'],
      ['POST', '/api/v1/namespaces/default/flags/new-checkout/rollouts', { rank: 0 }, 'invalid field rank: must be greater than 0'],
      ['PUT', '/api/v1/namespaces/default/flags/color/rules/r1/distributions/d', { variantId: 'v', rollout: 150 }, 'invalid field rollout: must be within range [0, 100]'],
      ['POST', '/api/v1/namespaces/default/flags/color/rules', { rank: 1 }, 'invalid field segmentKey: must not be empty'],
      ['POST', '/api/v1/namespaces', { key: 'k' }, 'invalid field name: must not be empty'],
    ];
    for (const [method, path, body, message] of invalid) {
      const r = await call(`${url}${path}`, { method, body: JSON.stringify(body) });
      t.equal(r.status, 400, message);
      t.same(r.body, { code: 3, message, details: [] }, message);
    }
    const malformed = await call(`${ns}/flags`, { method: 'POST', body: '{"key":' });
    t.equal(malformed.status, 400);
    t.match(malformed.body.message, /^malformed JSON body/);
    const snake = await call(`${ns}/flags/color/rules/r/distributions`, { method: 'POST', body: JSON.stringify({ variant_id: 'v', rollout: 1 }) });
    t.same(snake.body, readOnly, 'snake_case names are accepted in writes too');
  });

  t.test('no stack traces in bodies', async (t) => {
    const r = await post(`${ev}/variant`, '{"flagKey":');
    t.notMatch(r.text, /at .*\(.*:\d+:\d+\)/);
    t.notMatch(r.text, /node_modules|src\//);
  });
});
