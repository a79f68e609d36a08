/**
 * `vexil evaluate --flag KEY --entity ID [--namespace NS] [--context k=v ...] [--dir PATH]
 * [--reference REF] [--format text|json]`: evaluates one flag against the state files on disk,
 * loaded exactly as `vexil serve` loads them, without a server.
 *
 * `json` prints the body the HTTP API returns for the flag's type (variant or boolean, chosen by the
 * flag, as batch evaluation does), or its error body; `text` prints the result, the decision and
 * the explain trace. Exit 0 evaluated, 1 evaluation error or invalid state, 2 usage error.
 */
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { chosenFormat, parseCommandArgs } from './command-args.js';
import { notFound, VexilError } from '../errors.js';
import { evaluateBoolean, evaluateVariant, findFlag } from '../evaluation/index.js';
import { explain } from '../evaluation/explain.js';
import type { BooleanResult, VariantResult } from '../model/evaluation-result.js';
import type { EvaluationRequest } from '../model/evaluation-request.js';
import { serializeErrorBody, toErrorResponse } from '../server/pipeline/errors.js';
import { LOCAL_REFERENCE } from '../sources/local.js';
import { countSummary, formatText } from './format-problems.js';
import { formatDecision, formatResult, formatTrace } from '../evaluation/explain-words.js';
import type { CliIO } from './io.js';
import { loadLocalState, problemLines } from './local-state.js';
import { EVALUATE_USAGE, UsageError } from './usage.js';

const FORMATS = ['text', 'json'] as const;
type EvaluateFormat = (typeof FORMATS)[number];

export async function runEvaluate(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs(
    {
      args: [...args],
      options: {
        flag: { type: 'string' },
        entity: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        context: { type: 'string', short: 'c', multiple: true },
        dir: { type: 'string', short: 'd' },
        reference: { type: 'string', short: 'r' },
        format: { type: 'string', short: 'f', default: 'text' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
      strict: true,
    },
    EVALUATE_USAGE,
  );
  const v = parsed.values;
  if (v.help) {
    io.stdout(EVALUATE_USAGE);
    return 0;
  }
  const format = chosenFormat(v.format, FORMATS, EVALUATE_USAGE);
  if (v.flag === undefined) throw new UsageError('missing --flag KEY', EVALUATE_USAGE);
  if (v.entity === undefined) throw new UsageError('missing --entity ID', EVALUATE_USAGE);
  const context = parseContext(v.context ?? []);
  const dir = v.dir ?? '.';
  const st = await stat(resolve(io.cwd, dir)).catch(() => undefined);
  if (st === undefined || !st.isDirectory()) throw new UsageError(`no such folder: ${dir}`, EVALUATE_USAGE);

  const request: EvaluationRequest = { namespaceKey: v.namespace ?? '', flagKey: v.flag, entityId: v.entity, context };
  const fail = (err: unknown): number => {
    if (format === 'json') io.stdout(`${serializeErrorBody(toErrorResponse(err).body)}\n`);
    else io.stderr(`vexil: ${toErrorResponse(err).body.message}\n`);
    return 1;
  };

  // As the API: "" means the default reference; the local folder has only `local`.
  if (v.reference !== undefined && v.reference !== '' && v.reference !== LOCAL_REFERENCE) {
    return fail(notFound(`reference "${v.reference}" not found`));
  }

  const state = await loadLocalState(dir, io.cwd);
  const snapshot = state.snapshot;
  if (state.problems.length > 0) {
    if (snapshot === undefined) io.stderr(`vexil: the state in ${state.display} is invalid (${countSummary(state.problems)})\n`);
    const lines = await problemLines(state, state.problems);
    io.stderr(formatText(state.problems, (f) => lines.get(f)));
  }
  if (snapshot === undefined) return 1;

  const requestId = randomUUID();
  const started = process.hrtime.bigint();
  let variant: VariantResult | undefined;
  let boolean: BooleanResult | undefined;
  try {
    const flag = findFlag(snapshot, request.namespaceKey, request.flagKey);
    if (flag.compiled.variant !== null) variant = evaluateVariant(snapshot, request);
    else boolean = evaluateBoolean(snapshot, request);
  } catch (err) {
    if (err instanceof VexilError) return fail(err);
    throw err;
  }
  const requestDurationMillis = Number(process.hrtime.bigint() - started) / 1e6;
  const timestamp = new Date().toISOString();

  if (format === 'json') {
    // Field order and content as the HTTP API writes them (server/evaluation/evaluation-bodies.ts).
    const body =
      variant !== undefined
        ? {
            match: variant.match,
            segmentKeys: [...variant.segmentKeys],
            reason: variant.reason,
            variantKey: variant.variantKey,
            variantAttachment: variant.variantAttachment,
            requestId,
            requestDurationMillis,
            timestamp,
            flagKey: request.flagKey,
          }
        : {
            enabled: boolean!.enabled,
            reason: boolean!.reason,
            requestId,
            requestDurationMillis,
            timestamp,
            flagKey: boolean!.flagKey,
            segmentKeys: [...boolean!.segmentKeys],
          };
    io.stdout(`${JSON.stringify(body)}\n`);
    return 0;
  }

  const explanation = explain(snapshot, request);
  const kind = explanation.flagType === 'VARIANT_FLAG_TYPE' ? 'variant flag' : 'boolean flag';
  let out = `${explanation.namespaceKey}/${explanation.flagKey} (${kind}) for entity ${JSON.stringify(request.entityId)}\n`;
  const keys = Object.keys(context);
  if (keys.length > 0) out += `context: ${keys.map((k) => `${k}=${JSON.stringify(context[k])}`).join(' ')}\n`;
  out += `result: ${formatResult(explanation)}\n`;
  if (variant !== undefined && variant.variantKey !== '' && variant.variantAttachment !== 'null' && variant.variantAttachment !== '') {
    out += `attachment: ${variant.variantAttachment}\n`;
  }
  out += `why: ${formatDecision(explanation)}\n\ntrace:\n`;
  for (const line of formatTrace(explanation)) out += `  ${line}\n`;
  io.stdout(out);
  return 0;
}

/** `--context k=v` (repeatable; the value may hold `=` or be empty; a repeated key keeps the last value). */
function parseContext(items: readonly string[]): Record<string, string> {
  // Null prototype, as the server builds it: `constructor` must read as absent.
  const context = Object.create(null) as Record<string, string>;
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--context "${item}" is not KEY=VALUE`, EVALUATE_USAGE);
    context[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return context;
}
