/**
 * Request bodies of Flipt's legacy evaluation API (flipt-semantics.md §2.9), checked and turned
 * into evaluator input:
 *
 *   POST /api/v1/evaluate, /api/v1/namespaces/{ns}/evaluate
 *     {"requestId"?, "flagKey", "entityId", "context"?: {string: string}, "namespaceKey"?}
 *   POST /api/v1/batch-evaluate, /api/v1/namespaces/{ns}/batch-evaluate
 *     {"requestId"?, "requests": [<as above>], "excludeNotFound"?: bool, "namespaceKey"?}
 *
 * Fields are read as on `/evaluate/v1` (validate-request.ts: snake_case names too, null = absent,
 * the same context rules and limits), plus the legacy API's own checks, in Flipt's words:
 * `flagKey` and `entityId` must not be empty (`invalid field flagKey: must not be empty`), and a
 * batch item's `namespaceKey` is empty or the batch's (`invalid field namespace_key: must be the
 * same for all requests if specified`).
 *
 * Namespaces: a path's `{ns}` is the request's namespace; a body naming another one is refused
 * (Flipt lets the path win silently). A single request keeps its namespace as sent (`""` when
 * absent, answered as `namespaceKey: ""` and evaluated in `default`), as Flipt does; a batch's
 * empty namespace is `default`, and its items answer with the batch's namespace.
 *
 * The legacy API has no `reference` (Flipt's messages have no such field): these requests read
 * the default reference. A body naming one is refused rather than silently answered from another
 * branch; `/evaluate/v1` takes references.
 */
import type { EvaluationRequest } from '../../model/evaluation-request.js';
import { field, invalidField, isPlainObject, optionalString } from '../../http/fields.js';
import { parseEvaluationRequest } from '../evaluation/validate-request.js';

export interface LegacyEvaluationRequest {
  readonly request: EvaluationRequest;
  readonly requestId?: string;
}

export interface LegacyBatchRequest {
  readonly requests: readonly LegacyEvaluationRequest[];
  readonly requestId?: string;
  readonly excludeNotFound: boolean;
  /** The batch's namespace (never empty): every item's. */
  readonly namespaceKey: string;
}

const NO_REFERENCE = 'the legacy evaluation API reads the default reference; use /evaluate/v1 to name a reference';

function notEmpty(body: Readonly<Record<string, unknown>>, name: string, prefix: string): void {
  const v = field(body, name);
  if (v === undefined || v === '') throw invalidField(`${prefix}${name}`, 'must not be empty');
}

/** `prefix` labels batch items in messages (`requests[3].`). */
export function parseLegacyEvaluation(body: unknown, opts: { pathNamespace?: string; prefix?: string } = {}): LegacyEvaluationRequest {
  const prefix = opts.prefix ?? '';
  if (isPlainObject(body)) {
    notEmpty(body, 'flagKey', prefix);
    notEmpty(body, 'entityId', prefix);
  }
  const parsed = parseEvaluationRequest(body, opts);
  if (parsed.reference !== undefined) throw invalidField(`${prefix}reference`, NO_REFERENCE);
  return parsed.requestId === undefined ? { request: parsed.request } : { request: parsed.request, requestId: parsed.requestId };
}

export function parseLegacyBatch(body: unknown, opts: { pathNamespace?: string } = {}): LegacyBatchRequest {
  if (!isPlainObject(body)) throw invalidField('body', 'must be an object');
  let namespaceKey = optionalString(body, 'namespaceKey') ?? '';
  if (opts.pathNamespace !== undefined) {
    if (namespaceKey !== '' && namespaceKey !== opts.pathNamespace) {
      throw invalidField('namespaceKey', `"${namespaceKey}" does not match the path's namespace "${opts.pathNamespace}"`);
    }
    namespaceKey = opts.pathNamespace;
  }
  if (namespaceKey === '') namespaceKey = 'default';
  const requestId = optionalString(body, 'requestId');
  if (field(body, 'reference') !== undefined) throw invalidField('reference', NO_REFERENCE);
  const exclude = field(body, 'excludeNotFound') ?? false;
  if (typeof exclude !== 'boolean') throw invalidField('excludeNotFound', 'must be a boolean');
  const raw = field(body, 'requests') ?? [];
  if (!Array.isArray(raw)) throw invalidField('requests', 'must be an array');

  const requests = raw.map((item, i) => {
    const parsed = parseLegacyEvaluation(item, { prefix: `requests[${i}].` });
    const own = parsed.request.namespaceKey;
    if (own !== '' && own !== namespaceKey) throw invalidField('namespace_key', 'must be the same for all requests if specified');
    return { ...parsed, request: { ...parsed.request, namespaceKey } };
  });
  return { requests, excludeNotFound: exclude, namespaceKey, ...(requestId !== undefined ? { requestId } : {}) };
}

