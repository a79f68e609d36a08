/**
 * The query of GET /meta/history (src/server/meta/history-request.ts): defaults, RFC 3339 times
 * (offsets, fractions), page tokens made by the server read back, and every refusal naming its
 * parameter: bad times, limits out of range, forged or oversized page tokens, `at` with paging.
 */
import tap from 'tap';
import { VexilError } from '../../src/errors.js';
import { parseHistoryRequest } from '../../src/server/meta/history-request.js';
import { DEFAULT_LIMIT, pageToken } from '../../src/server/meta/list-query.js';

const q = (entries: Record<string, string>) => new Map(Object.entries(entries));

tap.test('defaults and accepted forms', async (t) => {
  t.same(parseHistoryRequest(q({}), 'main'), { kind: 'list', reference: 'main', limit: DEFAULT_LIMIT });
  const r = parseHistoryRequest(q({ reference: 'dev', since: '2026-11-27T14:03:00.123456789+01:00', until: '2026-11-28T00:00:00Z', limit: '7' }), 'main');
  t.same(r, { kind: 'list', reference: 'dev', since: Date.parse('2026-11-27T13:03:00.123Z'), until: Date.parse('2026-11-28T00:00:00Z'), limit: 7 });
  t.same(parseHistoryRequest(q({ at: '2026-11-27t14:03:00z' }), 'main'), { kind: 'at', reference: 'main', at: Date.parse('2026-11-27T14:03:00Z') });
  const token = pageToken({ at: 1_800_000_000_000, seq: 42 });
  t.same(parseHistoryRequest(q({ pageToken: token }), 'main'), { kind: 'list', reference: 'main', limit: DEFAULT_LIMIT, after: { at: 1_800_000_000_000, seq: 42 } });
});

tap.test('refusals name the parameter', async (t) => {
  const forged = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const cases: Array<[Record<string, string>, string]> = [
    [{ since: '2026-11-27' }, 'since'],
    [{ since: '2026-11-27T14:03:00' }, 'since'],
    [{ until: '2026-02-30T10:00:00Z'.replace('02-30', '13-01') }, 'until'],
    [{ at: 'now' }, 'at'],
    [{ at: `2026-11-27T14:03:00.${'1'.repeat(300)}Z` }, 'at'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '1001' }, 'limit'],
    [{ limit: '-1' }, 'limit'],
    [{ limit: '1e3' }, 'limit'],
    [{ pageToken: 'x'.repeat(201) }, 'pageToken'],
    [{ pageToken: 'not base64!' }, 'pageToken'],
    [{ pageToken: forged({ a: 'x', s: 1 }) }, 'pageToken'],
    [{ pageToken: forged({ a: 1, s: -1 }) }, 'pageToken'],
    [{ pageToken: forged([1, 2]) }, 'pageToken'],
    [{ pageToken: forged(null) }, 'pageToken'],
    [{ since: '2026-11-28T00:00:00Z', until: '2026-11-27T00:00:00Z' }, 'until'],
    [{ at: '2026-11-27T00:00:00Z', pageToken: 'abc' }, 'pageToken'],
    [{ reference: 'r'.repeat(1025) }, 'reference'],
  ];
  for (const [query, parameter] of cases) {
    try {
      parseHistoryRequest(q(query), 'main');
      t.fail(`${JSON.stringify(query).slice(0, 60)} accepted`);
    } catch (err) {
      t.ok(err instanceof VexilError && err.code === 3, 'InvalidArgument');
      t.match((err as VexilError).message, new RegExp(`^${parameter} `), `${JSON.stringify(query).slice(0, 60)}: names ${parameter}`);
      t.same((err as VexilError).details, [{ parameter }]);
    }
  }
});
