import t from 'tap';
import { Code, VexilError, internal, notFound, unauthenticated } from '../../src/errors.js';
import { toErrorResponse } from '../../src/server/pipeline/errors.js';

t.test('gRPC code → HTTP status', async (t) => {
  const cases: Array<[number, number]> = [
    [Code.NotFound, 404],
    [Code.InvalidArgument, 400],
    [Code.FailedPrecondition, 400],
    [Code.Unauthenticated, 401],
    [Code.PermissionDenied, 403],
    [Code.ResourceExhausted, 429],
    [Code.Unimplemented, 501],
    [Code.Unavailable, 503],
    [Code.Internal, 500],
    [Code.AlreadyExists, 409],
    [Code.DeadlineExceeded, 504],
  ];
  for (const [code, status] of cases) {
    const r = toErrorResponse(new VexilError(code as Code, 'm'));
    t.equal(r.status, status, `code ${code}`);
    t.equal(r.body.code, code);
  }
});

t.test('body shape and message', async (t) => {
  t.same(toErrorResponse(notFound('flag "a/b" not found')).body, { code: 5, message: 'flag "a/b" not found', details: [] });
  const withDetails = toErrorResponse(new VexilError(Code.InvalidArgument, 'x', { details: [{ field: 'f' }] }));
  t.same(withDetails.body.details, [{ field: 'f' }]);
});

t.test('internal errors never leak their message or cause', async (t) => {
  const r = toErrorResponse(internal('db password is hunter2', new Error('secret stack')));
  t.same(r.body, { code: 13, message: 'internal error', details: [] });
  const plain = toErrorResponse(new TypeError('cannot read x of undefined'));
  t.equal(plain.status, 500);
  t.same(plain.body, { code: 13, message: 'internal error', details: [] });
  const thrownString = toErrorResponse('boom');
  t.equal(thrownString.status, 500);
});

t.test('httpStatus override and headers', async (t) => {
  const r = toErrorResponse(new VexilError(Code.Unimplemented, 'Method Not Allowed', { httpStatus: 405, headers: { Allow: 'GET' } }));
  t.equal(r.status, 405);
  t.same(r.headers, { Allow: 'GET' });
  t.equal(r.body.code, 12);
  const auth = toErrorResponse(unauthenticated());
  t.equal(auth.status, 401);
  t.ok(auth.headers['WWW-Authenticate'], 'a 401 carries WWW-Authenticate');
});

t.test('an error that is not a VexilError is Internal: 500, fixed message, no detail', async (t) => {
  // Even one shaped like an http-errors client error: nothing we run throws those, so its
  // message is not known to be safe to show.
  for (const err of [new Error('connect ECONNREFUSED 10.0.0.1:5432'), Object.assign(new Error('Bad Request'), { status: 400, expose: true }), 'text', null]) {
    const r = toErrorResponse(err);
    t.equal(r.status, 500);
    t.same(r.body, { code: 13, message: 'internal error', details: [] });
  }
});
