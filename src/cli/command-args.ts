/**
 * What every command does with its arguments before its own work: node:util's parseArgs, with a
 * parse failure (an unknown option, a missing value) reported as a UsageError that shows the
 * command's usage, and the `--format` value checked against the formats the command writes.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './usage.js';

/** parseArgs(config); a failure is a UsageError with `usage`. */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw new UsageError((err as Error).message, usage);
  }
}

/** `value` when it is one of `formats`; otherwise a UsageError naming them. */
export function chosenFormat<F extends string>(value: unknown, formats: readonly F[], usage: string): F {
  if (typeof value === 'string' && (formats as readonly string[]).includes(value)) return value as F;
  throw new UsageError(`unknown format "${String(value)}" (expected ${formats.join(', ')})`, usage);
}
