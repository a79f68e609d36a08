/**
 * Where vexil keeps state between runs when `data_dir` is not set: the OS data folder, or the
 * OS temp folder when there is no usable home folder (containers often run with none); that one
 * is private to vexil's user (see resolveDataDir).
 */
import { homedir, tmpdir, userInfo } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ensurePrivateDir } from './private-dir.js';

export interface DataDirEnv {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  home: string | undefined;
  tmp: string;
}

function currentEnv(): DataDirEnv {
  let home: string | undefined;
  try {
    home = homedir();
  } catch {
    home = undefined;
  }
  return { env: process.env, platform: process.platform, home, tmp: tmpdir() };
}

function userSuffix(): string {
  try {
    return `-${userInfo().username}`;
  } catch {
    return '';
  }
}

export function defaultDataDir(e: DataDirEnv = currentEnv()): string {
  const home = e.home && e.home !== '/nonexistent' && isAbsolute(e.home) ? e.home : undefined;
  if (e.platform === 'win32' && e.env.LOCALAPPDATA) return join(e.env.LOCALAPPDATA, 'vexil');
  if (e.platform !== 'win32' && e.env.XDG_DATA_HOME && isAbsolute(e.env.XDG_DATA_HOME)) return join(e.env.XDG_DATA_HOME, 'vexil');
  if (home !== undefined) {
    if (e.platform === 'darwin') return join(home, 'Library', 'Application Support', 'vexil');
    if (e.platform !== 'win32') return join(home, '.local', 'share', 'vexil');
  }
  return join(e.tmp, `vexil${userSuffix()}`);
}

/**
 * `data_dir` from the config (relative to `cwd`), else the default. The default in the shared
 * temp folder is made private, or refused when someone else made it (src/private-dir.ts).
 */
export function resolveDataDir(configured: string | undefined, cwd: string): string {
  if (configured !== undefined) return resolve(cwd, configured);
  const e = currentEnv();
  const dir = defaultDataDir(e);
  if (dirname(dir) === resolve(e.tmp)) ensurePrivateDir(dir, 'the default data folder (data_dir)');
  return dir;
}
