/**
 * The `vexil` executable's module (bin/vexil.js imports the built copy; tests run this file with
 * tsx). Running it is its only job; the commands live in run.ts and its neighbours.
 */
import { processIO } from './io.js';
import { run } from './run.js';

// `vexil validate . | head -1`: once the reader has gone, further output has nowhere to go. End
// quietly, as other command-line tools do, instead of crashing on an unhandled EPIPE.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const code = await run(process.argv.slice(2), processIO);
if (process.argv[2] === 'serve') {
  // After a shutdown nothing should keep the process alive, but a stray handle must not either.
  process.exit(code);
}
process.exitCode = code;
