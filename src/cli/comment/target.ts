/**
 * Which pull (merge) request `vexil comment` writes to, on which API, with which credential: from
 * the command's flags first, then from the CI environment the job runs in. GitHub Actions:
 * GITHUB_REPOSITORY, the event payload at GITHUB_EVENT_PATH (`pull_request.number`),
 * GITHUB_API_URL, GITHUB_TOKEN. GitLab CI: CI_PROJECT_ID, CI_MERGE_REQUEST_IID, CI_API_V4_URL,
 * GITLAB_TOKEN (PRIVATE-TOKEN header) or else CI_JOB_TOKEN (JOB-TOKEN header). The token is read
 * from the environment only, never from an argument (arguments show in process lists and logs).
 */
import { readFile, stat } from 'node:fs/promises';

/** The event payload of a GitHub Actions run is read only below this size. */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

export interface TargetFlags {
  readonly provider: 'github' | 'gitlab';
  readonly apiUrl?: string;
  readonly repository?: string;
  readonly project?: string;
  readonly number?: string;
}

export type Target =
  | { readonly provider: 'github'; readonly apiUrl: string; readonly repository: string; readonly number: number; readonly token: string }
  | {
      readonly provider: 'gitlab';
      readonly apiUrl: string;
      readonly project: string;
      readonly iid: number;
      readonly token: string;
      readonly tokenHeader: 'PRIVATE-TOKEN' | 'JOB-TOKEN';
    };

/** A setting the command needs is missing or malformed: a usage error (exit 2). */
export class TargetError extends Error {}

const nonEmpty = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());

export async function resolveTarget(flags: TargetFlags, env: NodeJS.ProcessEnv): Promise<Target> {
  if (flags.provider === 'github') {
    const repository = nonEmpty(flags.repository) ?? nonEmpty(env.GITHUB_REPOSITORY);
    if (repository === undefined) throw new TargetError('no repository: give --repository OWNER/NAME (GitHub Actions sets GITHUB_REPOSITORY)');
    if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository)) throw new TargetError(`--repository must be OWNER/NAME (got "${repository}")`);
    const number = parseNumber(nonEmpty(flags.number) ?? (await eventNumber(env.GITHUB_EVENT_PATH)), '--number', 'no pull request number: give --number N (in GitHub Actions, run on pull_request events)');
    const token = nonEmpty(env.GITHUB_TOKEN);
    if (token === undefined) throw new TargetError('GITHUB_TOKEN is not set (the token that may write the pull request\'s comments)');
    return { provider: 'github', apiUrl: apiUrl(nonEmpty(flags.apiUrl) ?? nonEmpty(env.GITHUB_API_URL) ?? 'https://api.github.com'), repository, number, token };
  }
  const project = nonEmpty(flags.project) ?? nonEmpty(env.CI_PROJECT_ID);
  if (project === undefined) throw new TargetError('no project: give --project ID|GROUP/NAME (GitLab CI sets CI_PROJECT_ID)');
  const iid = parseNumber(nonEmpty(flags.number) ?? nonEmpty(env.CI_MERGE_REQUEST_IID), '--number', 'no merge request: give --number IID (GitLab CI sets CI_MERGE_REQUEST_IID in merge request pipelines)');
  const personal = nonEmpty(env.GITLAB_TOKEN);
  const job = nonEmpty(env.CI_JOB_TOKEN);
  if (personal === undefined && job === undefined) throw new TargetError('GITLAB_TOKEN is not set (an access token with the api scope)');
  return {
    provider: 'gitlab',
    apiUrl: apiUrl(nonEmpty(flags.apiUrl) ?? nonEmpty(env.CI_API_V4_URL) ?? 'https://gitlab.com/api/v4'),
    project,
    iid,
    token: (personal ?? job)!,
    tokenHeader: personal !== undefined ? 'PRIVATE-TOKEN' : 'JOB-TOKEN',
  };
}

function parseNumber(v: string | undefined, flag: string, missing: string): number {
  if (v === undefined) throw new TargetError(missing);
  if (!/^[1-9]\d{0,9}$/.test(v)) throw new TargetError(`${flag} must be a positive integer (got "${v}")`);
  return Number(v);
}

function apiUrl(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new TargetError(`--api-url must be an http(s) URL (got "${v}")`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new TargetError(`--api-url must be an http(s) URL (got "${v}")`);
  if (u.username !== '' || u.password !== '') throw new TargetError('--api-url must not carry credentials (the token comes from the environment)');
  return u.toString().replace(/\/+$/, '');
}

/** `pull_request.number` (also `issue.number` of an issue_comment event on a pull request). */
async function eventNumber(path: string | undefined): Promise<string | undefined> {
  if (nonEmpty(path) === undefined) return undefined;
  const st = await stat(path!).catch(() => undefined);
  if (st === undefined || !st.isFile() || st.size > MAX_EVENT_BYTES) return undefined;
  try {
    const event = JSON.parse(await readFile(path!, 'utf8')) as { pull_request?: { number?: unknown }; issue?: { number?: unknown; pull_request?: unknown } };
    const n = event.pull_request?.number ?? (event.issue?.pull_request !== undefined ? event.issue.number : undefined);
    return Number.isSafeInteger(n) ? String(n) : undefined;
  } catch {
    return undefined;
  }
}
