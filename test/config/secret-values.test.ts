/**
 * Every secret-bearing key of the config schema (`writeOnly: true`: passwords, tokens, webhook
 * secrets, client secrets, the CSRF key, database and Slack URLs) is refused without its value:
 * a start-up error is logged and may be shown in CI output, so it names the key and never quotes
 * what was given. The schema marks the keys; this walks the schema, so a key added later with the
 * mark is covered, and a key named like a secret without the mark fails here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { configSchemaDocument, type SchemaNode } from '../../src/config/schema.js';

interface Key {
  readonly path: readonly (string | number)[];
  readonly node: SchemaNode;
}

/** Every string property of the schema with its path (array items as index 0, map entries as `example`). */
function stringKeys(node: SchemaNode, at: (string | number)[] = [], out: Key[] = []): Key[] {
  const props = node.properties as Record<string, SchemaNode> | undefined;
  for (const [name, child] of Object.entries(props ?? {})) {
    if (child.type === 'string') out.push({ path: [...at, name], node: child });
    stringKeys(child, [...at, name], out);
  }
  if (node.items !== undefined && typeof node.items === 'object') stringKeys(node.items as SchemaNode, [...at, 0], out);
  // A map of named entries (OIDC providers): one entry named `example`.
  if (node.additionalProperties !== undefined && typeof node.additionalProperties === 'object') stringKeys(node.additionalProperties as SchemaNode, [...at, 'example'], out);
  for (const kw of ['oneOf', 'anyOf', 'allOf'] as const) for (const sub of (node[kw] as SchemaNode[] | undefined) ?? []) stringKeys(sub, at, out);
  for (const kw of ['then', 'else'] as const) if (node[kw] !== undefined) stringKeys(node[kw] as SchemaNode, at, out);
  return out;
}

const SECRET_NAMES = /^(password|access_token|token|secret|client_secret|key)$/;
const keys = stringKeys(configSchemaDocument());

t.test('keys named like secrets are marked writeOnly', async (t) => {
  const named = keys.filter((k) => SECRET_NAMES.test(String(k.path.at(-1))));
  t.ok(named.length >= 14, `found ${named.length} secret-named keys`);
  for (const k of named) t.equal(k.node.writeOnly, true, `${k.path.join('.')} is writeOnly`);
});

t.test('a refused secret is named, never quoted', async (t) => {
  const secrets = keys.filter((k) => k.node.writeOnly === true);
  t.ok(secrets.length >= 18, `${secrets.length} writeOnly keys`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vexil-secret-values-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const k of secrets) {
    // A value of the wrong type is refused by any string schema: its digits must not appear.
    const value = 918273645546372;
    const tree: Record<string, unknown> = {};
    let cur: Record<string | number, unknown> = tree;
    k.path.forEach((seg, i) => {
      if (typeof seg === 'number') return; // the array's element was made with its parent
      const last = i === k.path.length - 1;
      const nextIsIndex = typeof k.path[i + 1] === 'number';
      if (last) cur[seg] = value;
      else {
        const child: Record<string | number, unknown> = {};
        cur[seg] = nextIsIndex ? [child] : child;
        cur = child;
      }
    });
    const file = path.join(dir, 'vexil.json');
    fs.writeFileSync(file, JSON.stringify(tree));
    const dotted = k.path.join('.');
    try {
      loadConfig({ file, env: {} });
      t.fail(`${dotted}: a number was accepted`);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      t.match(err.message, dotted, `${dotted}: named`);
      t.notMatch(err.message, String(value), `${dotted}: not quoted`);
    }
  }
});
