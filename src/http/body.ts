/**
 * Reads a JSON request body. Any content type is accepted (Flipt's Node SDK sends none, curl -d
 * sends a form type); the bytes must be UTF-8 JSON. An empty body reads as `{}`, as grpc-gateway
 * treats an empty body as an empty message.
 */
import { isAscii } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { Code, VexilError, toVexilError } from '../errors.js';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from './limits.js';

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

export function readJson(req: IncomingMessage, opts: ReadJsonOptions = {}): Promise<unknown> {
  return new Promise((resolve, reject) => readJsonWith(req, { onJson: resolve, onJsonError: reject }, opts));
}

/** Where readJsonWith delivers: exactly one of the two is called, once. */
export interface JsonSink {
  onJson(value: unknown): void;
  onJsonError(err: unknown): void;
}

/**
 * readJson with callbacks: `sink.onJson` gets what readJson would resolve with, or
 * `sink.onJsonError` what it would reject with. The evaluation fast path uses it to stay free of
 * promises (and of per-request closures) when it can.
 */
export function readJsonWith(req: IncomingMessage, sink: JsonSink, opts: ReadJsonOptions = {}): void {
  const limit = opts.limit ?? MAX_BODY_BYTES;
  try {
    checkContentHeaders(req);
  } catch (err) {
    sink.onJsonError(err);
    return;
  }
  readBody(req, new BodyRead(sink, limit, opts.maxDepth ?? MAX_JSON_DEPTH));
}

/**
 * One body being read: its state and where the result goes. The stream listeners are shared
 * functions that find it on the request (`this` is the request when an emitter calls them), so a
 * read allocates this object and nothing else per request.
 */
class BodyRead {
  first: Buffer | undefined = undefined;
  more: Buffer[] | undefined = undefined;
  received = 0;
  complete = false;
  /** The declared Content-Length, NaN when there is none. */
  declared = Number.NaN;

  constructor(
    readonly sink: JsonSink,
    readonly limit: number,
    readonly maxDepth: number,
  ) {}

  /** The whole body arrived: parse it and deliver. */
  done(bytes: Buffer): void {
    let value: unknown;
    try {
      value = parseJsonText(decodeUtf8(bytes), this.maxDepth);
    } catch (err) {
      this.sink.onJsonError(err);
      return;
    }
    this.sink.onJson(value);
  }
}

/** A read that delivers the bytes as they came (`sink.onJson` gets the Buffer): signed bodies are verified before parsing. */
class RawBodyRead extends BodyRead {
  override done(bytes: Buffer): void {
    this.sink.onJson(bytes);
  }
}

/**
 * The request body's bytes, unparsed, with the same checks as readJson: a declared or received
 * length over `limit` is 413 (checked from Content-Length before reading, and counted while
 * reading), a length that differs from Content-Length is refused, encodings other than identity 415.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    try {
      checkContentHeaders(req);
    } catch (err) {
      reject(err);
      return;
    }
    readBody(req, new RawBodyRead({ onJson: (bytes) => resolve(bytes as Buffer), onJsonError: reject }, limit, 0));
  });
}

const BODY_READ = Symbol('vexil.bodyRead');
type ReadingRequest = IncomingMessage & { [BODY_READ]?: BodyRead };

/** The error to answer after a failed read, once the rest of the body is dealt with. */
async function failedRead(req: IncomingMessage, err: unknown): Promise<VexilError> {
  const e = toVexilError(err);
  // The rest of an unread body would otherwise be parsed as the next request on this connection.
  const drained = await discardRest(req, MAX_DISCARD_BYTES);
  if (drained) return e;
  return new VexilError(e.code, e.message, {
    details: [...e.details],
    ...(e.httpStatus !== undefined ? { httpStatus: e.httpStatus } : {}),
    headers: { ...(e.headers ?? {}), Connection: 'close' },
    cause: err,
  });
}

function tooLarge(limit: number): VexilError {
  return new VexilError(Code.ResourceExhausted, `request body exceeds ${limit} bytes`, { httpStatus: 413 });
}

/**
 * The body's bytes, with the checks raw-body made (and the same errors, as server/pipeline/errors.ts
 * maps them): a declared or received length over the limit is 413 (the stream is left paused,
 * for discardRest), an upload that stops early is "request aborted", and a body whose length
 * differs from Content-Length is refused. Written out here because raw-body's promise, option parsing and
 * listener bookkeeping showed in the evaluation profile, where bodies are a hundred bytes.
 */
function readBody(req: ReadingRequest, read: BodyRead): void {
  const declared = req.headers['content-length'];
  read.declared = declared !== undefined ? Number.parseInt(declared, 10) : Number.NaN;
  if (read.declared > read.limit) return failRead(req, read, tooLarge(read.limit), false);
  if (!req.readable) return failRead(req, read, new VexilError(Code.Internal, 'stream is not readable'), false);
  req[BODY_READ] = read;
  // On success the listeners stay: the request has ended, they ignore anything later (and an
  // 'error' after the end is still handled), and removing them cost more than the read itself.
  // An upload cut short arrives as 'error' (Node emits it, after 'aborted', when there is a
  // listener), so no 'aborted' listener is needed.
  req.on('data', onBodyData);
  req.on('end', onBodyEnd);
  req.on('error', onBodyEnd);
}

function failRead(req: ReadingRequest, read: BodyRead, err: unknown, listening = true): void {
  read.complete = true;
  if (listening) {
    req.off('data', onBodyData);
    req.off('end', onBodyEnd);
    req.off('error', onBodyEnd);
    req.unpipe();
    req.pause();
  }
  failedRead(req, err).then(
    (e) => read.sink.onJsonError(e),
    (e: unknown) => read.sink.onJsonError(e),
  );
}

function onBodyData(this: ReadingRequest, chunk: Buffer): void {
  const read = this[BODY_READ];
  if (read === undefined || read.complete) return;
  read.received += chunk.length;
  if (read.received > read.limit) failRead(this, read, tooLarge(read.limit));
  else if (read.first === undefined) read.first = chunk;
  else (read.more ??= [read.first]).push(chunk);
}

function onBodyEnd(this: ReadingRequest, err?: unknown): void {
  const read = this[BODY_READ];
  if (read === undefined || read.complete) return;
  if (err !== undefined) return failRead(this, read, this.aborted ? new VexilError(Code.InvalidArgument, 'request aborted') : err);
  if (!Number.isNaN(read.declared) && read.received !== read.declared) {
    return failRead(this, read, new VexilError(Code.InvalidArgument, 'request size did not match content length'));
  }
  read.complete = true;
  read.done(read.more !== undefined ? Buffer.concat(read.more, read.received) : (read.first ?? Buffer.alloc(0)));
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
  // A charset is a parameter: no ';', nothing to check (the usual `application/json`).
  if (type === undefined || !type.includes(';')) return;
  const m = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(type);
  if (m && !UTF8_CHARSETS.has(m[1]!.toLowerCase())) {
    throw new VexilError(Code.InvalidArgument, `unsupported charset "${m[1]}": bodies must be UTF-8`, { httpStatus: 415 });
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Buffer): string {
  // ASCII (nearly every body) is the same text in latin1, which skips UTF-8 validation.
  if (isAscii(bytes)) return bytes.toString('latin1');
  try {
    return utf8.decode(bytes);
  } catch {
    throw new VexilError(Code.InvalidArgument, 'request body is not valid UTF-8');
  }
}

/** Bytes read by readRawBody, parsed as readJson would (UTF-8, depth checked; empty reads as `{}`). */
export function parseJsonBytes(bytes: Buffer, maxDepth = MAX_JSON_DEPTH): unknown {
  return parseJsonText(decodeUtf8(bytes), maxDepth);
}

/**
 * Parses JSON text after checking its nesting depth: JSON.parse itself copes with deep nesting,
 * but everything that walks the result recursively afterwards would not.
 */
export function parseJsonText(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  // Valid JSON nested deeper than maxDepth needs at least 2 * (maxDepth + 1) characters (every
  // level opens and closes), so a shorter text (a typical evaluation body) that parses needs no
  // depth scan. The order of the checks is unchanged: empty, then too deep, then syntax.
  if (text.length < 2 * (maxDepth + 1)) {
    try {
      return JSON.parse(text);
    } catch {
      // answered below, exactly as for a long text
    }
  }
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
