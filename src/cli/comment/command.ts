/**
 * `vexil comment --provider github|gitlab [--validate FILE]... [--test FILE]... [--diff FILE]
 * [--api-url URL] [--repository OWNER/NAME | --project ID] [--number N] [--marker NAME]
 * [--title TEXT] [--dry-run]`: writes the one review comment of a pull (merge) request from the
 * JSON the other commands wrote in the same job, creating it the first time and replacing its body
 * on every later run (found again by a hidden `<!-- NAME -->` marker). With GITHUB_STEP_SUMMARY
 * set, the same report (with a larger bound) is appended to the job summary first.
 * Exit 0 when the comment is written (whatever it reports: the steps that produced the inputs
 * carry their own exit status), 1 when the host refused or could not be reached, 2 on usage errors.
 */
import { appendFile } from 'node:fs/promises';
import { parseCommandArgs } from '../command-args.js';
import type { CliIO } from '../io.js';
import { COMMENT_USAGE, UsageError } from '../usage.js';
import { ApiError } from './api-request.js';
import { commentBody, GITHUB_COMMENT_LIMIT, STEP_SUMMARY_LIMIT } from './body.js';
import { githubThread } from './github.js';
import { gitlabThread } from './gitlab.js';
import { readInputs } from './inputs.js';
import { upsertComment } from './review-thread.js';
import { resolveTarget, TargetError } from './target.js';

const PROVIDERS = ['github', 'gitlab'] as const;

export interface CommentDeps {
  readonly env?: NodeJS.ProcessEnv;
  /** Waits between rate-limit retries. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export async function runComment(args: readonly string[], io: CliIO, deps: CommentDeps = {}): Promise<number> {
  const env = deps.env ?? process.env;
  const parsed = parseCommandArgs(
    {
      args: [...args],
      options: {
        provider: { type: 'string' },
        validate: { type: 'string', multiple: true, default: [] },
        test: { type: 'string', multiple: true, default: [] },
        diff: { type: 'string' },
        'api-url': { type: 'string' },
        repository: { type: 'string' },
        project: { type: 'string' },
        number: { type: 'string' },
        marker: { type: 'string', default: 'vexil-review' },
        title: { type: 'string', default: 'vexil: flag review' },
        'dry-run': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
      strict: true,
    },
    COMMENT_USAGE,
  );
  const v = parsed.values;
  if (v.help) {
    io.stdout(COMMENT_USAGE);
    return 0;
  }
  const provider = v.provider as (typeof PROVIDERS)[number] | undefined;
  if (!v['dry-run'] && provider === undefined) throw new UsageError('--provider is required (github or gitlab)', COMMENT_USAGE);
  if (provider !== undefined && !PROVIDERS.includes(provider)) throw new UsageError(`unknown provider "${v.provider}" (expected ${PROVIDERS.join(', ')})`, COMMENT_USAGE);
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(v.marker)) throw new UsageError(`--marker must be lower-case letters, digits and dashes (got "${v.marker}")`, COMMENT_USAGE);
  if (v.validate.length + v.test.length === 0 && v.diff === undefined) throw new UsageError('nothing to report: give --validate, --test or --diff', COMMENT_USAGE);
  if (v.title.length > 200) throw new UsageError('--title is longer than 200 characters', COMMENT_USAGE);

  const inputs = await readInputs({ validate: v.validate, test: v.test, ...(v.diff !== undefined ? { diff: v.diff } : {}) }, io.cwd);
  for (const u of inputs.unreadable) io.stderr(`vexil: the ${u.what} ${u.file} could not be read: ${u.reason}\n`);
  const marker = `<!-- ${v.marker} -->`;
  const body = commentBody(inputs, { marker, budget: GITHUB_COMMENT_LIMIT, measure: (s) => s.length, title: v.title, elsewhere: 'the job summary or the job log' });

  const summaryPath = env.GITHUB_STEP_SUMMARY;
  if (summaryPath !== undefined && summaryPath !== '') {
    const summary = commentBody(inputs, { budget: STEP_SUMMARY_LIMIT, measure: (s) => Buffer.byteLength(s), title: v.title, elsewhere: 'the job log' });
    await appendFile(summaryPath, `${summary}\n`);
  }
  if (v['dry-run']) {
    io.stdout(body);
    return 0;
  }

  let target;
  try {
    target = await resolveTarget(
      { provider: provider!, ...(v['api-url'] ? { apiUrl: v['api-url'] } : {}), ...(v.repository ? { repository: v.repository } : {}), ...(v.project ? { project: v.project } : {}), ...(v.number ? { number: v.number } : {}) },
      env,
    );
  } catch (err) {
    if (err instanceof TargetError) throw new UsageError(err.message, COMMENT_USAGE);
    throw err;
  }
  const sleep = deps.sleep ? { sleep: deps.sleep } : {};
  const thread =
    target.provider === 'github'
      ? githubThread({ apiUrl: target.apiUrl, repository: target.repository, number: target.number, token: target.token, ...sleep })
      : gitlabThread({ apiUrl: target.apiUrl, project: target.project, iid: target.iid, token: target.token, tokenHeader: target.tokenHeader, ...sleep });
  const where = target.provider === 'github' ? `${target.repository}#${target.number}` : `project ${target.project} !${target.iid}`;
  const scrub = (s: string) => (target.token.length >= 4 ? s.split(target.token).join('***') : s);
  try {
    const result = await upsertComment(thread, marker, body);
    io.stdout(`vexil: ${result.action} comment ${result.id} on ${where}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof ApiError)) throw new Error(scrub((err as Error).message));
    io.stderr(`vexil: ${scrub(err.message)}\n`);
    return 1;
  }
}
