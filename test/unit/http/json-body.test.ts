/**
 * The chain's body steps, for every route that takes a body: no body over the route's size is parsed, and no
 * caller JSON may reach a handler (or the stripe SDK, or DynamoDB) with a lone surrogate in a string, or nested
 * deeper than recursion can safely go.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { z } from 'zod';
import { httpRoute } from '../../../lib/composition/http-route';
import { MAX_BODY_BYTES } from '../../../lib/http/json-limits';
import { httpEvent, lambdaContext } from '../../support/events';

const AnyObject = z.record(z.string(), z.unknown());

/** A route that takes any JSON object and echoes it: the echo serialises it again, recursively. */
const echo = httpRoute({ access: 'public', body: AnyObject }, async ({ body }) => ({ status: 200, body }));

/** The same, for bodies up to 16 MB: what the JSON checks do with a body no byte limit stopped. */
const roomyEcho = httpRoute({ access: 'public', maxBodyBytes: 16 * 1024 * 1024, body: AnyObject }, async ({ body }) => ({ status: 200, body }));

const send = async (rawBody: string, route = echo) => {
  const response = await route(httpEvent({ method: 'POST', body: rawBody }), lambdaContext());
  return { status: response.statusCode, body: JSON.parse(response.body ?? '') };
};

/** `{"s":"éé…"}` of exactly `bytes` UTF-8 bytes (even), each é 2 bytes but 1 UTF-16 unit. */
const bodyOfBytes = (bytes: number) => `{"s":"${'é'.repeat((bytes - 8) / 2)}"}`;

const zeros = (count: number) => new Array(count).fill('0').join(',');

describe('the body size step', () => {
  it('takes a body of exactly MAX_BODY_BYTES (32 KB) and refuses one byte more with 413, counting UTF-8 bytes, not characters', async () => {
    const full = bodyOfBytes(MAX_BODY_BYTES);

    const taken = await send(full);
    const refused = await send(`${full.slice(0, -2)}x"}`);

    expect(Buffer.byteLength(full)).toBe(MAX_BODY_BYTES);
    expect(full.length).toBeLessThan(MAX_BODY_BYTES / 2 + 10);
    expect(taken.status).toBe(200);
    expect(refused).toEqual({ status: 413, body: { error: expect.stringContaining('too large'), code: 'PAYLOAD_TOO_LARGE' } });
  });

  it.each([
    ['meta holding 3,000,000 numbers', `{"meta":{"a":[${zeros(3_000_000)}]}}`],
    ['meta holding 1,900,000 empty arrays', `{"meta":{"a":[${new Array(1_900_000).fill('[]').join(',')}]}}`],
    ['3,000,000 numbers and one surrogate pair', `{"meta":{"a":[${zeros(3_000_000)}],"s":"\\ud83d\\ude00"}}`],
    ['400,000 top-level keys', `{${Array.from({ length: 400_000 }, (_, i) => `"k${i}":0`).join(',')}}`],
  ])('refuses a 5-6 MB body of %s with 413 before parsing it or running the schema', async (_shape, rawBody) => {
    // Arrange: count the parses of this body and the runs of the route's schema
    let validations = 0;
    const counting = httpRoute({ access: 'public', body: AnyObject.refine(() => ++validations > 0) }, async () => ({ status: 200, body: {} }));
    const parse = jest.spyOn(JSON, 'parse');

    // Act
    const response = await counting(httpEvent({ method: 'POST', body: rawBody }), lambdaContext());
    const parsesOfBody = parse.mock.calls.filter(([text]) => text === rawBody).length;
    parse.mockRestore();

    // Assert
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(response.body ?? '')).toEqual({ error: expect.any(String), code: 'PAYLOAD_TOO_LARGE' });
    expect(parsesOfBody).toBe(0);
    expect(validations).toBe(0);
  });

  it("takes a route's own larger limit, and checks the raw body of a route without a body schema only when it sets one", async () => {
    // Arrange: a route with a body raised to 256 KB; two that read their raw body themselves (as the processor webhook does)
    const large = httpRoute({ access: 'public', maxBodyBytes: 256 * 1024, body: AnyObject }, async () => ({ status: 200, body: {} }));
    const rawLimited = httpRoute({ access: 'public', maxBodyBytes: 256 * 1024 }, async ({ rawBody }) => ({ status: 200, body: { bytes: rawBody.length } }));
    const rawUnlimited = httpRoute({ access: 'public' }, async ({ rawBody }) => ({ status: 200, body: { bytes: rawBody.length } }));
    const body100k = `{"s":"${'x'.repeat(100_000)}"}`;
    const body300k = `{"s":"${'x'.repeat(300_000)}"}`;

    // Act
    const responses = await Promise.all([
      send(body100k, large),
      send(body300k, large),
      send(body100k, rawLimited),
      send(body300k, rawLimited),
      send(body300k, rawUnlimited),
      send(body100k),
    ]);

    // Assert
    expect(responses.map(({ status }) => status)).toEqual([200, 413, 200, 413, 200, 413]);
  });
});

const nested = (levels: number, leaf = '1') => `${'['.repeat(levels)}${leaf}${']'.repeat(levels)}`;

describe('the JSON body step', () => {
  it.each([
    ['a string value', '{"name":"x\\ud800"}', 'name'],
    ['a pair in the wrong order', '{"name":"\\udc00\\ud83d"}', 'name'],
    ['a string deep inside', '{"meta":{"a":[1,{"b":["ok","\\udfff"]}]}}', 'meta'],
    ['a nested key', '{"meta":{"k\\ud800":1}}', 'meta'],
  ])('refuses a lone surrogate in %s with 400 on the field it sits in', async (_where, rawBody, field) => {
    const response = await send(rawBody);

    expect(response.status).toBe(400);
    expect(response.body.details).toEqual({ fieldErrors: { [field]: [expect.stringContaining('surrogate')] }, formErrors: [] });
  });

  it('refuses a lone surrogate in the text itself, unescaped, as a body that has no UTF-8 form', async () => {
    const response = await send('{"name":"x\ud800"}');

    expect(response.status).toBe(400);
    expect(response.body.details).toEqual({ fieldErrors: {}, formErrors: [expect.stringContaining('UTF-8')] });
  });

  it('refuses a lone surrogate in a field name, or in a body that is a string, as a form error', async () => {
    for (const rawBody of ['{"x\\ud800":1}', '"\\ud800"']) {
      const response = await send(rawBody);

      expect(response.status).toBe(400);
      expect(response.body.details).toEqual({ fieldErrors: {}, formErrors: [expect.stringContaining('surrogate')] });
    }
  });

  it('takes surrogate pairs (emoji), escaped or not', async () => {
    const response = await send('{"name":"\\ud83d\\ude00 😀","meta":{"😀":["\\ud83d\\ude00"]}}');

    expect(response).toEqual({ status: 200, body: { name: '😀 😀', meta: { '😀': ['😀'] } } });
  });

  it('refuses a field nested 10,000 levels deep with 400 on that field, not a 500 from recursion', async () => {
    const response = await send(`{"data":${nested(10_000)}}`);

    expect(response.status).toBe(400);
    expect(Object.keys(response.body.details.fieldErrors)).toEqual(['data']);
  });

  it('refuses a body of 5,000,000 levels (10 MB) as a whole, on a route whose limit lets it through', async () => {
    const response = await send(nested(5_000_000), roomyEcho);

    expect(response.status).toBe(400);
    expect(response.body.details.formErrors).toEqual([expect.stringContaining('levels')]);
  });

  it('takes a body nested 64 levels deep and refuses 65', async () => {
    const deepest = await send(`{"data":${nested(63)}}`);
    const tooDeep = await send(`{"data":${nested(64)}}`);

    expect(deepest.status).toBe(200);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.details.fieldErrors.data).toEqual([expect.stringContaining('64 levels')]);
  });
});
