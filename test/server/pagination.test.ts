import t from 'tap';
import { paginate, parsePageParams, requireLimitWhenPaging } from '../../src/server/pipeline/pagination.js';

const q = (o: Record<string, string>) => new Map(Object.entries(o));
const items = Array.from({ length: 57 }, (_, i) => i);

t.test('pages of 10 over 57: 10×5 + 7', async (t) => {
  const sizes: number[] = [];
  let token = '';
  do {
    const page = paginate(items, parsePageParams(q({ limit: '10', pageToken: token })));
    t.equal(page.totalCount, 57);
    sizes.push(page.items.length);
    token = page.nextPageToken;
  } while (token !== '');
  t.same(sizes, [10, 10, 10, 10, 10, 7]);
});

t.test('tokens, limits, errors', async (t) => {
  t.same(paginate(items, parsePageParams(q({}))).items.length, 57, 'no limit');
  t.same(paginate(items, parsePageParams(q({ pageToken: '50' }))).items, [50, 51, 52, 53, 54, 55, 56], 'token without limit: rest');
  t.same(paginate(items, parsePageParams(q({ limit: '3', page_token: '1' }))).items, [1, 2, 3]);
  t.throws(() => paginate(items, parsePageParams(q({ limit: '3', pageToken: 'MTA=' }))), { message: 'pageToken is not valid: "MTA="' });
  t.throws(() => paginate(items, parsePageParams(q({ limit: '3', pageToken: '-1' }))), { message: 'pageToken is not valid: "-1"' });
  t.throws(() => paginate(items, parsePageParams(q({ limit: '3', pageToken: '57' }))), { message: 'invalid offset: 57' });
  t.same(paginate([], parsePageParams(q({ limit: '3', pageToken: 'junk' }))), { items: [], nextPageToken: '', totalCount: 0 });
  t.throws(() => requireLimitWhenPaging(parsePageParams(q({ pageToken: '10' }))), { message: 'limit must be set when offset or pageToken is set' });
  t.throws(() => requireLimitWhenPaging(parsePageParams(q({ offset: '1' }))), { message: 'limit must be set when offset or pageToken is set' });
  t.doesNotThrow(() => requireLimitWhenPaging(parsePageParams(q({ limit: '1', offset: '1' }))));
  t.throws(() => parsePageParams(q({ limit: '1.5' })), { message: 'invalid field limit: must be an integer' });
  t.throws(() => parsePageParams(q({ limit: '99999999999' })), { message: /invalid field limit: must be at most/ });
});
