/**
 * The lifecycle checks (src/state/checks/lifecycle.ts) on fixtures/stale/state: `flag.expired` for
 * temporary flags past a date or an instant, `flag.expires.invalid` for an `expires` that is no
 * date, and the near misses (expiring at the end of today, permanent, no lifecycle) that must not
 * report; "today" is an input, so moving it moves the findings. Positions by locate-flags.ts.
 */
import t from 'tap';
import { load } from '../../../src/state/load.js';
import { expiryInstant, lifecycleChecks } from '../../../src/state/checks/lifecycle.js';
import { locateFlags } from '../../../src/state/checks/locate-flags.js';
import { RULES } from '../../../src/state/rules.js';
import { stateFile } from '../../support/state-fixture.js';
import { REPO } from '../../cli/run-cli.js';

const files = [stateFile(`${REPO}fixtures/stale/state`, 'flags.features.yml')];
const loaded = load(files, { reference: 'main', revision: 'r1' });
const snapshot = loaded.snapshot!;

t.test('the fixture loads without problems', async (t) => {
  t.ok(snapshot, JSON.stringify(loaded.problems));
  t.same(loaded.problems, []);
});

t.test('today 2026-11-27: two expired, one invalid date, near misses quiet', async (t) => {
  const reports = lifecycleChecks(snapshot, new Date('2026-11-27T12:00:00Z'));
  t.same(reports.map((r) => [r.rule, r.place.flag]), [
    ['flag.expired', 'old-experiment'],
    ['flag.expires.invalid', 'someday'],
    ['flag.expired', 'timed-out'],
  ]);
  for (const r of reports) {
    t.equal(r.severity, 'warning');
    t.equal(r.hint, RULES[r.rule].hint);
    t.equal(r.namespace, 'default');
  }
  t.match(reports[0]!.message, /temporary flag `old-experiment` \(owner @growth\) expired on 2026-01-31/);
});

t.test('the clock is an input: the last instant of a day, the next day, and before everything', async (t) => {
  const at = (iso: string) => lifecycleChecks(snapshot, new Date(iso)).filter((r) => r.rule === 'flag.expired').map((r) => r.place.flag);
  t.same(at('2026-11-27T23:59:59.999Z'), ['old-experiment', 'timed-out'], 'ends-today still runs until the end of its day');
  t.same(at('2026-11-28T00:00:00Z'), ['ends-today', 'old-experiment', 'timed-out']);
  t.same(at('2026-11-26T23:59:58Z'), ['old-experiment'], 'one second before the instant');
  t.same(at('2020-01-01T00:00:00Z'), []);
});

t.test('expires: dates and RFC 3339 date-times, nothing else', async (t) => {
  t.equal(expiryInstant('2026-01-31'), Date.UTC(2026, 0, 31 + 1));
  t.equal(expiryInstant('2024-02-29'), Date.UTC(2024, 2, 1), 'a leap day');
  t.equal(expiryInstant('2026-11-27T10:00:00+02:00'), Date.UTC(2026, 10, 27, 8));
  t.equal(expiryInstant('2026-11-27t10:00:00.5z'), Date.UTC(2026, 10, 27, 10, 0, 0, 500));
  for (const bad of ['2026-02-29', '2026-13-01', '2026-1-01', 'next week', '', '2026-11-27T25:00:00Z', '2026-11-27T10:00:00', '20261127', '2026-11-27 ']) {
    t.equal(expiryInstant(bad), undefined, bad);
  }
});

t.test('located at the metadata key, or at the flag key', async (t) => {
  const [expires, key, missing] = locateFlags(files, [
    { namespace: 'default', flag: 'old-experiment', under: ['metadata', 'expires'] },
    { namespace: 'default', flag: 'split' },
    { namespace: 'default', flag: 'no-such-flag' },
  ]);
  const lines = new TextDecoder().decode(files[0]!.bytes).split('\n');
  t.equal(expires!.file, 'flags.features.yml');
  t.equal(lines[expires!.line - 1]!.slice(expires!.column - 1, expires!.column - 1 + 'expires'.length), 'expires');
  t.match(lines[expires!.line - 1], /^\s+metadata: \{owner: "@growth", lifecycle: temporary, expires: "2026-01-31"\}$/);
  t.equal(lines[key!.line - 1]!.slice(key!.column - 1), 'key: split                   # 50/50 for everyone');
  t.equal(missing, undefined);
});
