/**
 * A VALIDATION_ERROR's `details` is bounded, whatever the body: it names what is wrong, not every instance of
 * it, so no body can make the answer large (in AWS a response over 6 MB is a Lambda error, a 5xx).
 */
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { httpRoute } from '../../../lib/composition/http-route';
import { httpEvent, lambdaContext } from '../../support/events';

/** Bodies up to 1 MB, so a body can hold thousands of mistakes. */
const roomy = <T extends z.ZodType>(body: T) => httpRoute({ access: 'public', maxBodyBytes: 1024 * 1024, body }, async () => ({ status: 200, body: {} }));

const send = async (route: ReturnType<typeof roomy>, body: unknown) => {
  const response = await route(httpEvent({ method: 'POST', body: JSON.stringify(body) }), lambdaContext());
  return { status: response.statusCode, bytes: Buffer.byteLength(response.body ?? ''), body: JSON.parse(response.body ?? '') };
};

const messagesOf = (details: { fieldErrors: Record<string, string[]>; formErrors: string[] }) => [...details.formErrors, ...Object.values(details.fieldErrors).flat()];

describe('the details of a VALIDATION_ERROR', () => {
  it('name a few of 5,000 unknown keys and count the rest, in a few hundred characters', async () => {
    // Arrange: a strict schema and a body of 5,000 keys it does not know, each 40 characters long
    const route = roomy(z.strictObject({ name: z.string().optional() }));
    const body = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`unknown_key_${String(i).padStart(28, '0')}`, 0]));

    // Act
    const response = await send(route, body);

    // Assert
    expect(response.status).toBe(400);
    expect(response.body.details.fieldErrors).toEqual({});
    expect(response.body.details.formErrors).toEqual([expect.stringMatching(/^Unrecognized keys: "unknown_key_0+".*and \d+ more$/)]);
    expect(response.body.details.formErrors[0].length).toBeLessThanOrEqual(250);
    expect(response.bytes).toBeLessThan(1_000);
  });

  it('list at most 50 fields, and say how many more failed', async () => {
    const route = roomy(z.strictObject(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`field_${i}`, z.string()]))));

    const response = await send(route, {});

    expect(response.status).toBe(400);
    expect(Object.keys(response.body.details.fieldErrors)).toHaveLength(50);
    expect(response.body.details.formErrors).toEqual([expect.stringMatching(/250 more fields/)]);
  });

  it('hold at most 20 messages per field and 20 form errors, each at most ~200 characters', async () => {
    // Arrange: an array of 5,000 wrong values, each with a message of its own; a long custom message
    const route = roomy(
      z.strictObject({
        items: z.array(z.number().refine(() => false, { error: (issue) => `Value ${JSON.stringify(issue.input)} is not allowed` })),
        long: z.string().refine(() => false, 'x'.repeat(10_000)),
      }),
    );

    // Act
    const response = await send(route, { items: Array.from({ length: 5_000 }, (_, i) => i), long: 'a' });

    // Assert
    const { fieldErrors } = response.body.details;
    expect(response.status).toBe(400);
    expect(fieldErrors.items).toHaveLength(20);
    expect(fieldErrors.items.at(-1)).toMatch(/and 4981 more/);
    expect(fieldErrors.long).toEqual([expect.stringMatching(/^x{150,}… and \d+ more characters$/)]);
    for (const message of messagesOf(response.body.details)) expect(message.length).toBeLessThanOrEqual(250);
    expect(response.bytes).toBeLessThan(4_000);
  });

  it('are unchanged when they are small', async () => {
    const route = roomy(z.strictObject({ name: z.string().min(2), amount: z.number() }));

    const response = await send(route, { name: 'A', amount: 'x', extra: 1 });

    expect(response.body.details).toEqual({
      fieldErrors: { name: [expect.stringContaining('>=2')], amount: [expect.stringContaining('expected number')] },
      formErrors: ['Unrecognized key: "extra"'],
    });
  });
});
