/**
 * CONTRACT (to be implemented by the evaluation work): turns a declared flag plus the segments of
 * its namespace into the precomputed data the evaluators read. Pure; called once per flag at
 * snapshot build. Validation has already guaranteed that every referenced segment and variant exists.
 */
import type { FlagDefinition, Segment } from '../state/model.js';

export interface CompiledFlag {
  readonly _todo?: never;
}

export function compileFlag(flag: FlagDefinition, segments: ReadonlyMap<string, Segment>): CompiledFlag {
  void flag;
  void segments;
  throw new Error('compileFlag: not implemented yet');
}
