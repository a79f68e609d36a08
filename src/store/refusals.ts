/**
 * What the store answers instead of a snapshot, worded in one place (every refusal of a request
 * naming a reference, and the one-line form of a problem the store logs and quotes):
 *
 * - NotFound (404): the source neither lists nor can look up the name, or names a commit id on a
 *   server that serves only branches and tags.
 * - FailedPrecondition (400): the reference exists but has no valid state; the first error problem
 *   of its rejected revision is quoted.
 * - Unavailable (503, always with Retry-After): the backend cannot be read, a cap on the work a
 *   request may cause is reached (admission.ts), or the store is closed.
 *
 * A backend failure is refused with a generic message: its error text names hosts and ports, so it
 * goes to the log and /meta/snapshots only (as `cause`, never in the body). Pure: the caller passes
 * what the wording needs (a reference's state, the wait until the next poll).
 */
import { Code, VexilError, backendUnavailable as backendUnavailableRefusal, notFound, storeOverloaded } from '../errors.js';
import type { Problem } from '../model/problem.js';
import type { RefState } from './ref-table.js';

export const unknownReference = (ref: string): VexilError => notFound(`reference "${ref}" not found`);

/** A full commit id named on a server with `allowUnlistedReferences: false`. */
export const commitIdsNotServed = (ref: string): VexilError =>
  notFound(`reference "${ref}" not found: this server does not serve commit ids, only branches and tags`);

export { storeClosed } from '../errors.js';

const overloaded = storeOverloaded;

export const tooManyLookups = (name: string): VexilError =>
  overloaded(`reference "${name}" cannot be looked up now: too many lookups are waiting; try again later`, 1);

export const tooManyPendingBuilds = (ref: string, maxPendingBuilds: number): VexilError =>
  overloaded(`reference "${ref}" cannot be built now: ${maxPendingBuilds} builds are already waiting; try again later`, 1);

/** `retryAfterSeconds`: until a slot may free (the least recently used reference turns idle, seen at a poll). */
export const tooManyReferences = (ref: string, maxReferences: number, retryAfterSeconds: number): VexilError =>
  overloaded(
    `reference "${ref}" cannot be built now: the server already keeps ${maxReferences} references built on request; try again later`,
    retryAfterSeconds,
  );

/**
 * The backend could not be read for `ref`: a 503 with a message that says so and nothing more
 * (the error text names hosts and ports; it is logged and shown in /meta/snapshots). Retry
 * after the next poll (`retryAfterMs`), which tries again.
 */
export function backendUnavailable(ref: string, cause: unknown, retryAfterMs: number): VexilError {
  return backendUnavailableRefusal(ref, retryAfterMs / 1000, cause);
}

/**
 * Why `ref` has no snapshot after its build: a backend that could not be read (503; a read that
 * succeeds clears lastError, so when set it is the latest outcome), else invalid content (400).
 */
export function cannotServe(ref: string, st: RefState | undefined, retryAfterMs: number): VexilError {
  if (st?.lastError === undefined) return noValidState(ref, st);
  return backendUnavailable(ref, new Error(st.lastError.message), retryAfterMs);
}

export function noValidState(ref: string, st: RefState | undefined): VexilError {
  const first = st?.lastRejected?.problems.find((x) => x.severity === 'error');
  return new VexilError(
    Code.FailedPrecondition,
    first !== undefined ? `reference "${ref}" has no valid state: ${formatProblem(first)}` : `reference "${ref}" has no valid state`,
  );
}

/** One line per problem, for logs: `file:line:col: severity rule: message`. */
export function formatProblem(p: Problem): string {
  const loc = p.file === '' ? '' : p.line > 0 ? `${p.file}:${p.line}:${p.column}: ` : `${p.file}: `;
  return `${loc}${p.severity} ${p.rule}: ${p.message}`;
}
