/**
 * Thrown by `SourceFile.bytes()` when a source will not hand out a file's bytes (too large, a
 * symlink leaving the state root...). The state reader turns it into a located problem on that
 * file instead of failing the whole read, so one bad file never crashes a load.
 */
import type { RuleId } from '../state/rules.js';

export class FileRefusedError extends Error {
  /** Stable problem rule id, e.g. `file.too-large`, `file.symlink-outside-root`. */
  readonly rule: RuleId;
  readonly hint?: string;

  constructor(rule: RuleId, message: string, hint?: string) {
    super(message);
    this.name = 'FileRefusedError';
    this.rule = rule;
    if (hint !== undefined) this.hint = hint;
  }
}

export function tooLarge(path: string, size: number, maxFileSize: number): FileRefusedError {
  return new FileRefusedError(
    'file.too-large',
    `${path} is ${size} bytes, over the limit of ${maxFileSize} bytes`,
    'split the file, or raise storage.max_file_size',
  );
}

/** The file whose bytes bring a revision's state files over `storage.max_state_size`. */
export function stateTooLarge(path: string, size: number, total: number, maxStateSize: number): FileRefusedError {
  return new FileRefusedError(
    'state.too-large',
    `the state files of this revision add up to more than ${maxStateSize} bytes: ${path} (${size} bytes) brings them to ${total} bytes`,
    'serve less state from one reference, or raise storage.max_state_size',
  );
}
