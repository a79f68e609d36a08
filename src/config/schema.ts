/**
 * The configuration schema (schemas/config.schema.json, the one source of truth) compiled once
 * with ajv, plus small helpers to walk it: the environment mapping and type conversion are both
 * driven by the schema's property names and types, so a key added to the schema needs no code.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { isDuration } from './duration.js';
import { CONFIG_SCHEMA_PATH } from './paths.js';

/** The subset of JSON Schema this file uses. */
export interface SchemaNode {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  enum?: unknown[];
  format?: string;
  default?: unknown;
  $ref?: string;
  [keyword: string]: unknown;
}

let cached: { schema: SchemaNode; validate: ValidateFunction } | undefined;
let parsed: SchemaNode | undefined;

/** The parsed schema alone, without compiling the validator (for readers of its defaults). */
export function configSchemaDocument(): SchemaNode {
  parsed ??= JSON.parse(readFileSync(CONFIG_SCHEMA_PATH, 'utf8')) as SchemaNode;
  return parsed;
}

/** The parsed schema and its compiled validator (ajv: all errors, defaults applied in place). */
export function configSchema(): { schema: SchemaNode; validate: ValidateFunction } {
  if (cached) return cached;
  // ajv's useDefaults writes into the data, never into the schema: the document can be shared.
  const schema = configSchemaDocument();
  // code.optimize off: the validator runs once per start, and ajv's optimising passes over the
  // generated code cost about 40 ms of every start (bench/RESULTS.md, "Load time back").
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, code: { optimize: false } });
  // Only `uri` from ajv-formats: its own `duration` is ISO 8601, ours is Go's.
  addFormats.default(ajv, ['uri']);
  ajv.addFormat('duration', { type: 'string', validate: (s: string) => isDuration(s) });
  cached = { schema, validate: ajv.compile(schema) };
  return cached;
}

/** Follows a local `#/definitions/...` reference; other nodes are returned as they are. */
export function deref(root: SchemaNode, node: SchemaNode): SchemaNode {
  let n = node;
  for (let hops = 0; n.$ref !== undefined && hops < 10; hops++) {
    const parts = n.$ref.replace(/^#\//, '').split('/');
    let target: unknown = root;
    for (const p of parts) target = (target as Record<string, unknown> | undefined)?.[p];
    if (target === undefined) throw new Error(`config schema: unresolved $ref ${n.$ref}`);
    n = target as SchemaNode;
  }
  return n;
}

/** The schema of the value at `path` (keys of objects and maps; indexes of arrays), if any. */
export function schemaAt(root: SchemaNode, path: readonly string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = root;
  for (const key of path) {
    if (node === undefined) return undefined;
    node = childSchema(root, node, key);
  }
  return node === undefined ? undefined : deref(root, node);
}

/** The schema of one child of an object, map or array node. */
export function childSchema(root: SchemaNode, parent: SchemaNode, key: string): SchemaNode | undefined {
  const p = deref(root, parent);
  if (p.type === 'array') return p.items ? deref(root, p.items) : undefined;
  const named = p.properties?.[key];
  if (named) return deref(root, named);
  if (typeof p.additionalProperties === 'object') return deref(root, p.additionalProperties);
  return undefined;
}

/** True for an object node whose keys are chosen by the user (e.g. oidc providers). */
export function isMap(node: SchemaNode): boolean {
  return node.type === 'object' && typeof node.additionalProperties === 'object';
}
