/**
 * Property-based fuzzing of the admin mutations (POST /admin/partners, PATCH /admin/partners/{id},
 * POST /admin/partners/{id}/webhook-endpoints) over HTTP with a valid admin token: near-valid bodies (a valid
 * body with one thing changed, `test/support/fuzz/json.ts`) and arbitrary ones (any JSON, deep nesting, odd Unicode, bytes).
 *
 * Properties: never a 5xx; every non-2xx is the spec's `{ error, code }` (+ `details` on VALIDATION_ERROR) with
 * the code's status; the valid body in any layout is accepted and a body that breaks a documented rule is a 400
 * VALIDATION_ERROR (413 past 32 KB); and never a partial write: a refused create made no partner / endpoint and a
 * refused update changed nothing, an accepted one made exactly the record its answer shows.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { TestApi } from '../support/api';
import { adminSend, answerProblem, assertThat, fuzzParameters, type Answer } from '../support/fuzz/http';
import { arbitraryBody, showBytes, type Json, type JsonObject } from '../support/fuzz/json';
import { breaksStringRules, plan, render, type FieldSpec, type Plan, type Rendered } from '../support/fuzz/mutations';

let api: TestApi;
/** The partner the updates and endpoint creations are aimed at (used by nothing else). */
let target: string;

beforeAll(async () => {
  api = await TestApi.start();
  target = (await api.createPartner({ name: `fz-admin-target-${randomUUID()}` })).partnerId;
}, 60_000);
afterAll(() => api.close());

const PARTNER_EVENTS = ['transaction_succeeded', 'transaction_failed', 'transaction_abandoned', 'transaction_refunded', 'transaction_chargeback'];

const validText = (max: number) =>
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: max }).filter((text) => breaksStringRules({ name: 't', type: 'string', required: true, rules: 'text', minLength: 1, maxLength: max }, text) === undefined);

interface Seed {
  text: string;
  fee: number;
  status: string;
  kyc: string;
  rateLimit: number | null;
  branding: JsonObject | null;
  events: string[];
  fields: boolean[];
}
const seed: fc.Arbitrary<Seed> = fc.record({
  text: validText(30),
  fee: fc.constantFrom(0, 1.5, 2.25, 99.9999, 100),
  status: fc.constantFrom('active', 'suspended'),
  kyc: fc.constantFrom('pending', 'approved', 'rejected'),
  rateLimit: fc.option(fc.integer({ min: 1, max: 1_000_000 })),
  branding: fc.option(
    fc.record({
      display_name: fc.option(validText(20)),
      logo_url: fc.option(fc.constantFrom('https://example.com/logo.png', 'http://cdn.example.org/a/b.svg?v=1')),
      brand_color: fc.option(fc.stringMatching(/^#[0-9a-fA-F]{6}$/)),
    }) as fc.Arbitrary<JsonObject>,
  ),
  events: fc.subarray(PARTNER_EVENTS, { minLength: 1 }),
  fields: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
});

const partnerFields = (required: boolean): FieldSpec[] => [
  { name: 'name', type: 'string', required, rules: 'text', minLength: 1, maxLength: 200, examples: () => ['x'.repeat(200), 'x'.repeat(201), 'A', 'Caf\u00e9 \u{1f600}'] },
  { name: 'service_fee_percentage', type: 'number', required, min: 0, max: 100, examples: () => [0, 100, 100.0001, 1.23456, 1.2345, -0.0001, 0.1 + 0.2] },
  { name: 'status', type: 'string', required: false, rules: 'plain', examples: () => ['active', 'suspended', 'ACTIVE', 'deleted', null] },
  { name: 'kyc_status', type: 'string', required: false, rules: 'plain', examples: () => ['pending', 'approved', 'rejected', 'APPROVED', null] },
  { name: 'rate_limit_per_minute', type: 'number', required: false, nullable: true, min: 1, max: 1_000_000, examples: () => [0, 1, 1_000_000, 1_000_001, 1.5, null] },
  {
    name: 'branding',
    type: 'object',
    required: false,
    nullable: true,
    examples: (): Json[] => [
      null,
      {},
      { display_name: null, logo_url: null, brand_color: null },
      { logo_url: 'javascript:alert(1)' },
      { logo_url: 'ftp://example.com/logo.png' },
      { logo_url: `https://example.com/${'a'.repeat(2100)}` },
      { brand_color: '#12345g' },
      { brand_color: '#ABCDEF' },
      { display_name: ' padded' },
      { extra: 1 },
    ],
  },
];

interface Route {
  name: string;
  method: string;
  path: () => string;
  fields: FieldSpec[];
  base(seed: Seed, token: string): JsonObject;
  observe(): Promise<unknown>;
  verify(token: string, before: any, after: any, answer: Answer, sent: Buffer): Promise<string | undefined>;
  cleanup?(answer: Answer): Promise<void>;
}

const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300;
const sentBody = (sent: Buffer): JsonObject => JSON.parse(sent.toString('utf8')) as JsonObject;
const newestPartners = async () => ((await api.admin('GET', '/admin/partners?limit=20')).body.items as Array<{ partner_id: string; name: string }>).map(({ partner_id, name }) => ({ partner_id, name }));
const readPartner = async (partnerId: string) => (await api.admin('GET', `/admin/partners/${partnerId}`)).body;

/** The partner as the answer shows it holds what was sent (absent fields: unchanged, or the create defaults). */
function partnerHolds(partner: Record<string, any>, body: JsonObject, previous: Record<string, any> | undefined): string | undefined {
  const expectField = (field: string, value: unknown) => (JSON.stringify(partner[field]) === JSON.stringify(value) ? undefined : `${field} is ${JSON.stringify(partner[field])}, sent ${JSON.stringify(value)}`);
  const defaults: Record<string, Json> = { status: 'active', kyc_status: 'pending', rate_limit_per_minute: null };
  for (const field of ['name', 'service_fee_percentage', 'status', 'kyc_status', 'rate_limit_per_minute']) {
    const value = Object.hasOwn(body, field) ? body[field] : previous === undefined ? defaults[field] : previous[field];
    const problem = expectField(field, value);
    if (problem !== undefined) return problem;
  }
  const branding = body.branding as JsonObject | null | undefined;
  if (branding !== undefined) {
    const shown = { display_name: branding?.display_name ?? partner.name, logo_url: branding?.logo_url ?? null, brand_color: branding?.brand_color ?? null };
    return expectField('branding', shown);
  }
  return undefined;
}

const routes: Route[] = [
  {
    name: 'POST /admin/partners',
    method: 'POST',
    path: () => '/admin/partners',
    fields: partnerFields(true),
    base: (seed, token) => ({
      name: `fz-${token} ${seed.text}`,
      service_fee_percentage: seed.fee,
      status: seed.status,
      kyc_status: seed.kyc,
      rate_limit_per_minute: seed.rateLimit,
      branding: seed.branding,
    }),
    observe: newestPartners,
    verify: async (token, before: Array<{ partner_id: string; name: string }>, after: Array<{ partner_id: string; name: string }>, answer, sent) => {
      // Other test files may create partners meanwhile: only those carrying this run's name count.
      let name: unknown;
      try {
        name = sentBody(sent).name;
      } catch {
        name = undefined;
      }
      const ours = after.filter((p) => !before.some((b) => b.partner_id === p.partner_id) && (p.name.includes(token) || p.name === name));
      if (!ok(answer)) return ours.length === 0 ? undefined : `a refused create (${answer.status}) made partners ${JSON.stringify(ours)}`;
      if (ours.length !== 1 || ours[0]?.partner_id !== answer.json?.partner_id) return `an accepted create made ${JSON.stringify(ours)}, answering ${answer.json?.partner_id}`;
      const stored = await readPartner(answer.json.partner_id);
      if (JSON.stringify(stored) !== JSON.stringify(answer.json)) return `stored ${JSON.stringify(stored)}, answered ${answer.text}`;
      return partnerHolds(stored, sentBody(sent), undefined);
    },
  },
  {
    name: 'PATCH /admin/partners/{id}',
    method: 'PATCH',
    path: () => `/admin/partners/${target}`,
    fields: partnerFields(false),
    base: (seed, token) => {
      const optional: JsonObject = { service_fee_percentage: seed.fee, status: seed.status, kyc_status: seed.kyc, rate_limit_per_minute: seed.rateLimit, branding: seed.branding };
      const body: JsonObject = { name: `fz-${token} ${seed.text}` };
      Object.keys(optional).forEach((key, index) => {
        if (seed.fields[index] === true) body[key] = optional[key] as Json;
      });
      // At least two fields, so that removing one (an optional field) still leaves a valid update.
      if (Object.keys(body).length === 1) body.status = seed.status;
      return body;
    },
    observe: () => readPartner(target),
    verify: async (_token, before, after, answer, sent) => {
      if (!ok(answer)) return JSON.stringify(after) === JSON.stringify(before) ? undefined : `a refused update (${answer.status}) changed ${JSON.stringify(before)} to ${JSON.stringify(after)}`;
      if (JSON.stringify(after) !== JSON.stringify(answer.json)) return `stored ${JSON.stringify(after)}, answered ${answer.text}`;
      return partnerHolds(after, sentBody(sent), before);
    },
  },
  {
    name: 'POST /admin/partners/{id}/webhook-endpoints',
    method: 'POST',
    path: () => `/admin/partners/${target}/webhook-endpoints`,
    fields: [
      { name: 'name', type: 'string', required: true, rules: 'text', minLength: 1, maxLength: 100, examples: () => ['x'.repeat(100), 'x'.repeat(101)] },
      {
        name: 'url',
        type: 'string',
        required: true,
        rules: 'plain',
        maxLength: 2048,
        examples: () => [
          'http://127.0.0.1:1/hook',
          'https://user:pass@example.com/hook',
          'ftp://example.com/hook',
          'https://[::1]/hook',
          `https://example.com/${'a'.repeat(2100)}`,
          ' https://example.com/padded ',
          'https://example.com/#fragment',
          'javascript:alert(1)',
          'https://exa mple.com/',
          'https://example.com:99999/',
        ],
      },
      {
        name: 'events',
        type: 'array',
        required: true,
        examples: () => [[], ['transaction_succeeded', 'transaction_succeeded'], PARTNER_EVENTS, ['transaction_unknown'], ['Transaction_succeeded'], [null]],
      },
    ],
    base: (seed, token) => ({ name: seed.text, url: `https://hooks.example.com/${token}`, events: seed.events }),
    observe: async () => (await api.admin('GET', `/admin/partners/${target}/webhook-endpoints`)).body.items,
    verify: async (_token, before: Array<{ id: string }>, after: Array<{ id: string; name: string; url: string; events: string[] }>, answer, sent) => {
      const fresh = after.filter((endpoint) => !before.some((b) => b.id === endpoint.id));
      if (!ok(answer)) return fresh.length === 0 ? undefined : `a refused create (${answer.status}) made endpoints ${JSON.stringify(fresh)}`;
      if (fresh.length !== 1 || fresh[0]?.id !== answer.json?.id) return `an accepted create made ${JSON.stringify(fresh)}, answering ${answer.json?.id}`;
      const body = sentBody(sent);
      const [stored] = fresh as [(typeof fresh)[number]];
      return stored.name === body.name && stored.url === String(body.url).trim() && JSON.stringify(stored.events) === JSON.stringify(body.events)
        ? undefined
        : `stored ${JSON.stringify(stored)} for sent ${sent.toString('utf8').slice(0, 300)}`;
    },
    // Keep the partner under its 20 endpoints.
    cleanup: async (answer) => {
      if (ok(answer)) await api.admin('DELETE', `/admin/partners/${target}/webhook-endpoints/${answer.json.id}`);
    },
  },
];

const seen = new Map<string, { accepted: number; refused: number }>();

async function exercise(route: Route, token: string, bytes: Buffer, rendered: Rendered | undefined): Promise<void> {
  const context = () => `${route.name}, body ${showBytes(bytes)}`;
  const before = await route.observe();
  const answer = await adminSend(api.baseUrl, api.adminToken, route.method, route.path(), bytes);
  const entry = seen.get(route.name) ?? { accepted: 0, refused: 0 };
  entry[ok(answer) ? 'accepted' : 'refused']++;
  seen.set(route.name, entry);

  const problem = answerProblem(answer);
  assertThat(problem === undefined, () => `${context()}: ${problem}`);
  if (rendered?.expect === 'accept') assertThat(ok(answer), () => `${context()}: expected a 2xx for ${rendered.why}, got ${answer.status} ${answer.text.slice(0, 300)}`);
  if (rendered?.expect === 'invalid') {
    const invalid = (answer.status === 400 && answer.json?.code === 'VALIDATION_ERROR') || (answer.status === 413 && answer.json?.code === 'PAYLOAD_TOO_LARGE');
    assertThat(invalid, () => `${context()}: expected 400 VALIDATION_ERROR (or 413) for ${rendered.why}, got ${answer.status} ${answer.text.slice(0, 300)}`);
  }
  const after = await route.observe();
  const writes = await route.verify(token, before, after, answer, bytes);
  await route.cleanup?.(answer);
  assertThat(writes === undefined, () => `${context()}: ${writes}`);
}

describe.each(routes.map((route) => [route.name, route] as const))('fuzz %s (valid admin token)', (_name, route) => {
  it('near-valid bodies: never a 5xx, the spec error body, the documented answer, no partial write', async () => {
    await fc.assert(
      fc.asyncProperty(seed, plan, async (seedValue: Seed, mutation: Plan) => {
        const token = randomUUID();
        const rendered = render(mutation, route.fields, route.base(seedValue, token));
        await exercise(route, token, rendered.bytes, rendered);
      }),
      fuzzParameters(`near-valid ${route.name}`, 40),
    );
  }, 300_000);

  it('arbitrary bodies: never a 5xx, the spec error body, no partial write', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryBody(route.fields.map((field) => field.name)), async (body) => {
        await exercise(route, randomUUID(), body.bytes, undefined);
      }),
      fuzzParameters(`arbitrary ${route.name}`, 20),
    );
  }, 300_000);

  it('every business edge (each field example once): never a 5xx, the spec error body, the documented answer, no partial write', async () => {
    const [seedValue] = fc.sample(seed, { numRuns: 1, seed: 1 }) as [Seed];
    for (const field of route.fields) {
      for (const index of (field.examples?.() ?? []).keys()) {
        const token = randomUUID();
        const rendered = render({ kind: 'example', pick: 0, example: index }, [field], route.base(seedValue, token));
        await exercise(route, token, rendered.bytes, rendered);
      }
    }
  }, 300_000);
});

describe('fuzz admin mutations: coverage', () => {
  it('reached both an accepted and a refused answer on every route', () => {
    console.log('fuzz admin mutations:', JSON.stringify(Object.fromEntries(seen)));
    for (const route of routes) {
      const entry = seen.get(route.name);
      expect({ route: route.name, accepted: (entry?.accepted ?? 0) > 0, refused: (entry?.refused ?? 0) > 0 }).toEqual({ route: route.name, accepted: true, refused: true });
    }
  });
});
