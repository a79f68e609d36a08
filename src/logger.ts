/**
 * The process logger: pino, JSON lines by default (`log.encoding: json`), or human-readable lines
 * (`console`) through pino-pretty used in-process (no worker thread), so output written to a given
 * destination can be read back synchronously. Known secret fields are replaced by "[REDACTED]".
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { LogLevel } from './config/types.js';

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
];

export function createLogger(opts: CreateLoggerOptions): Logger {
  const out = opts.destination ?? (opts.encoding === 'console' ? process.stdout : pino.destination({ dest: 1, sync: true }));
  const options = {
    level: opts.level,
    redact: { paths: [...REDACTED_PATHS], censor: '[REDACTED]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (opts.encoding === 'json') return pino(options, out as DestinationStream);

  const colorize = opts.destination === undefined && process.stdout.isTTY === true;
  const prettify = prettyFactory({ colorize, ignore: 'pid,hostname', translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l' });
  const pretty: DestinationStream = { write: (line: string) => void out.write(prettify(line)) };
  return pino(options, pretty);
}
