/**
 * The PostgreSQL history store (src/store/history/postgres.ts) on a throwaway server: the shared
 * behaviour (suite.ts), and two stores (two replicas) recording the same swaps at once writing
 * each event once.
 */
import tap from 'tap';
import { openPostgresHistoryStore } from '../../../src/store/history/postgres.js';
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
});
