/**
 * The process logger: pino, JSON lines by default (`log.encoding: json`), or human-readable lines
 * (`console`) through pino-pretty used in-process (no worker thread), so output written to a given
 * destination can be read back synchronously. Known secret fields are replaced by "[REDACTED]".
 *
 * Request lines (one per HTTP request, the bulk of the output under load) take a cheaper road,
 * `writeFixedLine`: the caller hands over the fields already serialised (a fixed shape whose fields
 * can never hold a secret, so there is nothing to redact), and on standard output the lines of
 * one event-loop turn are written together at its end (`BufferedLineDestination`) instead of one
 * `write` per line, and under load at most one write per millisecond; on exit nothing buffered is
 * lost. Every other line is written at once, as
 * before, after any buffered request lines.
 */
import { fstatSync, writeSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { LogLevel } from './config/types.js';
import { isoTimestamp } from './http/clock.js';
import { quote } from './http/json-text.js';

export type { Logger } from 'pino';

export interface CreateLoggerOptions {
  level: LogLevel;
  encoding: 'json' | 'console';
  /** Where lines go (default: standard output). Anything with `write(string)`. */
  destination?: DestinationStream | NodeJS.WritableStream;
}

/**
 * Paths replaced in every log line. `client_token` is deliberately absent: the bootstrap token
 * is written to the log once, on purpose, so an operator can read it (Flipt does the same).
 * Wildcards cover one level (`*.token` is `x.token`, not `x.y.token`), so the resolved config's
 * deep secrets are listed when logged under `config`.
 */
export const REDACTED_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'client_secret',
  '*.client_secret',
  'password',
  '*.password',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'config.authentication.session.csrf.key',
  'config.authentication.methods.token.bootstrap.token',
  'config.authentication.methods.oidc.providers.*.client_secret',
  'config.authentication.methods.code_host.client_secret',
  'config.webhooks.*.secret',
  'config.webhooks.*.token',
  'req.headers["x-gitlab-token"]',
  'headers["x-gitlab-token"]',
];

/**
 * A batch to a pipe: at most PIPE_BUF (4096) bytes, so a write is never interleaved with another
 * writer's (cluster workers share one stdout). Counted in UTF-16 units: request lines encode to
 * at most 2 bytes per unit (their only non-ASCII text can be the URL, which Node decodes as latin1).
 */
const PIPE_BATCH_CHARS = 2048;
/** To a regular file every write is whole (the kernel serialises writers sharing the offset). */
const FILE_BATCH_CHARS = 64 * 1024;

/**
 * Deferred lines wait at least this long after the previous write: a busy server answers a few
 * requests per event-loop turn, and a write per turn showed in the request profile (about 1 µs
 * per request); one write per millisecond carries dozens of lines.
 */
const MIN_WRITE_INTERVAL_MS = 1;

export interface BufferedLineDestinationOptions {
  /** File descriptor to write to (default 1, standard output). */
  fd?: number;
  /** Batch size in UTF-16 units (default 64 Ki to a regular file, else 2048). */
  batchChars?: number;
  /** Least time between a write and the next deferred batch (default 1 ms). */
  minWriteIntervalMs?: number;
}

const live = new Set<BufferedLineDestination>();
let exitHookInstalled = false;

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A synchronous line destination that can also hold lines back for a moment. `write` (what pino
 * calls) writes at once, after whatever is buffered, so ordinary lines appear exactly as soon as
 * with a plain synchronous destination. `writeDeferred` (request lines) keeps the line until the
 * end of the current event-loop turn (`setImmediate`), or, when the last write was less than
 * `minWriteIntervalMs` ago, until that much time has passed (a timer), so the lines of all
 * requests answered meanwhile go out in one write; earlier when the batch is full, on
 * `flushSync()`, and on process exit (including `process.exit()` and an uncaught exception). A
 * batch holds whole lines and at most `batchChars` (a longer line goes on its own). An idle server
 * writes each request's line right after answering it; a busy one writes at most one batch per
 * interval instead of one line per request.
 */
export class BufferedLineDestination implements DestinationStream {
  readonly #fd: number;
  readonly #batchChars: number;
  readonly #minIntervalMs: number;
  #lines: string[] = [];
  #chars = 0;
  /** The pending flush of deferred lines, when one is scheduled. */
  #immediate: NodeJS.Immediate | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** performance.now() of the last write. */
  #lastWriteAt = Number.NEGATIVE_INFINITY;
  #broken = false;

  constructor(opts: BufferedLineDestinationOptions = {}) {
    this.#fd = opts.fd ?? 1;
    this.#batchChars = Math.max(1, opts.batchChars ?? (isRegularFile(this.#fd) ? FILE_BATCH_CHARS : PIPE_BATCH_CHARS));
    this.#minIntervalMs = Math.max(0, opts.minWriteIntervalMs ?? MIN_WRITE_INTERVAL_MS);
    live.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', () => {
        for (const d of live) d.flushSync();
      });
    }
  }

  /** Writes the line now (after anything buffered). */
  write(line: string): boolean {
    if (this.#chars + line.length > this.#batchChars) {
      this.flushSync();
      this.#writeAll(line);
    } else {
      this.#lines.push(line);
      this.#chars += line.length;
      this.flushSync();
    }
    return true;
  }

  /** Buffers the line; it is written with the batch of this event-loop turn. */
  writeDeferred(line: string): void {
    if (this.#chars + line.length > this.#batchChars) {
      this.flushSync();
      if (line.length > this.#batchChars) {
        this.#writeAll(line);
        return;
      }
    }
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#immediate === undefined && this.#timer === undefined) this.#schedule();
  }

  #schedule(): void {
    const wait = this.#lastWriteAt + this.#minIntervalMs - performance.now();
    if (wait <= 0) {
      this.#immediate = setImmediate(this.#onTurnEnd);
    } else {
      // Unreferenced: a pending batch never keeps the process alive (exit writes it).
      this.#timer = setTimeout(this.#onTurnEnd, Math.ceil(wait));
      this.#timer.unref();
    }
  }

  /** UTF-16 units waiting in the buffer. */
  get pendingChars(): number {
    return this.#chars;
  }

  readonly #onTurnEnd = (): void => {
    this.#immediate = undefined;
    this.#timer = undefined;
    this.flushSync();
  };

  flushSync(): void {
    if (this.#chars === 0) return;
    const text = this.#lines.length === 1 ? this.#lines[0]! : this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    this.#writeAll(text);
  }

  #writeAll(text: string): void {
    this.#lastWriteAt = performance.now();
    let data: Buffer | undefined;
    let offset = 0;
    while (!this.#broken) {
      try {
        if (data === undefined) {
          const n = writeSync(this.#fd, text);
          // Short writes are rare (a signal, a nearly full pipe): go on from the bytes.
          if (n === Buffer.byteLength(text)) return;
          data = Buffer.from(text, 'utf8');
          offset = n;
        } else {
          offset += writeSync(this.#fd, data, offset, data.length - offset);
          if (offset >= data.length) return;
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // A full non-blocking pipe: wait for the reader, as pino's synchronous destination does.
        if (code === 'EAGAIN' || code === 'EBUSY') sleepMs(10);
        // Nobody reads standard output any more: drop log output rather than crash the server.
        else if (code === 'EPIPE') this.#broken = true;
        else throw err;
      }
    }
  }

  /** pino's `logger.flush(cb)`. */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }

  /** Writes what is buffered and stops flushing this destination on exit. */
  end(): void {
    this.flushSync();
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#immediate = undefined;
    this.#timer = undefined;
    live.delete(this);
  }
}

/** How a logger made by createLogger writes a preformatted line: deferred when it can be. */
const FIXED_LINE = Symbol('vexil.fixedLine');

interface FixedLineSink {
  write(line: string): void;
}

type Level = 'info' | 'warn' | 'error';

/**
 * Writes `{"level":…,"time":…,<the logger's bindings>,<fields>,"msg":<msg>}` exactly as pino
 * would for `logger[level](object, msg)` with this module's options, without pino's generic
 * serialisation and redaction. `fields` is the object's members already serialised (`"a":1,"b":"x"`)
 * and must not hold anything that REDACTED_PATHS would replace. Returns false (and writes nothing)
 * when the logger was not made by createLogger; the caller then logs the ordinary way.
 */
export function writeFixedLine(logger: Logger, level: Level, fields: string, msg: string): boolean {
  const sink = (logger as unknown as Record<symbol, FixedLineSink | undefined>)[FIXED_LINE];
  if (sink === undefined) return false;
  if (!logger.isLevelEnabled(level)) return true;
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  sink.write(`{"level":"${level}","time":"${isoTimestamp()}"${bindings},${fields},"msg":${quote(msg)}}\n`);
  return true;
}

/**
 * writeFixedLine for one level and message in pieces, with the sink looked up once, for callers
 * that cache their own parts of the line: a line is `head() + <fields> + tail`, handed to `write`.
 * The writer checks nothing: the caller checks the level first.
 */
export interface FixedLineWriter {
  /**
   * `{"level":…,"time":"<now>"<the logger's bindings>,`: the same string object for as long as
   * the time text (milliseconds) and the bindings are unchanged, so callers can cache on it.
   */
  head(): string;
  /** `,"msg":<msg>}` and the newline. */
  readonly tail: string;
  write(line: string): void;
}

/** A FixedLineWriter for the logger, or undefined when it was not made by createLogger. */
export function fixedLineWriter(logger: Logger, level: Level, msg: string): FixedLineWriter | undefined {
  const sink = (logger as unknown as Record<symbol, FixedLineSink | undefined>)[FIXED_LINE];
  if (sink === undefined) return undefined;
  const levelPart = `{"level":"${level}","time":"`;
  const holder = logger as unknown as Record<symbol, string>;
  const chindingsSym = pino.symbols.chindingsSym;
  let lastTime = '';
  let lastBindings = '';
  let head = '';
  return {
    head() {
      const time = isoTimestamp();
      const bindings = holder[chindingsSym] ?? '';
      if (time !== lastTime || bindings !== lastBindings || head === '') {
        lastTime = time;
        lastBindings = bindings;
        head = `${levelPart}${time}"${bindings},`;
      }
      return head;
    },
    tail: `,"msg":${quote(msg)}}\n`,
    write: (line) => sink.write(line),
  };
}

export function createLogger(opts: CreateLoggerOptions): Logger {
  const buffered = opts.destination === undefined && opts.encoding === 'json' ? new BufferedLineDestination({ fd: 1 }) : undefined;
  const out = opts.destination ?? buffered ?? process.stdout;
  const options = {
    level: opts.level,
    redact: { paths: [...REDACTED_PATHS], censor: '[REDACTED]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  let logger: Logger;
  let sink: FixedLineSink;
  if (opts.encoding === 'json') {
    logger = pino(options, out as DestinationStream);
    sink = buffered !== undefined ? { write: (line) => buffered.writeDeferred(line) } : { write: (line) => void out.write(line) };
  } else {
    const colorize = opts.destination === undefined && process.stdout.isTTY === true;
    const prettify = prettyFactory({ colorize, ignore: 'pid,hostname', translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l' });
    const pretty: DestinationStream = { write: (line: string) => void out.write(prettify(line)) };
    logger = pino(options, pretty);
    sink = pretty;
  }
  // Children are created with Object.create(parent), so they inherit the sink.
  Object.defineProperty(logger, FIXED_LINE, { value: sink, enumerable: false });
  return logger;
}
