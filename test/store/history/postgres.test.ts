/**
 * The PostgreSQL history store (src/store/history/postgres.ts) on a throwaway server: the shared
 * behaviour (suite.ts), two stores (two replicas) recording the same swaps at once writing each
 * event once (and the same audit event once), a database written by the version-1 store (before
 * the audit table, fixtures/history-store/v1-postgres.sql) upgraded without losing a row, and a
 * snapshot store that keeps serving while the database is stopped.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import tap from 'tap';
import { openPostgresHistoryStore } from '../../../src/store/history/postgres.js';
import { createHistoryRecorder } from '../../../src/store/history/recorder.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../../support/git-fixture.js';
import { isCI, reportMissing } from '../../support/requirements.js';
import { postgresUnavailableReason, startPostgres } from '../../support/throwaway-db.js';
import { historySuite } from './suite.js';

const reason = postgresUnavailableReason();
tap.test('the PostgreSQL history store', { skip: reason !== undefined && !isCI() ? reason : false }, async (t) => {
  if (reason !== undefined) reportMissing(t, 'postgres', reason);
  const server = await startPostgres({ database: 'vexil_history' });
  t.teardown(() => server.close());
  const open = () => openPostgresHistoryStore({ url: server.url, connectTimeoutMs: 5000, queryTimeoutMs: 5000, poolWaitTimeoutMs: 5000 });
  await historySuite(t, open);

  await t.test('two replicas recording the same swaps at once: one row each', async (t) => {
    const [a, b] = await Promise.all([open(), open()]);
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    const keep = { maxAgeMs: 1e12, maxEntries: 1000 };
    for (let i = 0; i < 10; i++) {
      const at = 1_800_000_000_000 + i * 1000;
      const outcomes = await Promise.all([
        a.record('cluster', { kind: 'served', reference: 'race', revision: `r${i}`, at }, keep),
        b.record('cluster', { kind: 'served', reference: 'race', revision: `r${i}`, at: at + 3 }, keep),
      ]);
      t.equal(outcomes.filter(Boolean).length, 1, `r${i} written once`);
    }
    const rows = await a.list('cluster', { reference: 'race', limit: 100 });
    t.equal(rows.length, 10);
    t.equal(rows.filter((e) => e.until === undefined).length, 1, 'one entry open');
  });

  await t.test('two replicas handed the same audit event at once: one row', async (t) => {
    const [a, b] = await Promise.all([open(), open()]);
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    const keep = { maxAgeMs: 1e12, maxEntries: 1000 };
    for (let i = 0; i < 10; i++) {
      const e = {
        id: `22222222-2222-4222-8222-${String(i).padStart(12, '0')}`,
        type: 'io.vexil.auth.login' as const,
        time: new Date(1_800_000_000_000 + i).toISOString(),
        subject: { authenticationId: `s${i}`, method: 'METHOD_OIDC', metadata: {} },
      };
      const outcomes = await Promise.all([a.recordAudit('cluster-audit', e, keep), b.recordAudit('cluster-audit', e, keep)]);
      t.equal(outcomes.filter(Boolean).length, 1, `event ${i} written once`);
    }
    t.equal((await a.listAudit('cluster-audit', { limit: 100 })).length, 10);
  });

  await t.test('a database written before the audit table: migrated in place, every row kept', async (t) => {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('CREATE DATABASE vexil_history_v1');
    await admin.end();
    const url = server.url.replace(/\/vexil_history$/, '/vexil_history_v1');
    const loader = new pg.Client({ connectionString: url });
    await loader.connect();
    await loader.query(readFileSync(new URL('../../../fixtures/history-store/v1-postgres.sql', import.meta.url), 'utf8'));
    await loader.end();
    const h = await openPostgresHistoryStore({ url, connectTimeoutMs: 5000, queryTimeoutMs: 5000, poolWaitTimeoutMs: 5000 });
    t.teardown(() => h.close());
    const rows = await h.list('cluster', { reference: 'main', limit: 10 });
    t.same(
      rows.map((e) => [e.kind, e.revision, e.until, e.replacedBy]),
      [['served', 'c3', undefined, undefined], ['rejected', 'c2', undefined, undefined], ['served', 'c1', Date.parse('2026-11-27T10:02:00Z'), 'c3']],
      'the three entries, as version 1 wrote them',
    );
    t.match(rows[1]!.problems, [{ rule: 'yaml.syntax', line: 3 }]);
    const event = {
      id: '33333333-3333-4333-8333-333333333333',
      type: 'io.vexil.auth.token.created' as const,
      time: '2026-11-28T00:00:00.000Z',
      subject: { authenticationId: 'tok', method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.name': 'ci' } },
      address: '127.0.0.1',
    };
    t.equal(await h.recordAudit('cluster', event, { maxAgeMs: 1e12, maxEntries: 10 }), true, 'audit events are kept in the upgraded database');
    t.same((await h.listAudit('cluster', { limit: 5 })).map((r) => r.event), [event]);
    t.equal(await h.record('cluster', { kind: 'served', reference: 'main', revision: 'c4', at: Date.parse('2026-11-28T00:00:01Z') }, { maxAgeMs: 1e12, maxEntries: 10 }), true);
    t.same((await h.list('cluster', { reference: 'main', limit: 10 })).map((e) => e.seq), [4, 3, 2, 1], 'the sequence goes on from the dumped rows');
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    t.same((await check.query('SELECT version FROM history_schema_version')).rows, [{ version: 2 }], 'one version row, now 2');
    await check.end();
  });
});

tap.test('PostgreSQL out of reach: the swap goes on unrecorded, an error line says so, and recording resumes', { skip: reason !== undefined && !isCI() ? reason : false }, async (t) => {
  if (reason !== undefined) reportMissing(t, 'postgres', reason);
  const gitReason = gitUnavailableReason();
  if (gitReason !== undefined) return reportMissing(t, 'git', gitReason);
  const server = await startPostgres({ database: 'vexil_history_outage' });
  t.teardown(() => server.close());
  const history = await openPostgresHistoryStore({ url: server.url, connectTimeoutMs: 2000, queryTimeoutMs: 2000, poolWaitTimeoutMs: 2000 });
  t.teardown(() => history.close());
  const lines: Array<{ level: string; msg: string }> = [];
  const logger = {
    debug: () => undefined,
    info: (_: object, msg?: string) => lines.push({ level: 'info', msg: msg ?? '' }),
    warn: (_: object, msg?: string) => lines.push({ level: 'warn', msg: msg ?? '' }),
    error: (_: object, msg?: string) => lines.push({ level: 'error', msg: msg ?? '' }),
  };
  const recorder = createHistoryRecorder({ store: history, scope: 'me', retention: { maxAgeMs: 1e12, maxEntries: 100 }, logger });
  const git = await startGitFixture(t);
  const c1 = await git.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const store = git.store({ history: recorder });
  await store.start();
  await server.stop();
  const c2 = await git.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml') });
  await store.refresh();
  t.equal(store.get('main')?.revision, c2, 'served although the history could not be written');
  t.ok(lines.some((l) => l.level === 'error' && /history failed; serving on/.test(l.msg)), 'the error is logged');
  await server.start();
  const c3 = await git.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  await store.refresh();
  t.equal(store.get('main')?.revision, c3);
  const rows = await history.list('me', { reference: 'main', limit: 10 });
  t.same(rows.map((e) => e.revision), [c3, c1], 'recorded again once the database is back (c2 is missing, as logged)');
  t.equal(rows[1]!.replacedBy, c3);
});
