/**
 * Generated matchers are made off the request path (store/matcher-warmup.ts after each swap): a
 * flag evaluated for the first time through the server already runs its generated code, and so
 * does a flag changed by a reload. Each flag's matcher cell counts the calls the interpreter
 * answered (model/compiled.ts MatcherCell.interpreted): it stays 0. The answers are the interpreter's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { interpretBoolean } from '../../src/evaluation/boolean.js';
import type { CompiledFlag } from '../../src/model/compiled.js';
import { interpretVariant } from '../../src/evaluation/variant.js';
import type { SnapshotStore } from '../../src/store/types.js';
import { nextEvent } from '../store/temp-state.js';
import { post, startTestServer } from './support.js';

function compiled(store: SnapshotStore, key: string): CompiledFlag {
  return store.get()!.namespaces.get('default')!.flags.get(key)!.compiled;
}

function cell(flag: CompiledFlag) {
  return flag.variant !== null ? flag.variant.matcher : flag.boolean!.matcher;
}

const context = { plan: 'free', email: 'ann@example.com', age: '30', employee: 'true', joined: '2021-05-01T00:00:00Z' };

/** What the interpreter answers, as the server shows it (the fields it computes). */
function interpreted(flag: CompiledFlag, entityId: string) {
  const r = flag.variant !== null ? interpretVariant(flag, flag.variant, entityId, context) : interpretBoolean(flag, flag.boolean!, entityId, context);
  return { ...r };
}

for (const fastPath of [true, false]) {
  t.test(`${fastPath ? 'fast path' : 'Koa path'}: first evaluations run generated code`, async (t) => {
    const { url, store, dir } = await startTestServer(t, { fastPath });
    await store.settled();
    const color = compiled(store, 'color');
    const checkout = compiled(store, 'new-checkout');
    for (const flag of [color, checkout]) {
      t.type(cell(flag).fn, 'function', `${flag.key}: generated before any request`);
      t.equal(cell(flag).interpreted, 0);
    }

    for (const entityId of ['user-1', 'user-2', 'user-3']) {
      const v = await post(`${url}/evaluate/v1/variant`, { flagKey: 'color', entityId, context });
      t.equal(v.status, 200, v.text);
      t.match(v.body, interpreted(color, entityId), `color for ${entityId}: the interpreter's answer`);
      const b = await post(`${url}/evaluate/v1/boolean`, { flagKey: 'new-checkout', entityId, context });
      t.equal(b.status, 200, b.text);
      t.match(b.body, interpreted(checkout, entityId), `new-checkout for ${entityId}: the interpreter's answer`);
    }
    const batch = await post(`${url}/evaluate/v1/batch`, {
      requests: [
        { flagKey: 'color', entityId: 'user-4', context },
        { flagKey: 'new-checkout', entityId: 'user-4', context },
      ],
    });
    t.equal(batch.status, 200, batch.text);
    t.same([cell(color).interpreted, cell(checkout).interpreted], [0, 0], 'no request was answered by the interpreter');

    // A reload: the changed flag is a new compiled object, generated after the swap.
    const file = join(dir, 'features.yml');
    const swapped = nextEvent(store, 'swap');
    writeFileSync(file, readFileSync(file, 'utf8').replace('rollout: 100', 'rollout: 99'));
    await swapped;
    await store.settled();
    const changed = compiled(store, 'color');
    t.not(changed, color, 'color was rebuilt');
    const r = await post(`${url}/evaluate/v1/variant`, { flagKey: 'color', entityId: 'user-1', context });
    t.equal(r.status, 200, r.text);
    t.type(cell(changed).fn, 'function');
    t.equal(cell(changed).interpreted, 0, 'the rebuilt flag ran generated code from its first request');
  });
}
