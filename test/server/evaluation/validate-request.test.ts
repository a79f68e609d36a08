import t from 'tap';
import { parseEvaluationRequest } from '../../../src/server/evaluation/validate-request.js';

t.test('a request context holds its own string members only', async (t) => {
  const body = JSON.parse('{"flagKey":"f","entityId":"u","context":{"plan":"pro","__proto__":"p","2":"two","constructor":"c"}}') as unknown;
  const { context } = parseEvaluationRequest(body).request;
  t.same(Object.keys(context), ['2', 'plan', '__proto__', 'constructor'], 'the keys JSON.parse gave, in its order');
  t.equal(context.__proto__, 'p', '__proto__ is an ordinary member');
  t.equal(context.constructor, 'c');
  const empty = parseEvaluationRequest({ flagKey: 'f', entityId: 'u' }).request.context;
  for (const inherited of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']) {
    t.equal((empty as Record<string, unknown>)[inherited], undefined, `${inherited} reads as absent`);
  }
  t.same(JSON.parse(JSON.stringify(empty)), {});
  t.throws(() => parseEvaluationRequest({ flagKey: 'f', entityId: 'u', context: { n: 1 } }), { message: 'invalid field context.n: must be a string' });
  t.same({ ...parseEvaluationRequest({ flagKey: 'f', context: { k: null, j: 'x' } }).request.context }, { k: '', j: 'x' }, 'a null value is "", as Flipt reads it');
  t.throws(() => parseEvaluationRequest({ flagKey: 'f', entityId: 'u', context: [] }), { message: 'invalid field context: must be an object of string values' });
});
