/**
 * An OTLP/HTTP trace receiver on loopback for the tracing tests: it accepts `POST /v1/traces` as
 * a collector does and decodes what it gets, JSON (the proto3 JSON mapping: camelCase fields, hex
 * ids) or protobuf, gzip or not, into plain span records the tests assert on. Protobuf is decoded
 * with protobufjs (a devDependency) from the part of opentelemetry-proto's published
 * `trace/v1/trace.proto` and `common/v1/common.proto` that spans use, written out below with the
 * published field numbers (the OTel JS packages ship serializers only, no decoder).
 *
 * `down()` makes it answer 503 to every export (a collector refusing work); `close()` frees the port
 * (a collector out of reach).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

const TRACE_PROTO = `syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; fixed32 flags = 16;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12;
  repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
  ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }`;

const ExportRequest = protobuf.parse(TRACE_PROTO).root.lookupType('ExportTraceServiceRequest');

export type AttributeValue = string | number | boolean | AttributeValue[] | undefined;
export type Attributes = Record<string, AttributeValue>;

export interface ReceivedSpan {
  readonly name: string;
  /** 1 internal, 2 server, 3 client (OTLP's SpanKind). */
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Attributes;
  readonly events: ReadonlyArray<{ name: string; attributes: Attributes }>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly scope: string | undefined;
  readonly resource: Attributes;
  readonly encoding: 'json' | 'protobuf';
  /** The export request was gzip-compressed. */
  readonly gzip: boolean;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:PORT (the collector's base URL; spans are posted to /v1/traces). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received (answered or refused). */
  readonly requests: number;
  /** Resolves once `count` spans matching `match` have arrived. */
  waitFor(match: (s: ReceivedSpan) => boolean, count?: number): Promise<ReceivedSpan[]>;
  /** Answer 503 from now on. */
  down(): void;
  close(): Promise<void>;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
function value(v: any): AttributeValue {
  if (v == null) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(kvs: any[] | undefined): Attributes {
  return Object.fromEntries((kvs ?? []).map((kv) => [kv.key, value(kv.value)]));
}

function hex(id: unknown): string | undefined {
  if (id == null) return undefined;
  const text = typeof id === 'string' ? id : Buffer.from(id as Uint8Array).toString('hex');
  return text === '' ? undefined : text;
}

function decode(req: IncomingMessage, body: Buffer): { message: any; encoding: 'json' | 'protobuf' } {
  if (isGzip(req)) body = gunzipSync(body);
  const json = (req.headers['content-type'] ?? '').includes('json');
  if (json) return { message: JSON.parse(body.toString('utf8')), encoding: 'json' };
  return { message: ExportRequest.toObject(ExportRequest.decode(body), { longs: String }), encoding: 'protobuf' };
}

function isGzip(req: IncomingMessage): boolean {
  return req.headers['content-encoding'] === 'gzip';
}

function spansOf(message: any, encoding: 'json' | 'protobuf', gzip: boolean): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of message.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          name: s.name,
          kind: Number(s.kind ?? 0),
          traceId: hex(s.traceId)!,
          spanId: hex(s.spanId)!,
          parentSpanId: hex(s.parentSpanId),
          attributes: attributes(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: attributes(e.attributes) })),
          statusCode: Number(s.status?.code ?? 0),
          scope: ss.scope?.name,
          resource,
          encoding,
          gzip,
        });
      }
    }
  }
  return out;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const waiters: Array<() => void> = [];
  let requests = 0;
  let refusing = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      if (refusing) {
        res.writeHead(503).end();
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const { message, encoding } = decode(req, Buffer.concat(chunks));
      spans.push(...spansOf(message, encoding, isGzip(req)));
      for (const w of waiters.splice(0)) w();
      // An empty ExportTraceServiceResponse: every span accepted.
      if (encoding === 'json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    get requests() {
      return requests;
    },
    async waitFor(match, count = 1) {
      for (;;) {
        const found = spans.filter(match);
        if (found.length >= count) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    down() {
      refusing = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
