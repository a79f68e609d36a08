/**
 * Schema defaults read straight from schemas/config.schema.json, for the commands that take no
 * config file (validate, test, evaluate, diff): they read state with the same limits `vexil
 * serve` applies when the config leaves them unset. The values live in the schema only; this file
 * reads them (without compiling the validator, so a CLI run pays a JSON parse, not an ajv compile).
 */
import { configSchemaDocument, schemaAt } from './schema.js';

/** `storage.max_file_size` and `storage.max_state_size` at their schema defaults. */
export interface StateLimits {
  readonly maxFileSize: number;
  readonly maxStateSize: number;
}

/** The schema's default of the key at `path`; throws when the schema gives none (a schema bug). */
export function schemaDefault(path: readonly string[]): unknown {
  const value = schemaAt(configSchemaDocument(), path)?.default;
  if (value === undefined) throw new Error(`config schema: ${path.join('.')} has no default`);
  return value;
}

function integerDefault(path: readonly string[]): number {
  const value = schemaDefault(path);
  if (typeof value !== 'number') throw new Error(`config schema: the default of ${path.join('.')} is not a number`);
  return value;
}

export function defaultStateLimits(): StateLimits {
  return {
    maxFileSize: integerDefault(['storage', 'max_file_size']),
    maxStateSize: integerDefault(['storage', 'max_state_size']),
  };
}
