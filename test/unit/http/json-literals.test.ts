/**
 * What JSON.parse would change without a word is refused instead (400 VALIDATION_ERROR on the top-level field):
 * a number whose literal is not the double it becomes, and a key given twice in one object. `meta` is kept
 * exactly as sent, and an amount is charged as sent, so neither may differ from what the partner wrote.
 */
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { httpRoute } from '../../../lib/composition/http-route';
import { MAX_BODY_BYTES } from '../../../lib/http/json-limits';
import { httpEvent, lambdaContext } from '../../support/events';

/** A route that takes any JSON value and echoes it. */
const echo = httpRoute({ access: 'public', body: z.unknown() }, async ({ body }) => ({ status: 200, body: { body } }));

const send = async (rawBody: string) => {
  const response = await echo(httpEvent({ method: 'POST', body: rawBody }), lambdaContext());
  return { status: response.statusCode, body: JSON.parse(response.body ?? '') };
};

const refusedOn = (field: string, text: string | RegExp) => ({
  status: 400,
  body: expect.objectContaining({ code: 'VALIDATION_ERROR', details: { fieldErrors: { [field]: [expect.stringMatching(text)] }, formErrors: [] } }),
});

describe('a number JSON cannot carry exactly', () => {
  it.each([
    ['an amount with more digits than a double keeps', '{"amount":1.000000000000000000001,"currency":"USD"}', 'amount', '1.000000000000000000001'],
    ['an integer past 2^53 in meta', '{"meta":{"order":12345678901234567890}}', 'meta', '12345678901234567000'],
    ['2^53 + 1', '{"meta":{"n":9007199254740993}}', 'meta', '9007199254740992'],
    ['a number too large for a double', '{"meta":{"big":1e309}}', 'meta', 'Infinity'],
    ['a negative one', '{"meta":{"big":[-1E+400]}}', 'meta', 'Infinity'],
    ['a number too small for a double', '{"meta":{"tiny":1e-400}}', 'meta', /read as 0\b/],
    ['a long fraction deep inside', '{"meta":{"a":[{"b":[0.1000000000000000055511151231257827]}]}}', 'meta', '0.1'],
  ])('refuses %s with 400 on the top-level field it sits in, naming what it would have become', async (_what, rawBody, field, readAs) => {
    const response = await send(rawBody);

    expect(response).toEqual(refusedOn(field, readAs));
  });

  it('refuses one in a body that is an array or a number as a form error', async () => {
    for (const rawBody of ['[1, 12345678901234567890]', '1e309']) {
      const response = await send(rawBody);

      expect(response.status).toBe(400);
      expect(response.body.details).toEqual({ fieldErrors: {}, formErrors: [expect.stringContaining('exactly')] });
    }
  });

  it.each([
    ['-0', '-0', 0],
    ['1.10', '1.10', 1.1],
    ['1e2 and 1E+2', '[1e2,1E+2]', [100, 100]],
    ['0.1', '0.1', 0.1],
    ['100e-2', '100e-2', 1],
    ['a zero with many digits', '-0.000000000000000000000e99999', 0],
    ['2^53', '9007199254740992', 9007199254740992],
    ['1.5e300', '1.5e300', 1.5e300],
    ['the smallest double', '5e-324', 5e-324],
    ['trailing zeros past 15 digits', '1.00000000000000000000', 1],
    ['a long integer that is a double exactly', '123456789012345680000', 123456789012345680000],
    ['digits in a string', '{"order":"12345678901234567890"}', { order: '12345678901234567890' }],
  ])('takes %s: the same value as written', async (_what, rawBody, value) => {
    const response = await send(rawBody);

    expect(response).toEqual({ status: 200, body: { body: value } });
  });

  it('checks a field nested 10,000 levels deep by its depth (a recursive check would overflow the stack)', async () => {
    const levels = 10_000;

    const response = await send(`{"data":${'['.repeat(levels)}12345678901234567890${']'.repeat(levels)}}`);

    expect(response).toEqual(refusedOn('data', 'levels'));
  });

  it('reads a 32 KB body of long numbers and keys quickly', async () => {
    // Arrange: ~1,050 exact numbers of 19 digits, keys to compare, and one inexact number at the very end
    const entries = Array.from({ length: 1_050 }, (_, i) => `"k${i}":1.000000000000000000`);
    const rawBody = `{"meta":{${entries.join(',')},"last":1.0000000000000000001}}`;

    // Act
    const startedAt = performance.now();
    const response = await send(rawBody);
    const elapsedMs = performance.now() - startedAt;

    // Assert: the last number is found; the whole check takes far less than a second
    expect(Buffer.byteLength(rawBody)).toBeGreaterThan(28_000);
    expect(Buffer.byteLength(rawBody)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(response).toEqual(refusedOn('meta', '1.0000000000000000001'));
    expect(elapsedMs).toBeLessThan(250);
  });
});

describe('a key given twice in one object', () => {
  it.each([
    ['at the top level', '{"amount":1,"amount":1000}', 'amount'],
    ['in meta', '{"meta":{"x":1,"y":2,"x":1}}', 'meta'],
    ['in meta, once escaped', '{"meta":{"x":1,"\\u0078":2}}', 'meta'],
    ['deep inside', '{"meta":{"a":[{"b":{"__proto__":1,"__proto__":2}}]}}', 'meta'],
  ])('is refused with 400 %s (JSON.parse would keep only the last)', async (_where, rawBody, field) => {
    const response = await send(rawBody);

    expect(response).toEqual(refusedOn(field, 'more than once'));
  });

  it('is not confused with the same key in other objects, or with key-like text in strings', async () => {
    const rawBody = '{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}],"d":"\\"a\\":1,\\"a\\":2","e":{"x,":1,"x":2}}';

    const response = await send(rawBody);

    expect(response).toEqual({ status: 200, body: { body: JSON.parse(rawBody) } });
  });
});
