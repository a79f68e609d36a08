/**
 * The one-line wording of a failed `vexil bundle push/pull`: line breaks (with the blanks around
 * them) become one space, and the TLS-to-plain-HTTP hint; both linear in the message (the
 * expressions they replace were quadratic in a long run of blanks), checked at 1 MB.
 */
import t from 'tap';
import { describeFailure } from '../../src/cli/bundle/failure.js';
import { RegistryError } from '../../src/sources/oci/types.js';

const MB = 1024 * 1024;
const PUSH = 'push flags:v1 to registry.example/flags:v1';

t.test('messages on one line', async (t) => {
  t.equal(describeFailure(PUSH, 'r', new Error('first line\n  second line \r\n\n third')), `cannot ${PUSH}: first line second line third`);
  t.equal(describeFailure(PUSH, 'r', new Error('  tabs\tand  blanks stay  ')), `cannot ${PUSH}: tabs\tand  blanks stay`);
  const blanks = ' '.repeat(MB);
  t.equal(describeFailure(PUSH, 'r', new Error(`a${blanks}b`)), `cannot ${PUSH}: a${blanks}b`, '1 MB of blanks without a line break');
  t.equal(describeFailure(PUSH, 'r', new Error(`a${blanks}\n${blanks}b`)), `cannot ${PUSH}: a b`, '1 MB of blanks around a line break');
});

t.test('the plain-HTTP hint after a TLS failure', async (t) => {
  const hint = /if it speaks plain HTTP, use --insecure/;
  const tls = new RegistryError('unreachable', 'pushing blob: cannot reach https://r:5000 (EPROTO)');
  t.match(describeFailure(PUSH, 'r:5000', tls), hint);
  t.notMatch(describeFailure(PUSH, 'r:5000', new RegistryError('unreachable', 'pushing blob: cannot reach https://r:5000 (ECONNREFUSED)')), hint);
  t.notMatch(describeFailure(PUSH, 'r:5000', new RegistryError('unreachable', 'pushing blob: cannot reach http://r:5000 (EPROTO)')), hint);
  const repeated = 'cannot reach https://'.repeat(MB / 21);
  t.notMatch(describeFailure(PUSH, 'r', new RegistryError('unreachable', `pushing blob: ${repeated}`)), hint, '1 MB of repeated addresses');
  t.match(describeFailure(PUSH, 'r', new RegistryError('unreachable', `pushing blob: ${repeated} TLS`)), hint);
});
