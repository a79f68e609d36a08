/**
 * `GET /meta/audit` in-process (src/server/meta/audit-request.ts, audit-routes.ts) over a real
 * SQLite history store: the query's accepted forms and its refusals naming the parameter, and a
 * store that cannot be read answering 503 (code 14, Retry-After) without the cause. The whole
 * path through `vexil serve` is in test/cli/serve-audit.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import tap from 'tap';
import { VexilError } from '../../src/errors.js';
import { startHttpServer } from '../../src/server/listen.js';
import { parseAuditRequest } from '../../src/server/meta/audit-request.js';
import { DEFAULT_LIMIT, pageToken } from '../../src/server/meta/list-query.js';
import { openSqliteHistoryStore } from '../../src/store/history/sqlite.js';
import { call, startTestStore } from './support.js';

const q = (entries: Record<string, string>) => new Map(Object.entries(entries));

tap.test('accepted forms', async (t) => {
  t.same(parseAuditRequest(q({})), { limit: DEFAULT_LIMIT });
  const token = pageToken({ at: 1_800_000_000_000, seq: 7 });
  t.same(parseAuditRequest(q({ type: 'io.vexil.auth.login', authenticationId: 'a1', since: '2026-11-27T00:00:00Z', limit: '5', pageToken: token })), {
    since: Date.parse('2026-11-27T00:00:00Z'),
    limit: 5,
    after: { at: 1_800_000_000_000, seq: 7 },
    type: 'io.vexil.auth.login',
    authenticationId: 'a1',
  });
});

tap.test('refusals name the parameter', async (t) => {
  for (const [query, parameter] of [
    [{ type: 'login' }, 'type'],
    [{ type: '' }, 'type'],
    [{ authenticationId: '' }, 'authenticationId'],
    [{ authenticationId: 'x'.repeat(201) }, 'authenticationId'],
    [{ since: 'yesterday' }, 'since'],
    [{ limit: '0' }, 'limit'],
    [{ pageToken: '!!' }, 'pageToken'],
  ] as Array<[Record<string, string>, string]>) {
    const err = (() => {
      try {
        parseAuditRequest(q(query));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    t.ok(err instanceof VexilError, JSON.stringify(query).slice(0, 40));
    t.match((err as VexilError).message, new RegExp(`^${parameter} `));
  }
});

tap.test('the store cannot be read: 503, code 14, Retry-After, no cause in the body', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-audit-route-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const history = openSqliteHistoryStore({ path: join(dir, 'auth.db') });
  await history.recordAudit('me', { id: 'e1', type: 'io.vexil.auth.login', time: '2026-11-27T10:00:00.000Z', subject: { authenticationId: 's1', method: 'METHOD_OIDC', metadata: {} } }, { maxAgeMs: 1e12, maxEntries: 10 });
  const { config, store } = await startTestStore(t);
  const server = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0, history: { history, scope: 'me/worker-0', auditScope: 'me' } });
  t.teardown(() => server.close());
  const ok = await call(`${server.url}/meta/audit`);
  t.equal(ok.status, 200);
  t.match(ok.body, { events: [{ id: 'e1', actor: null, address: null, origin: null, replica: 'me', subject: { authenticationId: 's1', expiresAt: null } }], nextPageToken: '' }, 'read under the audit scope');
  await history.close();
  const res = await fetch(`${server.url}/meta/audit`);
  t.equal(res.status, 503);
  t.ok(res.headers.get('retry-after'));
  t.same(await res.json(), { code: 14, message: 'the history store cannot be read now', details: [] });
});
