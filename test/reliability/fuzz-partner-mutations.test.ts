/**
 * Property-based fuzzing of every partner mutation (POST /clients, /transactions/checkout-intent,
 * /transactions/checkout-intent-v2, /transactions/initialize, /transactions/attach-intent) over HTTP, each
 * request with a valid API key (partner-scoped, or platform-wide on the payment routes), the correct HMAC of its
 * exact bytes and a fresh idempotency key, so every body reaches parsing, validation and the use case.
 *
 * Properties, for any body:
 *   1. never a 5xx; every non-2xx is the spec's `{ error, code }` (+ `details` on VALIDATION_ERROR), with the
 *      status the spec gives the code (`answerProblem`);
 *   2. never a partial write: a refused request created nothing (the partner's newest clients or transactions
 *      are unchanged; attach-intent left its transaction `initialized`), an accepted one exactly one record,
 *      the one its answer names, holding what was sent;
 * and for near-valid bodies (a valid body with one thing changed, `test/support/fuzz/mutations.ts`), what docs/conventions.md
 * decides: the valid body in any layout is accepted, a body that breaks a documented rule is a 400
 * VALIDATION_ERROR (413 past 32 KB); an accepted request replays under its key, and a refused one leaves its key
 * free for the corrected body.
 *
 * Seeded (FUZZ_SEED) and bounded (FUZZ_RUNS_FACTOR): see `fuzzParameters`.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { answerProblem, assertThat, fuzzParameters, signedPost, type Answer } from '../support/fuzz/http';
import { arbitraryBody, serialize, showBytes, type JsonObject } from '../support/fuzz/json';
import { plan, render, type Plan, type Rendered } from '../support/fuzz/mutations';
import { api, type Caller, credentialsOf, ok, type Route, routes, seed, type Seed, setUpWorld } from '../support/fuzz/partner-routes';

beforeAll(setUpWorld, 60_000);
afterAll(() => api.close());

// ---------------------------------------------------------------------------------------------------------------
// The properties

/** What the fuzzer saw, so a run that never reached an accepted (or refused) request is noticed. */
const seen = new Map<string, { accepted: number; refused: number; statuses: Set<number> }>();
const note = (route: string, answer: Answer) => {
  const entry = seen.get(route) ?? { accepted: 0, refused: 0, statuses: new Set<number>() };
  if (ok(answer)) entry.accepted++;
  else entry.refused++;
  entry.statuses.add(answer.status);
  seen.set(route, entry);
};

function expectationProblem(rendered: Rendered, answer: Answer): string | undefined {
  if (rendered.expect === 'accept' && !ok(answer)) return `expected a 2xx for ${rendered.why}, got ${answer.status} ${answer.text.slice(0, 300)}`;
  if (rendered.expect === 'invalid') {
    const code = answer.json?.code;
    const invalid = (answer.status === 400 && code === 'VALIDATION_ERROR') || (answer.status === 413 && code === 'PAYLOAD_TOO_LARGE');
    if (!invalid) return `expected 400 VALIDATION_ERROR (or 413) for ${rendered.why}, got ${answer.status} ${answer.text.slice(0, 300)}`;
  }
  return undefined;
}

/** One request and everything the properties say about it. */
async function exercise(route: Route, caller: Caller, base: JsonObject, bytes: Buffer, rendered: Rendered | undefined, follow: boolean): Promise<void> {
  const context = () => `${route.name} as ${caller}, body ${showBytes(bytes)}`;
  const credentials = credentialsOf(caller);
  const key = randomUUID();

  const before = await route.observe(base);
  const answer = await signedPost(api.baseUrl, credentials, route.path, bytes, key);
  note(route.name, answer);

  const problem = answerProblem(answer);
  assertThat(problem === undefined, () => `${context()}: ${problem}`);
  if (rendered !== undefined) {
    const unexpected = expectationProblem(rendered, answer);
    assertThat(unexpected === undefined, () => `${context()}: ${unexpected}`);
  }
  const after = await route.observe(base);
  const writes = await route.verify(base, before, after, answer, bytes);
  assertThat(writes === undefined, () => `${context()}: ${writes}`);
  if (!follow) return;

  if (ok(answer)) {
    // The same key and bytes again: the first answer, marked as a replay, and nothing written a second time.
    const replay = await signedPost(api.baseUrl, credentials, route.path, bytes, key);
    assertThat(
      replay.status === answer.status && JSON.stringify(replay.json) === JSON.stringify({ ...answer.json, idempotentReplay: true }),
      () => `${context()}: the replay answered ${replay.status} ${replay.text.slice(0, 200)} for ${answer.status} ${answer.text.slice(0, 200)}`,
    );
    const again = await route.observe(base);
    assertThat(JSON.stringify(again) === JSON.stringify(after), () => `${context()}: the replay wrote ${JSON.stringify(again)} over ${JSON.stringify(after)}`);
  } else if (answer.json?.code === 'VALIDATION_ERROR' || answer.json?.code === 'PAYLOAD_TOO_LARGE') {
    // A refused body is not stored under its key: the corrected (valid) body under the same key runs afresh.
    const fixed = Buffer.from(serialize(base), 'utf8');
    const retry = await signedPost(api.baseUrl, credentials, route.path, fixed, key);
    assertThat(ok(retry), () => `${context()}: the valid body under the refused request's key answered ${retry.status} ${retry.text.slice(0, 300)}`);
    const final = await route.observe(base);
    const retried = await route.verify(base, after, final, retry, fixed);
    assertThat(retried === undefined, () => `${context()}: the retry with the valid body: ${retried}`);
  }
}

/**
 * Runs per property and route, so the whole fuzz suite stays within about a minute and a half on a busy 2-core
 * machine (FUZZ_RUNS_FACTOR scales them). checkout-intent-v2 shares checkout-intent's body and use case: fewer runs,
 * and no sweep of its own.
 */
const BUDGET: Record<string, { nearValid: number; arbitrary: number; sweep: boolean }> = {
  'POST /clients': { nearValid: 28, arbitrary: 16, sweep: true },
  'POST /transactions/initialize': { nearValid: 28, arbitrary: 16, sweep: true },
  'POST /transactions/checkout-intent': { nearValid: 28, arbitrary: 16, sweep: true },
  'POST /transactions/checkout-intent-v2': { nearValid: 16, arbitrary: 10, sweep: false },
  'POST /transactions/attach-intent': { nearValid: 18, arbitrary: 10, sweep: true },
};

describe.each(routes.map((route) => [route.name, route] as const))('fuzz %s (valid signatures)', (_name, route) => {
  const budget = BUDGET[route.name] ?? { nearValid: 16, arbitrary: 10, sweep: true };

  it('near-valid bodies: never a 5xx, the spec error body, the documented answer, no partial write', async () => {
    await fc.assert(
      fc.asyncProperty(seed, plan, fc.constantFrom(...route.callers), fc.boolean(), async (seedValue: Seed, mutation: Plan, caller: Caller, follow: boolean) => {
        const base = await route.prepare(seedValue);
        const rendered = render(mutation, route.fields, base);
        await exercise(route, caller, base, rendered.bytes, rendered, follow);
      }),
      fuzzParameters(`near-valid ${route.name}`, budget.nearValid),
    );
  }, 300_000);

  it('arbitrary bodies (any JSON, deep nesting, odd Unicode, raw bytes): never a 5xx, the spec error body, no partial write', async () => {
    await fc.assert(
      fc.asyncProperty(seed, arbitraryBody(route.fields.map((field) => field.name)), fc.constantFrom(...route.callers), async (seedValue: Seed, body, caller: Caller) => {
        const base = route.name.includes('attach') ? await route.prepare(seedValue) : {};
        await exercise(route, caller, base, body.bytes, undefined, false);
      }),
      fuzzParameters(`arbitrary ${route.name}`, budget.arbitrary),
    );
  }, 300_000);

  // The values the route's own rules turn on (a fee under the service fee, an existing client_id, an inactive client,
  // another partner, an intent of another amount ...) are where a refusal may come after a write: each once.
  if (budget.sweep) it('every business edge (each field example once): never a 5xx, the spec error body, the documented answer, no partial write', async () => {
    const [seedValue] = fc.sample(seed, { numRuns: 1, seed: 1 }) as [Seed];
    for (const field of route.fields) {
      for (const index of (field.examples?.() ?? []).keys()) {
        const base = await route.prepare(seedValue);
        const rendered = render({ kind: 'example', pick: 0, example: index }, [field], base);
        await exercise(route, 'partner', base, rendered.bytes, rendered, false);
      }
    }
  }, 300_000);
});

describe('fuzz partner mutations: coverage', () => {
  it('reached both an accepted and a refused answer on every route (the properties above were not vacuous)', () => {
    console.log(
      'fuzz partner mutations:',
      JSON.stringify(Object.fromEntries([...seen].map(([route, entry]) => [route, { accepted: entry.accepted, refused: entry.refused, statuses: [...entry.statuses].sort() }]))),
    );
    for (const route of routes) {
      const entry = seen.get(route.name);
      expect({ route: route.name, accepted: (entry?.accepted ?? 0) > 0, refused: (entry?.refused ?? 0) > 0 }).toEqual({ route: route.name, accepted: true, refused: true });
    }
  });
});
