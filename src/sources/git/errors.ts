/**
 * One wording for what went wrong talking to the Git server, whoever raised it (our ref listing,
 * isomorphic-git's fetch, the transport): this is what `/meta/snapshots` shows as `lastError`
 * and what the logs say, so it names the cause and the key to change, never a credential.
 */
import { GitAuthFileError } from './auth.js';
import { GitTransportError } from './http-client.js';

export class GitServerError extends Error {
  readonly status: number;
  constructor(status: number, statusText: string, what: string, hasCredentials: boolean) {
    super(describeStatus(status, statusText, what, hasCredentials));
    this.name = 'GitServerError';
    this.status = status;
  }
}

function describeStatus(status: number, statusText: string, what: string, hasCredentials: boolean): string {
  const code = `HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
  switch (status) {
    case 401:
      return hasCredentials
        ? `the git server refused the credentials (${code}) while ${what}: check storage.git.authentication`
        : `the git server requires authentication (${code}) while ${what}: set storage.git.authentication`;
    case 403:
      return `the git server denied access (${code}) while ${what}: the credentials lack read access to the repository`;
    case 404:
      return `the git server has no such repository (${code}) while ${what}: check storage.git.repository`;
    default:
      return `the git server answered ${code} while ${what}`;
  }
}

/** Our message for any error met while talking to the server. */
export function describeGitError(err: unknown, what: string, hasCredentials: boolean): Error {
  if (err instanceof GitServerError || err instanceof GitTransportError || err instanceof GitAuthFileError) return err;
  const e = err as { code?: string; data?: { statusCode?: number; statusMessage?: string }; message?: string };
  if (e?.code === 'HttpError' && typeof e.data?.statusCode === 'number') {
    return new GitServerError(e.data.statusCode, e.data.statusMessage ?? '', what, hasCredentials);
  }
  if (e?.code === 'SmartHttpError') {
    return new Error(`the server is not a Git smart-HTTP server (while ${what}): check storage.git.repository`);
  }
  return new Error(`${what} failed: ${e?.message ?? String(err)}`);
}

/** A URL without user:password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}
