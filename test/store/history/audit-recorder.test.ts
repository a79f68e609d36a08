/**
 * The audit recorder (src/store/history/audit-recorder.ts) between a real AuditTrail and a real
 * SQLite history store: each event the trail records is kept under the recorder's scope; a store
 * that fails (closed under it) costs the row and an error line naming the event, never the caller
 * of `record`; `settled()` waits for the writes under way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap from 'tap';
import { AuditTrail } from '../../../src/auth/audit.js';
import { clientAddressReader } from '../../../src/http/client-address.js';
import { createAuditRecorder } from '../../../src/store/history/audit-recorder.js';
import { openSqliteHistoryStore } from '../../../src/store/history/sqlite.js';
import { captureLogs, fakeClock } from '../../auth/support.js';

const dir = mkdtempSync(join(tmpdir(), 'vexil-audit-recorder-'));
tap.teardown(() => rmSync(dir, { recursive: true, force: true }));

const subject = (id: string, clock: number) => ({ id, method: 'METHOD_TOKEN' as const, metadata: { 'io.svc.auth.token.name': id }, createdAt: clock, updatedAt: clock });

tap.test('events the trail records are kept; a failing store costs the row and a log line, not the change', async (t) => {
  const store = openSqliteHistoryStore({ path: join(dir, 'auth.db') });
  const logs = captureLogs();
  const clock = fakeClock();
  const trail = new AuditTrail(logs.logger, clock.clock, clientAddressReader([]));
  const recorder = createAuditRecorder({ store, scope: 'replica-1', retention: { maxAgeMs: 1e12, maxEntries: 100 }, logger: logs.logger });
  trail.onEvent(recorder.record);

  const first = trail.record({ type: 'io.vexil.auth.token.created', subject: subject('a', clock.now), origin: 'bootstrap' });
  const second = trail.record({ type: 'io.vexil.auth.token.deleted', subject: subject('a', clock.now) });
  await recorder.settled();
  t.same((await store.listAudit('replica-1', { limit: 10 })).map((r) => r.event), [second, first], 'both kept, as the trail made them');
  recorder.record(first);
  await recorder.settled();
  t.equal((await store.listAudit('replica-1', { limit: 10 })).length, 2, 'handed over twice: one row');

  await store.close();
  let third: { id: string } | undefined;
  t.doesNotThrow(() => (third = trail.record({ type: 'io.vexil.auth.token.created', subject: subject('b', clock.now) })), 'the change is not refused');
  await recorder.settled();
  const failed = logs.entries().filter((e) => e.msg === 'keeping the audit event in the history store failed; the change stands');
  t.equal(failed.length, 1, 'one error line');
  t.match(failed[0], { level: 'error', auditId: third!.id, type: 'io.vexil.auth.token.created', err: String });
  t.notOk(logs.entries().some((e) => e.msg === 'an audit event listener failed'), 'the listener itself never throws');
});
