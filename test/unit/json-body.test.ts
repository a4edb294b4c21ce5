/**
 * The chain's JSON body step, for every route that takes a body: no caller JSON may reach a handler (or the
 * stripe SDK, or DynamoDB) with a lone surrogate in a string, or nested deeper than recursion can safely go.
 */
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { httpRoute } from '../../lib/http/chain';
import { httpEvent, lambdaContext } from '../support/events';

/** A route that takes any JSON object and echoes it: the echo serialises it again, recursively. */
const echo = httpRoute({ access: 'public', body: z.record(z.string(), z.unknown()) }, async ({ body }) => ({ status: 200, body }));

const send = async (rawBody: string) => {
  const response = await echo(httpEvent({ method: 'POST', body: rawBody }), lambdaContext());
  return { status: response.statusCode, body: JSON.parse(response.body ?? '') };
};

const nested = (levels: number, leaf = '1') => `${'['.repeat(levels)}${leaf}${']'.repeat(levels)}`;

describe('the JSON body step', () => {
  it.each([
    ['a string value', '{"name":"x\\ud800"}', 'name'],
    ['a pair in the wrong order', '{"name":"\\udc00\\ud83d"}', 'name'],
    ['a string deep inside', '{"meta":{"a":[1,{"b":["ok","\\udfff"]}]}}', 'meta'],
    ['a nested key', '{"meta":{"k\\ud800":1}}', 'meta'],
    ['the text itself, unescaped', '{"name":"x\ud800"}', 'name'],
  ])('refuses a lone surrogate in %s with 400 on the field it sits in', async (_where, rawBody, field) => {
    const response = await send(rawBody);

    expect(response.status).toBe(400);
    expect(response.body.details).toEqual({ fieldErrors: { [field]: [expect.stringContaining('surrogate')] }, formErrors: [] });
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

  it('refuses a body of 5,000,000 levels (10 MB) as a whole', async () => {
    const response = await send(nested(5_000_000));

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
