/**
 * The Authorization header of each request to the Git server. A token file is read again every
 * time (a sidecar may rotate short-lived tokens at any moment), and a fresh headers object is
 * returned per call: isomorphic-git adds to the object it is given (Git-Protocol), and a reused
 * object would leak one call's protocol version into the next.
 */
import { readFile } from 'node:fs/promises';

export interface GitAuth {
  readonly basic?: { readonly username: string; readonly password: string };
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** File holding the token (trimmed); read before every request. */
  readonly tokenPath?: string;
}

export class GitAuthFileError extends Error {
  constructor(path: string, cause: unknown) {
    super(`cannot read the git access token file ${path}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`);
    this.name = 'GitAuthFileError';
  }
}

export function hasCredentials(auth: GitAuth | undefined): boolean {
  return auth !== undefined && (auth.basic !== undefined || auth.token !== undefined || auth.tokenPath !== undefined);
}

export async function authHeaders(auth: GitAuth | undefined): Promise<Record<string, string>> {
  if (auth === undefined) return {};
  if (auth.basic !== undefined) {
    const raw = `${auth.basic.username}:${auth.basic.password}`;
    return { Authorization: `Basic ${Buffer.from(raw, 'utf8').toString('base64')}` };
  }
  let token = auth.token;
  if (auth.tokenPath !== undefined) {
    try {
      token = (await readFile(auth.tokenPath, 'utf8')).trim();
    } catch (err) {
      throw new GitAuthFileError(auth.tokenPath, err);
    }
    if (token === '') throw new GitAuthFileError(auth.tokenPath, new Error('the file is empty'));
  }
  return token === undefined ? {} : { Authorization: `Bearer ${token}` };
}
