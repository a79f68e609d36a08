/**
 * The behaviour every history store keeps (src/store/history/types.ts), run against each backend
 * (sqlite.test.ts, postgres.test.ts): served entries closed by the next, duplicates of the latest
 * event not written again, rejections between served ones, `servedAt`, paging newest first, and
 * retention by age and count that never removes what a reference serves now. Audit events: kept
 * with every field, one row per event id, filtered by type and authentication id, paged newest
 * first, retention by age and by a count of their own (revision entries and audit events never
 * push each other out), and nothing kept that the event's named fields do not hold.
 */
import type { Test } from 'tap';
import type { AuditEvent } from '../../../src/auth/audit.js';
import type { HistoryStore, NewHistoryEvent } from '../../../src/store/history/types.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
const min = 60_000;
const keep = { maxAgeMs: 90 * 86_400_000, maxEntries: 10_000 };
const served = (revision: string, at: number, reference = 'main'): NewHistoryEvent => ({
  kind: 'served',
  reference,
  revision,
  author: 'Ada <ada@example.com>',
  message: `commit ${revision}`,
  committedAt: new Date(at - 1000).toISOString(),
  at,
});
const rejected = (revision: string, at: number, problems = 1): NewHistoryEvent => ({
  kind: 'rejected',
  reference: 'main',
  revision,
  at,
  problems: Array.from({ length: Math.min(problems, 20) }, (_, i) => ({ severity: 'error', rule: 'yaml.syntax', file: 'features.yml', line: i + 1, column: 1, message: 'bad' })),
  problemCount: problems,
});

export async function historySuite(t: Test, open: () => Promise<HistoryStore>): Promise<void> {
  await t.test('served, rejected, served: the first closed by the second, the rejection in between', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    t.equal(await h.record('r1', served('a', T0), keep), true);
    t.equal(await h.record('r1', rejected('x', T0 + min, 30), keep), true);
    t.equal(await h.record('r1', served('b', T0 + 2 * min), keep), true);
    const all = await h.list('r1', { reference: 'main', limit: 10 });
    t.same(all.map((e) => [e.kind, e.revision]), [['served', 'b'], ['rejected', 'x'], ['served', 'a']], 'newest first');
    t.equal(all[2]!.until, T0 + 2 * min, 'a served until b');
    t.equal(all[2]!.replacedBy, 'b');
    t.equal(all[0]!.until, undefined, 'b still served');
    t.equal(all[1]!.problemCount, 30, 'all problems counted');
    t.equal(all[1]!.problems?.length, 20, 'the first 20 kept');
    t.equal(all[2]!.author, 'Ada <ada@example.com>');
    t.equal(all[2]!.message, 'commit a');
    t.equal((await h.servedAt('r1', 'main', T0 + min + 5))?.revision, 'a', 'at: between a and b');
    t.equal((await h.servedAt('r1', 'main', T0 + 2 * min))?.revision, 'b', 'at: b from its first millisecond');
    t.equal(await h.servedAt('r1', 'main', T0 - 1), undefined, 'at: before anything');
    t.same(await h.list('r2', { reference: 'main', limit: 10 }), [], 'another scope sees none of it');
  });

  await t.test('the same event again (a restart, a second replica) is not written twice', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    await h.record('d', served('a', T0), keep);
    t.equal(await h.record('d', served('a', T0 + min), keep), false, 'a again: the entry stays as it was');
    await h.record('d', rejected('x', T0 + 2 * min), keep);
    t.equal(await h.record('d', rejected('x', T0 + 3 * min), keep), false, 'x rejected again');
    await h.record('d', served('b', T0 + 4 * min), keep);
    t.equal(await h.record('d', served('a', T0 + 5 * min), keep), true, 'back to a: a new entry');
    t.equal(await h.record('d', rejected('x', T0 + 6 * min), keep), true, 'x rejected again after a served change: recorded');
    const all = await h.list('d', { reference: 'main', limit: 10 });
    t.same(all.map((e) => e.revision), ['x', 'a', 'b', 'x', 'a']);
    t.equal(all[4]!.at, T0, 'the first entry keeps its time');
  });

  await t.test('pages newest first, since and until', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    for (let i = 0; i < 25; i++) await h.record('p', served(`r${i}`, T0 + i * min), keep);
    // Two events in the same millisecond: the sequence orders them.
    await h.record('p', rejected('same-ms', T0 + 24 * min), keep);
    const seen: string[] = [];
    let after: { at: number; seq: number } | undefined;
    for (;;) {
      const rows = await h.list('p', { reference: 'main', limit: 10, ...(after ? { after } : {}) });
      const page = rows.slice(0, 10);
      seen.push(...page.map((e) => e.revision));
      if (rows.length <= 10) break;
      after = { at: page[9]!.at, seq: page[9]!.seq };
    }
    t.equal(seen.length, 26, 'every entry once');
    t.same(seen.slice(0, 3), ['same-ms', 'r24', 'r23']);
    t.equal(seen[25], 'r0');
    const window = await h.list('p', { reference: 'main', limit: 100, since: T0 + 5 * min, until: T0 + 8 * min });
    t.same(window.map((e) => e.revision), ['r7', 'r6', 'r5'], 'since inclusive, until exclusive');
  });

  await t.test('retention: by count and by age, never the revision served now', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    for (let i = 0; i < 8; i++) await h.record('k', served(`c${i}`, T0 + i * min), { maxAgeMs: keep.maxAgeMs, maxEntries: 5 });
    t.same((await h.list('k', { reference: 'main', limit: 100 })).map((e) => e.revision), ['c7', 'c6', 'c5', 'c4', 'c3'], 'the 5 newest');
    await h.record('k', served('other', T0, 'other'), keep);
    await h.record('k', served('c8', T0 + 10 * 86_400_000), { maxAgeMs: 86_400_000, maxEntries: 100 });
    t.same((await h.list('k', { reference: 'main', limit: 100 })).map((e) => e.revision), ['c8'], 'older than a day gone');
    t.same((await h.list('k', { reference: 'other', limit: 100 })).map((e) => e.revision), ['other'], 'what another reference serves now stays');
  });

  await auditSuite(t, open);
}

let ids = 0;
const audit = (at: number, over: Partial<AuditEvent> = {}): AuditEvent => ({
  id: `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
  type: 'io.vexil.auth.token.created',
  time: new Date(at).toISOString(),
  actor: { authenticationId: 'admin-1', method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.name': 'initial_bootstrap_token' } },
  subject: { authenticationId: 'tok-1', method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.name': 'ci' }, expiresAt: '2027-01-01T00:00:00.000Z' },
  address: '203.0.113.7',
  ...over,
});

async function auditSuite(t: Test, open: () => Promise<HistoryStore>): Promise<void> {
  await t.test('audit: kept with every field, read back as recorded, one row per event id', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    const created = audit(T0);
    const login = audit(T0 + min, {
      type: 'io.vexil.auth.login',
      subject: { authenticationId: 'sess-1', method: 'METHOD_OIDC', metadata: { 'io.svc.auth.oidc.email': 'alice@example.test', 'io.svc.auth.oidc.provider': 'idp' } },
    });
    delete (login as { actor?: unknown }).actor;
    const expired = audit(T0 + 2 * min, { type: 'io.vexil.auth.expired', origin: 'cleanup', subject: { authenticationId: 'tok-0', method: 'METHOD_TOKEN', metadata: {} } });
    delete (expired as { actor?: unknown }).actor;
    delete (expired as { address?: unknown }).address;
    t.equal(await h.recordAudit('audit-a', created, keep), true);
    t.equal(await h.recordAudit('audit-a', login, keep), true);
    t.equal(await h.recordAudit('audit-a', expired, keep), true);
    t.equal(await h.recordAudit('audit-a', created, keep), false, 'the same event again: not written');
    t.equal(await h.recordAudit('audit-b', created, keep), false, 'nor under another scope (an id is one event)');
    const rows = await h.listAudit('audit-a', { limit: 10 });
    t.same(rows.map((r) => r.event), [expired, login, created], 'newest first, each as recorded');
    t.same(rows.map((r) => r.scope), ['audit-a', 'audit-a', 'audit-a']);
    t.same(Object.keys(rows[0]!.event).sort(), ['id', 'origin', 'subject', 'time', 'type'], 'absent fields stay absent');
    t.same(await h.listAudit('audit-b', { limit: 10 }), [], 'another scope sees none of it');
    t.same(await h.list('audit-a', { reference: 'main', limit: 10 }), [], 'audit events are no revision entries');
  });

  await t.test('audit: only the named fields are kept (a token or hash on the object is not)', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    const e = audit(T0);
    const smuggled = { ...e, clientToken: 'secret-token-value', subject: { ...e.subject, hashedToken: 'secret-hash-value' } } as AuditEvent;
    await h.recordAudit('audit-s', smuggled, keep);
    const [row] = await h.listAudit('audit-s', { limit: 1 });
    t.same(row!.event, e);
    t.notMatch(JSON.stringify(row), /secret-/);
  });

  await t.test('audit: filters by type and authentication id (subject or actor), pages newest first, since and until', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    const recorded: AuditEvent[] = [];
    for (let i = 0; i < 25; i++) {
      const e = audit(T0 + i * min, i % 2 === 0 ? {} : { type: 'io.vexil.auth.token.deleted', actor: { authenticationId: `admin-${i}`, method: 'METHOD_TOKEN', metadata: {} } });
      recorded.push(e);
      await h.recordAudit('audit-p', e, keep);
    }
    // Same millisecond as the newest: the sequence orders them.
    const same = audit(T0 + 24 * min, { subject: { authenticationId: 'tok-2', method: 'METHOD_TOKEN', metadata: {} } });
    await h.recordAudit('audit-p', same, keep);
    const seen: string[] = [];
    let after: { at: number; seq: number } | undefined;
    for (;;) {
      const rows = await h.listAudit('audit-p', { limit: 10, ...(after ? { after } : {}) });
      const page = rows.slice(0, 10);
      seen.push(...page.map((r) => r.event.id));
      if (rows.length <= 10) break;
      after = { at: page[9]!.at, seq: page[9]!.seq };
    }
    t.same(seen, [same.id, ...recorded.map((e) => e.id).reverse()], 'every event once, newest first');
    const deleted = await h.listAudit('audit-p', { limit: 100, type: 'io.vexil.auth.token.deleted' });
    t.equal(deleted.length, 12);
    t.ok(deleted.every((r) => r.event.type === 'io.vexil.auth.token.deleted'));
    t.same((await h.listAudit('audit-p', { limit: 100, authenticationId: 'tok-2' })).map((r) => r.event.id), [same.id], 'by subject');
    t.same((await h.listAudit('audit-p', { limit: 100, authenticationId: 'admin-3' })).map((r) => r.event.id), [recorded[3]!.id], 'by actor');
    t.equal((await h.listAudit('audit-p', { limit: 100, authenticationId: 'admin-1', type: 'io.vexil.auth.token.created' })).length, 14, 'both filters (13 and the same-millisecond one)');
    const window = await h.listAudit('audit-p', { limit: 100, since: T0 + 5 * min, until: T0 + 8 * min });
    t.same(window.map((r) => r.event.id), [recorded[7]!.id, recorded[6]!.id, recorded[5]!.id], 'since inclusive, until exclusive');
  });

  await t.test('audit retention: by age and by a count of its own, apart from the revision entries', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    const bound = { maxAgeMs: keep.maxAgeMs, maxEntries: 5 };
    for (let i = 0; i < 3; i++) await h.record('audit-k', served(`c${i}`, T0 + i * min), bound);
    const events = Array.from({ length: 8 }, (_, i) => audit(T0 + i * min));
    for (const e of events) await h.recordAudit('audit-k', e, bound);
    await h.recordAudit('audit-other', audit(T0), bound);
    t.same((await h.listAudit('audit-k', { limit: 100 })).map((r) => r.event.id), events.slice(3).map((e) => e.id).reverse(), 'the 5 newest events');
    t.same((await h.list('audit-k', { reference: 'main', limit: 100 })).map((e) => e.revision), ['c2', 'c1', 'c0'], 'no revision entry pushed out by audit events');
    for (let i = 3; i < 8; i++) await h.record('audit-k', served(`c${i}`, T0 + i * min), bound);
    t.equal((await h.listAudit('audit-k', { limit: 100 })).length, 5, 'nor an audit event by revision entries');
    const late = audit(T0 + 10 * 86_400_000);
    await h.recordAudit('audit-k', late, { maxAgeMs: 86_400_000, maxEntries: 100 });
    t.same((await h.listAudit('audit-k', { limit: 100 })).map((r) => r.event.id), [late.id], 'older than a day gone');
    t.equal((await h.listAudit('audit-other', { limit: 100 })).length, 1, 'another scope keeps its own');
  });
}
