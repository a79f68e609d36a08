/** The flag page's "last changed" line (src/ui/lib/last-change-text.ts). */
import t from 'tap';
import { authorName, lastChangeText } from '../../../src/ui/lib/last-change-text.js';

const now = Date.parse('2026-11-28T12:00:00Z');

t.test('a commit: short id, author name, age, first line of the message', async (t) => {
  t.equal(
    lastChangeText({ revision: 'a'.repeat(40), parent: 'b'.repeat(40), author: 'Grace Hopper <grace@example.com>', message: 'Turn beta on\n\nbecause', committedAt: '2026-11-28T09:00:00Z' }, now),
    'Last changed in aaaaaaa by Grace Hopper, 3 h ago: Turn beta on',
  );
  t.equal(lastChangeText({ revision: 'c'.repeat(40), author: '', message: '', committedAt: '' }, now), 'Last changed in ccccccc', 'nothing made up when the commit says little');
});

t.test('not known: the reason as the server gives it', async (t) => {
  t.equal(lastChangeText({ revision: null, reason: 'the state is read from a local folder, which keeps no commit history' }, now), 'Not known: the state is read from a local folder, which keeps no commit history');
});

t.test('author names', async (t) => {
  t.equal(authorName('Ada Lovelace <ada@example.com>'), 'Ada Lovelace');
  t.equal(authorName('<bot@example.com>'), '<bot@example.com>', 'no name: the address');
});
