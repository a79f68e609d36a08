/**
 * Reads a JSON request body. Any content type is accepted (Flipt's Node SDK sends none, curl -d
 * sends a form type); the bytes must be UTF-8 JSON. An empty body reads as `{}`, as grpc-gateway
 * treats an empty body as an empty message.
 */
import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { Code, VexilError } from '../errors.js';
import { toVexilError } from './errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_JSON_DEPTH = 64;
/**
 * After refusing an oversized body, up to this many more bytes are read and discarded so the
 * client, still sending, gets to read the 413; beyond it the connection is closed.
 */
export const MAX_DISCARD_BYTES = 8 * 1024 * 1024;

const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);

export interface ReadJsonOptions {
  limit?: number;
  maxDepth?: number;
}

/** Returns the parsed top-level JSON object of the request body. */
export async function readJsonObject(req: IncomingMessage, opts: ReadJsonOptions = {}): Promise<Record<string, unknown>> {
  return asJsonObject(await readJson(req, opts));
}

/** The body's value as a top-level JSON object, or the error every JSON endpoint answers. */
export function asJsonObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new VexilError(Code.InvalidArgument, 'request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

export async function readJson(req: IncomingMessage, opts: ReadJsonOptions = {}): Promise<unknown> {
  const limit = opts.limit ?? MAX_BODY_BYTES;
  checkContentHeaders(req);
  let bytes: Buffer;
  try {
    const length = req.headers['content-length'];
    bytes = await getRawBody(req, { limit, ...(length !== undefined ? { length } : {}) });
  } catch (err) {
    const e = toVexilError(err);
    // The rest of an unread body would otherwise be parsed as the next request on this connection.
    const drained = await discardRest(req, MAX_DISCARD_BYTES);
    if (drained) throw e;
    throw new VexilError(e.code, e.message, {
      details: [...e.details],
      ...(e.httpStatus !== undefined ? { httpStatus: e.httpStatus } : {}),
      headers: { ...(e.headers ?? {}), Connection: 'close' },
      cause: err,
    });
  }
  return parseJsonText(decodeUtf8(bytes), opts.maxDepth ?? MAX_JSON_DEPTH);
}

/**
 * Reads and drops what is left of the request body. True when it ended within `cap` bytes
 * (the connection can be reused); false when it did not, or the request is already gone.
 */
function discardRest(req: IncomingMessage, cap: number): Promise<boolean> {
  if (req.readableEnded) return Promise.resolve(true);
  if (req.destroyed) return Promise.resolve(false);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > cap) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = 0;
    const done = (ok: boolean) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFail);
      req.off('close', onClose);
      if (!ok) req.pause();
      resolve(ok);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > cap) done(false);
    };
    const onEnd = () => done(true);
    const onFail = () => done(false);
    const onClose = () => done(req.readableEnded);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFail);
    req.on('close', onClose);
    req.resume();
  });
}

function checkContentHeaders(req: IncomingMessage): void {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity' && encoding.trim() !== '') {
    throw new VexilError(Code.InvalidArgument, `unsupported content encoding "${encoding}"`, { httpStatus: 415 });
  }
  const type = req.headers['content-type'];
  if (type === undefined) return;
  const m = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(type);
  if (m && !UTF8_CHARSETS.has(m[1]!.toLowerCase())) {
    throw new VexilError(Code.InvalidArgument, `unsupported charset "${m[1]}": bodies must be UTF-8`, { httpStatus: 415 });
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new VexilError(Code.InvalidArgument, 'request body is not valid UTF-8');
  }
}

/**
 * Parses JSON text after checking its nesting depth: JSON.parse itself copes with deep nesting,
 * but everything that walks the result recursively afterwards would not.
 */
export function parseJsonText(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (text.trim() === '') return {};
  if (jsonDepthExceeds(text, maxDepth)) throw new VexilError(Code.InvalidArgument, `malformed JSON body: nesting deeper than ${maxDepth} levels`);
  try {
    return JSON.parse(text);
  } catch (err) {
    const reason = err instanceof SyntaxError ? err.message : 'invalid JSON';
    throw new VexilError(Code.InvalidArgument, `malformed JSON body: ${reason}`);
  }
}

/** True when brackets outside strings nest deeper than `max`. Linear, no recursion. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}
