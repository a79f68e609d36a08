/**
 * Folders vexil makes by default in the shared temp folder (the Git mirror cache; the data folder
 * when there is no home folder): every local user can create names there, so one that already
 * exists may have been planted by another user (to read vexil's tokens, or to feed it a forged
 * Git cache). Such a folder is created private (0700) and used only when it is a real folder (not
 * a symbolic link) owned by vexil's user and closed to group and others; otherwise vexil refuses
 * to use it, saying how to fix it. Folders the configuration names are the operator's choice and
 * are not checked here. Not on Windows (no POSIX owners or modes).
 */
import { lstatSync, mkdirSync } from 'node:fs';

export class PrivateDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrivateDirError';
  }
}

/**
 * Creates `path` (its parent must exist) with mode 0700 when absent; throws PrivateDirError when
 * it exists and is not a folder owned by this process's user with no group or other permissions.
 * `what` names the folder and the setting that moves it, for the message.
 */
export function ensurePrivateDir(path: string, what: string): void {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') {
    mkdirSync(path, { recursive: true });
    return;
  }
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = lstatSync(path);
  const uid = process.getuid();
  const problem = st.isSymbolicLink()
    ? 'is a symbolic link'
    : !st.isDirectory()
      ? 'is not a folder'
      : st.uid !== uid
        ? `is owned by another user (uid ${st.uid}, vexil runs as uid ${uid})`
        : (st.mode & 0o077) !== 0
          ? `is open to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, must be 0700)`
          : undefined;
  if (problem !== undefined) {
    throw new PrivateDirError(`${what} ${path} ${problem}; refusing to use it: remove it, or set another folder in the configuration`);
  }
}
