/**
 * A client of vexil's live-update streams for tests: opens one long-lived GET on its own
 * connection and parses what arrives as it arrives, as Server-Sent Events (events and comments,
 * WHATWG HTML §9.2.6) or as NDJSON lines. Tests wait on conditions over what arrived (`until`),
 * never on time. Parsing is incremental, so streams of many large documents stay linear.
 */
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

export interface SseEvent {
  /** `event:` (default `message`). */
  readonly event: string;
  readonly id: string | undefined;
  readonly data: string;
}

export type StreamEnd = 'end' | 'error';

export class StreamClient {
  /** SSE: the events received, in order. */
  readonly events: SseEvent[] = [];
  /** SSE: the comment lines received, without the colon (`connected`, `heartbeat`). */
  readonly comments: string[] = [];
  /** NDJSON: each complete line as received (leading heartbeat spaces included). */
  readonly rawLines: string[] = [];
  /** Bytes received. */
  bytes = 0;
  /** How the response finished, once it did. */
  ending: StreamEnd | undefined;
  /** Text received and not yet parsed (an incomplete block or line). */
  private pending = '';
  private readonly waiters = new Set<{ check: () => boolean; resolve: () => void; reject: (err: Error) => void; what: string }>();
  private readonly finished: Promise<StreamEnd>;

  private constructor(
    readonly protocol: 'sse' | 'ndjson',
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    readonly res: IncomingMessage,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.bytes += Buffer.byteLength(chunk);
      this.pending += chunk;
      this.parse();
      this.settle();
    });
    this.finished = new Promise((resolve) => {
      const finish = (how: StreamEnd) => {
        if (this.ending !== undefined) return;
        this.ending = how;
        this.settle();
        resolve(how);
      };
      res.on('end', () => finish('end'));
      res.on('error', () => finish('error'));
      res.on('close', () => finish(res.complete ? 'end' : 'error'));
    });
  }

  /** GET `url` (a full URL); resolves once the response head arrived. */
  static open(protocol: 'sse' | 'ndjson', url: string, headers: Record<string, string> = {}): Promise<StreamClient> {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, headers, agent: false }, (res) =>
        resolve(new StreamClient(protocol, res.statusCode ?? 0, res.headers, res)),
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** NDJSON: the complete lines, parsed as JSON (a line that is not JSON throws, as it would in Flipt's engine). */
  lines(): unknown[] {
    return this.rawLines.map((l) => JSON.parse(l) as unknown);
  }

  /** The text not yet parsed (the start of an incomplete frame, or heartbeat spaces). */
  get unparsed(): string {
    return this.pending;
  }

  /** Resolves when `check()` holds (looked at after every chunk); rejects if the stream ends first. */
  until(check: () => boolean, what = 'condition'): Promise<void> {
    if (check()) return Promise.resolve();
    if (this.ending !== undefined) return Promise.reject(new Error(`stream ended (${this.ending}) before: ${what}`));
    return new Promise((resolve, reject) => this.waiters.add({ check, resolve, reject, what }));
  }

  /** Resolves with how the response ended. */
  ended(): Promise<StreamEnd> {
    return this.finished;
  }

  /** Hangs up. */
  close(): void {
    this.res.destroy();
  }

  private parse(): void {
    const separator = this.protocol === 'sse' ? '\n\n' : '\n';
    let start = 0;
    for (let end = this.pending.indexOf(separator); end !== -1; end = this.pending.indexOf(separator, start)) {
      const frame = this.pending.slice(start, end);
      start = end + separator.length;
      if (this.protocol === 'ndjson') this.rawLines.push(frame);
      else this.block(frame);
    }
    this.pending = this.pending.slice(start);
  }

  private block(block: string): void {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    let fields = 0;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      if (line === '') continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      fields++;
      if (field === 'event') event = value;
      else if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
    }
    if (fields > 0) this.events.push({ event, id, data: data.join('\n') });
  }

  private settle(): void {
    for (const w of this.waiters) {
      let ok = false;
      try {
        ok = w.check();
      } catch (err) {
        this.waiters.delete(w);
        w.reject(err as Error);
        continue;
      }
      if (ok) {
        this.waiters.delete(w);
        w.resolve();
      } else if (this.ending !== undefined) {
        this.waiters.delete(w);
        w.reject(new Error(`stream ended (${this.ending}) before: ${w.what}`));
      }
    }
  }
}
