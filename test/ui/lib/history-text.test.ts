/** The history page's words and addresses (src/ui/lib/history-text.ts). */
import t from 'tap';
import {
  HISTORY_PAGE_SIZE,
  PREVIOUS_LOOKUP_LIMIT,
  durationText,
  emptyHistoryText,
  firstLine,
  historyApiPath,
  historyErrorText,
  historySummary,
  isCommitId,
  newestServed,
  parseHistoryQuery,
  previousLookupPath,
  problemCountText,
  servedBeforeOnPage,
  servedForText,
} from '../../../src/ui/lib/history-text.js';
import type { HistoryEntry } from '../../../src/ui/types.js';

const served = (revision: string, servedFrom: string, servedUntil: string | null = null): HistoryEntry => ({
  reference: 'main',
  revision,
  status: 'served',
  servedFrom,
  servedUntil,
  replacedBy: null,
  author: 'Ada',
  message: 'm',
  committedAt: null,
});
const rejected = (revision: string, rejectedAt: string): HistoryEntry => ({
  reference: 'main',
  revision,
  status: 'rejected',
  servedFrom: null,
  servedUntil: null,
  replacedBy: null,
  rejectedAt,
  author: 'Ada',
  message: 'm',
  committedAt: null,
  problems: [],
  problemCount: 0,
});

t.test('the address and the API query', async (t) => {
  t.same(parseHistoryQuery(new URLSearchParams('')), { pageToken: '', limit: HISTORY_PAGE_SIZE });
  t.same(parseHistoryQuery(new URLSearchParams('pageToken=abc%3D&limit=5')), { pageToken: 'abc=', limit: 5 });
  for (const bad of ['0', '101', '-1', '2.5', 'x', '99999']) t.equal(parseHistoryQuery(new URLSearchParams(`limit=${bad}`)).limit, HISTORY_PAGE_SIZE, `limit=${bad}: the default`);
  t.equal(historyApiPath(undefined, { pageToken: '', limit: 25 }), '/meta/history?limit=25', 'no reference: the server default');
  t.equal(historyApiPath('feature/x', { pageToken: 'a+b', limit: 5 }), '/meta/history?reference=feature%2Fx&limit=5&pageToken=a%2Bb');
  t.equal(previousLookupPath('main', ''), undefined, 'the last page: nothing older to read');
  t.equal(previousLookupPath('main', 'tok'), `/meta/history?reference=main&limit=${PREVIOUS_LOOKUP_LIMIT}&pageToken=tok`);
});

t.test('the revision served before each entry', async (t) => {
  // newest first: served c, rejected x, served b, rejected y, served a, rejected z
  const page = [served('c', '2026-11-27T10:05:00Z'), rejected('x', '2026-11-27T10:04:00Z'), served('b', '2026-11-27T10:03:00Z', '2026-11-27T10:05:00Z'), rejected('y', '2026-11-27T10:02:00Z'), served('a', '2026-11-27T10:01:00Z', '2026-11-27T10:03:00Z'), rejected('z', '2026-11-27T10:00:00Z')];
  t.same(servedBeforeOnPage(page), ['b', 'b', 'a', 'a', undefined, undefined], 'served: the diff base; rejected: what was kept serving; the oldest ones: not on the page');
  t.same(servedBeforeOnPage([]), []);
  t.equal(newestServed([rejected('q', '2026-11-27T09:00:00Z'), served('p', '2026-11-27T08:00:00Z'), served('o', '2026-11-27T07:00:00Z')]), 'p');
  t.equal(newestServed([rejected('q', '2026-11-27T09:00:00Z')]), undefined);
});

t.test('messages, durations, counts', async (t) => {
  t.equal(firstLine('Roll out\n\nBecause'), 'Roll out');
  t.equal(firstLine('  Windows line \r\nsecond'), 'Windows line');
  t.equal(firstLine(''), '');
  t.equal(durationText(0, 45_000), '45 s');
  t.equal(durationText(0, 400), 'under 1 s');
  t.equal(durationText(0, 12 * 60_000 + 5_000), '12 min');
  t.equal(durationText(0, 3 * 3_600_000), '3 h');
  t.equal(durationText(0, 3 * 3_600_000 + 5 * 60_000), '3 h 5 min');
  t.equal(durationText(0, 1_500 * 86_400_000), '1,500 days');
  t.equal(durationText(10, 0), '', 'out of order');
  t.equal(durationText(NaN, 0), '');
  const now = Date.parse('2026-11-27T10:08:00Z');
  t.equal(servedForText(served('c', '2026-11-27T10:05:00Z'), now), 'for 3 min so far');
  t.equal(servedForText(served('b', '2026-11-27T10:03:00Z', '2026-11-27T10:05:00Z'), now), 'for 2 min');
  t.equal(servedForText(rejected('x', '2026-11-27T10:04:00Z'), now), '');
  t.equal(problemCountText(1, 1), '1 problem');
  t.equal(problemCountText(3, 3), '3 problems');
  t.equal(problemCountText(20, 1234), 'the first 20 of 1,234 problems');
  t.equal(problemCountText(2, 0), '2 problems', 'a missing count: the problems shown');
  t.equal(historySummary([served('c', 'x'), rejected('x', 'y')], false), '2 entries: 1 served, 1 rejected.');
  t.equal(historySummary([served('c', 'x')], true), '1 entry on this page: 1 served, 0 rejected. Older entries follow on the next page.');
});

t.test('an empty history and failed reads in words', async (t) => {
  const sha1 = 'a'.repeat(40);
  t.ok(isCommitId(sha1));
  t.ok(isCommitId('B'.repeat(64)));
  t.notOk(isCommitId('main'));
  t.notOk(isCommitId('a'.repeat(39)));
  t.match(emptyHistoryText(sha1, false), /is a commit id: it never changes, so vexil keeps no history for it/);
  t.match(emptyHistoryText('nope', false), /^No revision of nope is in the history\. vexil records a reference from the first revision it serves or rejects/);
  t.equal(emptyHistoryText('main', true), 'No older entries of main are kept.');
  const unavailable = historyErrorText(503, 'the history store cannot be read now');
  t.equal(unavailable.title, 'History store unavailable');
  t.match(unavailable.text, /the history store cannot be read now.+out of reach\. Flags are still served/);
  t.match(historyErrorText(400, 'pageToken is not a page token of this history').text, /refused the query: pageToken is not/);
  t.match(historyErrorText(403, 'namespace-scoped').text, /not limited to namespaces/);
  t.equal(historyErrorText(0, '').title, 'No connection');
  t.same(historyErrorText(500, 'boom'), { title: 'Error 500', text: 'boom' });
});
