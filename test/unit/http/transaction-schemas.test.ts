/** The transaction routes' field rules (decisions.md §5, §9; docs/checkout.md), checked on the schemas alone. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { z } from 'zod';
import { CheckoutBody, InitializeBody, TransactionListQuery } from '../../../lib/http/transaction-schemas';
import { fixPropertySeed } from '../../support/seeds';

fixPropertySeed();

const valid = { partner_id: 'ptr_1', client_id: 'merchant-1', amount: 12.34, currency: 'usd', partner_reference: 'order-1' };
const validCheckout = { ...valid, email: 'buyer@example.com' };

/** The fields a parse failed on (none when it succeeded). */
const fieldErrorsOf = (result: z.ZodSafeParseResult<unknown>) => (result.success ? [] : [...new Set(result.error.issues.map((issue) => issue.path[0]))]);

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** `levels` objects, each inside the one before: `{ a: { a: ... { a: 1 } } }`. */
const nestedMeta = (levels: number) => {
  let meta: Record<string, unknown> = { a: 1 };
  for (let level = 1; level < levels; level++) meta = { a: meta };
  return meta;
};

describe('meta', () => {
  it('stops at the first limit it passes: a meta of 400,000 keys is refused after reading a few hundred of its values', () => {
    // Arrange: count every value the check reads
    const target = Object.fromEntries(Array.from({ length: 400_000 }, (_, i) => [`k${i}`, 0]));
    let reads = 0;
    const meta = new Proxy(target, {
      get: (object, key, receiver) => {
        reads++;
        return Reflect.get(object, key, receiver);
      },
    });

    // Act
    const result = InitializeBody.safeParse({ ...valid, meta });

    // Assert
    expect(fieldErrorsOf(result)).toEqual(['meta']);
    expect(reads).toBeLessThan(1_000);
  });

  it('takes 50 keys, 32 levels and 4,096 bytes, and refuses one more of each', () => {
    const fiftyKeys = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    const fullBytes = { s: 'é'.repeat(2044) }; // {"s":""} is 8 bytes, each é 2 more

    expect(bytesOf(fullBytes)).toBe(4096);
    for (const meta of [fiftyKeys, nestedMeta(32), fullBytes]) expect(InitializeBody.safeParse({ ...valid, meta }).success).toBe(true);
    for (const meta of [{ ...fiftyKeys, one: 1 }, nestedMeta(33), { s: `${fullBytes.s}x` }]) {
      expect(fieldErrorsOf(InitializeBody.safeParse({ ...valid, meta }))).toEqual(['meta']);
    }
  });

  it('measures the bytes JSON.stringify would write, escapes and UTF-8 included, and refuses exactly those over 4,096 (property)', () => {
    const base = fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }), { maxKeys: 20 });
    fc.assert(
      fc.property(base, fc.integer({ min: -3, max: 3 }), (meta, overBy) => {
        // Arrange: pad the meta to exactly 4096 + overBy bytes
        const size = bytesOf({ ...meta, '~pad': '' });
        fc.pre(size <= 4096 + overBy);
        const padded = { ...meta, '~pad': 'x'.repeat(4096 + overBy - size) };

        // Act
        const accepted = InitializeBody.safeParse({ ...valid, meta: padded }).success;

        // Assert
        expect(accepted).toBe(overBy <= 0);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps keys named __proto__ and constructor as plain keys', () => {
    const meta = JSON.parse('{"__proto__":{"a":1},"constructor":1}');

    const parsed = InitializeBody.parse({ ...valid, meta });

    expect(JSON.stringify(parsed.meta)).toBe('{"__proto__":{"a":1},"constructor":1}');
  });

  it.each([[[1]], ['text'], [null], [new Date(0)]])('refuses %p: meta is a JSON object', (meta) => {
    expect(fieldErrorsOf(InitializeBody.safeParse({ ...valid, meta }))).toEqual(['meta']);
  });
});

describe('partner_reference', () => {
  it.each([
    ['250 emoji (500 UTF-16 units)', '😀'.repeat(250)],
    ['255 letters with accents', 'é'.repeat(255)],
    ['255 ASCII characters', 'r'.repeat(255)],
  ])('takes %s', (_what, reference) => {
    expect(CheckoutBody.safeParse({ ...validCheckout, partner_reference: reference }).success).toBe(true);
    expect(InitializeBody.safeParse({ ...valid, partner_reference: reference }).success).toBe(true);
  });

  it.each([
    ['251 emoji: 251 characters, but 502 UTF-16 units, more than the processor keeps', '😀'.repeat(251)],
    ['256 characters', 'r'.repeat(256)],
    ['only spaces', '   '],
  ])('refuses %s', (_what, reference) => {
    expect(fieldErrorsOf(CheckoutBody.safeParse({ ...validCheckout, partner_reference: reference }))).toEqual(['partner_reference']);
    expect(fieldErrorsOf(InitializeBody.safeParse({ ...valid, partner_reference: reference }))).toEqual(['partner_reference']);
  });
});

describe('created_from and created_to', () => {
  const createdFrom = (value: string) => TransactionListQuery.safeParse({ created_from: value });

  it.each([
    ['2026-02-28', '2026-02-28T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2026-01-01T10:00:00Z', '2026-01-01T10:00:00.000Z'],
    ['2026-01-01T10:00:00.5+02:00', '2026-01-01T08:00:00.500Z'],
    ['2026-01-01T23:30:00.123456-01:00', '2026-01-02T00:30:00.123Z'],
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('read %s as the instant %s', (value, instant) => {
    const result = createdFrom(value);

    expect(result.success && result.data.created_from).toBe(instant);
  });

  it.each([
    '2026-02-30',
    '2025-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
    '2026-04-31',
    '2026-01-01 junk',
    '2026-01-01junk',
    '2026-01-01T10:00:00',
    '2026-01-01T10:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T10:60:00Z',
    '2026-01-01T10:00:60Z',
    '2026-01-01T10:00:00+24:00',
    '2026-01-01T10:00:00.Z',
    '10000-01-01',
    '+010000-01-01T00:00:00Z',
    '-000001-01-01',
    '9999-12-31T23:59:59-01:00',
    '0000-01-01T00:00:00+01:00',
    '2026-1-1',
    '20260101',
    ' 2026-01-01',
    'Thu, 01 Jan 2026 00:00:00 GMT',
  ])('refuse %j with 400 on the field', (value) => {
    expect(fieldErrorsOf(createdFrom(value))).toEqual(['created_from']);
    expect(fieldErrorsOf(TransactionListQuery.safeParse({ created_to: value }))).toEqual(['created_to']);
  });

  it('read every instant of years 0000-9999, written in UTC or with any offset, as that instant (property)', () => {
    const instants = fc.date({ min: new Date('0000-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true });
    const offsets = fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 });
    fc.assert(
      fc.property(instants, offsets, (instant, offsetMinutes) => {
        // Arrange: the instant's local time at that offset, written out with the offset
        const local = new Date(instant.getTime() + offsetMinutes * 60_000).toISOString();
        fc.pre(/^\d{4}-/.test(local));
        const sign = offsetMinutes < 0 ? '-' : '+';
        const magnitude = Math.abs(offsetMinutes);
        const zone = `${sign}${String(Math.floor(magnitude / 60)).padStart(2, '0')}:${String(magnitude % 60).padStart(2, '0')}`;

        // Act
        const result = createdFrom(local.replace('Z', zone));

        // Assert
        expect(result.success && result.data.created_from).toBe(instant.toISOString());
      }),
      { numRuns: 2_000 },
    );
  });
});
