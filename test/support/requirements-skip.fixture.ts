/**
 * A test file whose requirement ("thing") is missing, run as a child process by
 * requirements.test.ts: outside CI its tests are skipped with the reason, under CI it fails.
 * (Not a *.test.ts file: tap does not run it by itself.)
 */
import t from 'tap';
import { testsNeeding } from './requirements.js';

let ran = 0;
process.on('exit', () => console.log(`# bodies run: ${ran}`));
const root = testsNeeding(t, 'thing', 'thing not found (install it)');
root.test('with a name', async () => void ran++);
root.test('with options', { timeout: 1000 }, async () => void ran++);
root.test(async () => void ran++);
root.pass("any other member is the root's own (here an assertion on it)");
