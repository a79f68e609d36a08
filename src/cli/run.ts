/**
 * Dispatches `vexil <command> ...` and turns every failure into an exit status:
 * 0 success, 1 failure (invalid state, invalid config...), 2 usage error.
 */
import { VERSION } from '../version.js';
import type { CliIO } from './io.js';
import { COMMAND_USAGE, MAIN_USAGE, UsageError } from './usage.js';
import { runValidate } from './validate.js';

const COMMANDS: Readonly<Record<string, (args: readonly string[], io: CliIO) => Promise<number>>> = {
  // Loaded on use: `validate` in CI should not pay for the HTTP stack.
  serve: async (args, io) => (await import('./serve.js')).runServe(args, io),
  validate: runValidate,
  evaluate: async (args, io) => (await import('./evaluate.js')).runEvaluate(args, io),
  test: async (args, io) => (await import('./test.js')).runTest(args, io),
  bundle: async (args, io) => (await import('./bundle/command.js')).runBundle(args, io),
  diff: async (args, io) => (await import('./diff/command.js')).runDiff(args, io),
  stale: async (args, io) => (await import('./stale/command.js')).runStale(args, io),
  comment: async (args, io) => (await import('./comment/command.js')).runComment(args, io),
};

export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`vexil: ${err.message}\n\n${err.usage}`);
      return 2;
    }
    io.stderr(`vexil: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

async function dispatch(argv: readonly string[], io: CliIO): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError('missing command', MAIN_USAGE);
  if (first === '-h' || first === '--help') {
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`, MAIN_USAGE);
    io.stdout(MAIN_USAGE);
    return 0;
  }
  if (first === '-v' || first === '--version') {
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`, MAIN_USAGE);
    io.stdout(`vexil ${VERSION}\n`);
    return 0;
  }
  if (first === 'help') {
    if (rest.length > 1) throw new UsageError(`unexpected argument "${rest[1]}"`, MAIN_USAGE);
    const topic = rest[0];
    if (topic === undefined) {
      io.stdout(MAIN_USAGE);
      return 0;
    }
    const usage = COMMAND_USAGE[topic];
    if (usage === undefined) throw new UsageError(`unknown command "${topic}"`, MAIN_USAGE);
    io.stdout(usage);
    return 0;
  }
  if (first.startsWith('-')) throw new UsageError(`unknown option "${first}"`, MAIN_USAGE);
  const command = Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined;
  if (command === undefined) throw new UsageError(`unknown command "${first}"`, MAIN_USAGE);
  return command(rest, io);
}
