import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import jsYaml from 'js-yaml';
import { schemaFindings } from '../../src/state/schema.js';
import { readFixture } from '../support/state-fixture.js';

const schemaPath = fileURLToPath(new URL('../../schemas/features.schema.json', import.meta.url));
const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;

t.test('the schema file: draft-07, an $id, titled definitions, compiles in strict mode', async (t) => {
  t.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
  t.match(schema.$id, /^https:\/\/.+\/features\.schema\.json$/);
  for (const [name, def] of Object.entries(schema.definitions as Record<string, { title?: string; type?: string }>)) {
    if (def.type === 'object') t.ok(def.title, `definition ${name} has a title`);
  }
  const ajv = new Ajv({ strict: true, strictRequired: false, strictTypes: false, allErrors: true });
  t.doesNotThrow(() => ajv.compile(schema));
});

t.test('what an editor would see: the valid fixtures pass the bare schema', async (t) => {
  const validate = new Ajv({ strictRequired: false, strictTypes: false }).compile(schema);
  for (const name of ['readonly', 'multi-file', 'versions', 'attachments']) {
    for (const f of readFixture(name).files) {
      const text = new TextDecoder().decode(f.bytes);
      const docs = f.path.endsWith('.json') ? text.trim().split('\n').map((l) => JSON.parse(l)) : jsYaml.loadAll(text);
      for (const doc of docs) {
        if (doc === null) continue;
        t.ok(validate(doc), `${name}/${f.path}: ${JSON.stringify(validate.errors)}`);
      }
    }
  }
});

t.test('closed objects, key pattern, string-only constraint values', async (t) => {
  const rules = (doc: unknown) => schemaFindings(doc, 0).map((f) => [f.rule, f.path.join('/')]);
  t.same(rules({ flags: [{ key: 'a', name: 'A', colour: 'red' }] }), [['schema.additional-property', 'flags/0/colour']]);
  t.same(rules({ flags: [{ key: 'a b', name: 'A' }] }), [['schema.pattern', 'flags/0/key']]);
  t.same(rules({ flags: [{ key: 'a,b_c-D9', name: 'A' }] }), [], 'comma, dash, underscore are key characters');
  t.same(rules({ segments: [{ key: 's', name: 'S', match_type: 'ALL_MATCH_TYPE', constraints: [{ type: 'NUMBER_COMPARISON_TYPE', property: 'p', operator: 'eq', value: 1 }] }] }), [
    ['schema.type', 'segments/0/constraints/0/value'],
  ]);
  t.same(rules({ flags: [{ key: 'a', name: 'A', metadata: { nested: { no: 1 } } }] }), [['schema.type', 'flags/0/metadata/nested']]);
  t.same(rules({ flags: [{ key: 'a', name: 'A', variants: [{ key: 'v', attachment: 'str' }] }] }), [['schema.type', 'flags/0/variants/0/attachment']]);
  t.same(rules({ flags: [{ key: 'a', name: 'A', variants: [{ key: 'v', attachment: [1] }, { key: 'w', attachment: null }] }] }), []);
  t.same(rules({ flags: [{ key: 'a', name: 'A', rollouts: [{}, { description: 'd' }] }] }), [], 'empty rollouts are accepted');
  t.same(rules({ flags: [{ key: 'a', name: 'A', description: null }] }), [['schema.type', 'flags/0/description']], 'null description is refused as in v1');
  t.same(rules({ version: '1.4', namespace: { key: 'k', name: 'N', description: 'D' } }), []);
  t.same(rules({ namespace: { key: 'k', extra: 1 } }), [['schema.additional-property', 'namespace/extra']]);
  t.same(rules([]), [['schema.type', '']]);
});
