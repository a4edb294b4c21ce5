/**
 * The walks over parsed JSON are bounded by work, not by the size of what they walk: each test counts what a walk
 * reads on the adversarial shapes of a large body (a huge array inside meta, millions of empty arrays, 400,000
 * keys), through a Proxy that counts every index or key listed and every value read.
 */
import { describe, expect, it } from '@jest/globals';
import { exceededLimit, findJsonFault, MAX_BODY_BYTES, MAX_BODY_VALUES } from '../../../lib/http/json-limits';

interface Work {
  /** Keys or indexes listed at once (`for…in`, `Object.keys`, `Object.entries` list them all first). */
  listed: number;
  /** Values read one by one. */
  read: number;
}

/** `target`, with every listing of its keys and every read of a value counted in `work`. */
function counted<T extends object>(target: T, work: Work): T {
  return new Proxy(target, {
    ownKeys: (object) => {
      const keys = Reflect.ownKeys(object);
      work.listed += keys.length;
      return keys;
    },
    get: (object, key, receiver) => {
      work.read++;
      return Reflect.get(object, key, receiver);
    },
  });
}

const META_LIMITS = { maxKeys: 50, maxDepth: 32, maxBytes: 4096 };

/** A JSON text that may hold a lone surrogate (it has a surrogate escape), so findJsonFault must walk its value. */
const WITH_SURROGATE_PAIR = '{"s":"\\ud83d\\ude00"}';

describe('exceededLimit', () => {
  it('refuses a meta holding an array of 3,000,000 numbers after reading ~2,000 of them, never listing its indexes', () => {
    // Arrange
    const work: Work = { listed: 0, read: 0 };
    const meta = { a: counted(new Array<number>(3_000_000).fill(0), work) };

    // Act
    const exceeded = exceededLimit(meta, META_LIMITS);

    // Assert
    expect(exceeded).toBe('At most 4096 bytes serialised (UTF-8)');
    expect(work.listed).toBe(0);
    expect(work.read).toBeLessThan(2 * 4096);
  });
});

describe('findJsonFault', () => {
  it('refuses 1,900,000 empty arrays inside meta after MAX_BODY_VALUES values, a number no body within MAX_BODY_BYTES reaches', () => {
    // Arrange: the reviewer's 6 MB body; its text has more than 64 brackets, so it is walked
    const work: Work = { listed: 0, read: 0 };
    const text = `{"meta":{"a":[${new Array(1_900_000).fill('[]').join(',')}]}}`;
    const body = JSON.parse(text) as { meta: { a: unknown[] } };
    body.meta.a = counted(body.meta.a, work);
    // ... and the most values a body of MAX_BODY_BYTES holds: 2 bytes each, with a surrogate pair to be walked
    const densest = `["\\ud83d\\ude00"${',0'.repeat((MAX_BODY_BYTES - 16) / 2)}]`;

    // Act
    const fault = findJsonFault(text, body);
    const densestFault = findJsonFault(densest, JSON.parse(densest));

    // Assert
    expect(fault).toEqual({ field: undefined, message: expect.stringContaining(`at most ${MAX_BODY_VALUES}`) });
    expect(work.listed).toBe(0);
    expect(work.read).toBeLessThanOrEqual(MAX_BODY_VALUES + 1);
    expect(Buffer.byteLength(densest)).toBe(MAX_BODY_BYTES);
    expect(densestFault).toBeUndefined();
  });

  it('refuses 3,000,000 numbers beside one surrogate pair (escaped) after MAX_BODY_VALUES values, never listing the indexes', () => {
    // Arrange
    const work: Work = { listed: 0, read: 0 };
    const body = { meta: { a: counted(new Array<number>(3_000_000).fill(0), work), s: '😀' } };

    // Act
    const fault = findJsonFault(WITH_SURROGATE_PAIR, body);

    // Assert
    expect(fault?.message).toContain(`at most ${MAX_BODY_VALUES}`);
    expect(work.listed).toBe(0);
    expect(work.read).toBeLessThanOrEqual(MAX_BODY_VALUES + 1);
  });

  it('reads at most MAX_BODY_VALUES of 400,000 top-level keys (listing them once: JavaScript has no lazier way)', () => {
    // Arrange
    const work: Work = { listed: 0, read: 0 };
    const body = counted(Object.fromEntries(Array.from({ length: 400_000 }, (_, i) => [`k${i}`, 0])), work);

    // Act
    const fault = findJsonFault(WITH_SURROGATE_PAIR, body);

    // Assert
    expect(fault?.message).toContain(`at most ${MAX_BODY_VALUES}`);
    expect(work.read).toBeLessThanOrEqual(MAX_BODY_VALUES + 1);
    expect(work.listed).toBeLessThanOrEqual(400_000);
  });
});
