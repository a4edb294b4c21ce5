/**
 * The world of the partner-mutation fuzz suite (`test/reliability/fuzz-partner-mutations.test.ts`): the
 * fuzzed partner and its keys, the fixtures the routes' own rules turn on (other partners, inactive clients, used
 * intents), the valid space each route's base body is drawn from, and per route its fields (`mutations.ts`),
 * a fresh valid body, and how its writes are seen from outside and checked.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import Stripe from 'stripe';
import { config } from '../../../lib/config';
import { TestApi, type PartnerCredentials } from '../api';
import type { Answer } from './http';
import type { Json, JsonObject } from './json';
import { breaksStringRules, type FieldSpec } from './mutations';

export let api: TestApi;
export let partner: PartnerCredentials;
export let platform: Omit<PartnerCredentials, 'partnerId'>;
/** An active client of `partner`. */
export let clientId: string;
/** What the routes' own rules turn on, for the `example` mutations: other partners, inactive clients, used intents. */
const fixtures = {
  otherPartner: '',
  otherClient: '',
  otherTx: '',
  suspendedPartner: '',
  kycPendingPartner: '',
  suspendedClient: '',
  pendingKycClient: '',
  pendingTx: '',
  pendingTxIntent: '',
  wrongAmountIntent: '',
  canceledIntent: '',
};

const sandbox = new URL(config.PROCESSOR_API_BASE ?? '');
const stripe = new Stripe(config.PROCESSOR_SECRET_KEY ?? '', { host: sandbox.hostname, port: Number(sandbox.port), protocol: 'http' });

/**
 * Starts the local API and makes the world: the fuzzed partner (never rate limited here: every request must reach
 * the body and the use case), a platform key, an active client and the fixtures.
 */
export async function setUpWorld(): Promise<void> {
  api = await TestApi.start();
  partner = await api.createPartner({ rate_limit_per_minute: 1_000_000, service_fee_percentage: 1.5 });
  platform = await api.createPlatformKey();
  clientId = await api.createClient(partner);
  const other = await api.createPartner();
  fixtures.otherPartner = other.partnerId;
  fixtures.otherClient = await api.createClient(other);
  fixtures.otherTx = (await api.signed(other, '/transactions/initialize', { partner_id: other.partnerId, client_id: fixtures.otherClient, amount: 1500, currency: 'JPY', partner_reference: 'fz-other' })).body.svc_tx_id;
  fixtures.suspendedPartner = (await api.createPartner({ status: 'suspended' })).partnerId;
  fixtures.kycPendingPartner = (await api.createPartner({ kyc_status: 'pending' })).partnerId;
  fixtures.suspendedClient = await api.createClient(partner, { status: 'suspended' });
  fixtures.pendingKycClient = await api.createClient(partner, { status: 'pending_kyc' });
  const checkout = await api.signed(partner, '/transactions/checkout-intent', {
    partner_id: partner.partnerId,
    client_id: clientId,
    amount: 1500,
    currency: 'JPY',
    email: 'buyer@example.com',
    partner_reference: 'fz-pending',
  });
  fixtures.pendingTx = checkout.body.svc_tx_id;
  fixtures.pendingTxIntent = checkout.body.processor_payment_intent_id;
  fixtures.wrongAmountIntent = (await stripe.paymentIntents.create({ amount: 1499, currency: 'jpy', automatic_payment_methods: { enabled: true } })).id;
  const canceled = await stripe.paymentIntents.create({ amount: 1500, currency: 'jpy', automatic_payment_methods: { enabled: true } });
  fixtures.canceledIntent = (await stripe.paymentIntents.cancel(canceled.id)).id;
}

// ---------------------------------------------------------------------------------------------------------------
// The valid space each route's base body is drawn from

const validText = (min: number, max: number) =>
  fc.string({ unit: 'grapheme', minLength: min, maxLength: max }).filter((text) => breaksStringRules({ name: 't', type: 'string', required: true, rules: 'text', minLength: min, maxLength: max }, text) === undefined);
/** The end of a `client_id` (after a fixed ASCII start): it may not end in whitespace either. */
const validIdentifierSuffix = fc
  .string({ unit: 'grapheme', maxLength: 12 })
  .filter((text) => breaksStringRules({ name: 'i', type: 'string', required: true, rules: 'identifier', maxLength: 100 }, `x${text}`) === undefined);
const validMeta = fc
  .dictionary(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 10 }), fc.constantFrom('__proto__', 'constructor')), fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' }) as fc.Arbitrary<Json>, { maxKeys: 6 })
  .filter((meta) => Buffer.byteLength(JSON.stringify(meta)) <= 4096);
/** Amounts every currency's rules, Stripe's units and the sandbox take (currency in any case). */
const validMoney = fc.constantFrom(
  { amount: 12.34, currency: 'USD' },
  { amount: 1500, currency: 'jpy' },
  { amount: 1.23, currency: 'KWD' },
  { amount: 5, currency: 'eur' },
  { amount: 99.99, currency: 'Gbp' },
);

export interface Seed {
  text: string;
  suffix: string;
  money: { amount: number; currency: string };
  meta: JsonObject | null;
  descriptor: string | null;
  namesPartner: boolean;
}
export const seed: fc.Arbitrary<Seed> = fc.record({
  text: validText(2, 40),
  suffix: validIdentifierSuffix,
  money: validMoney,
  meta: fc.option(validMeta, { freq: 2 }),
  descriptor: fc.option(fc.stringMatching(/^[A-Za-z0-9 _.-]{1,22}$/), { freq: 2 }),
  namesPartner: fc.boolean(),
});

// ---------------------------------------------------------------------------------------------------------------
// The routes

export type Caller = 'partner' | 'platform';
export const credentialsOf = (caller: Caller) => (caller === 'partner' ? partner : platform);

/** What a route's writes look like from outside: the partner's newest records, and the transaction a body names. */
export interface Observation {
  newest: string[];
  tx?: { status: string; processorPaymentIntentId: string | null } | undefined;
}

export interface Route {
  name: string;
  path: string;
  fields: FieldSpec[];
  callers: Caller[];
  /** A valid body, made fresh for one run (new `client_id`, `partner_reference`, or transaction and intent). */
  prepare(seed: Seed): Promise<JsonObject>;
  observe(base: JsonObject): Promise<Observation>;
  /** Why the writes `before` -> `after` are not those of `answer` to `sent`, or `undefined`. */
  verify(base: JsonObject, before: Observation, after: Observation, answer: Answer, sent: Buffer): Promise<string | undefined>;
}

const newestTransactions = async () => ((await api.read(partner, '/transactions?limit=5')).body.items as Array<{ svcTxId: string }>).map((tx) => tx.svcTxId);
const newestClients = async () => ((await api.read(partner, '/clients?limit=5')).body.items as Array<{ client_id: string }>).map((client) => client.client_id);
const created = (before: Observation, after: Observation) => after.newest.filter((id) => !before.newest.includes(id));
export const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300;

const paymentFields: FieldSpec[] = [
  {
    name: 'partner_id',
    type: 'string',
    required: true,
    rules: 'plain',
    minLength: 1,
    maxLength: 64,
    examples: () => [fixtures.otherPartner, fixtures.suspendedPartner, fixtures.kycPendingPartner, partner.partnerId, 'ptr_000000000000000000000000'],
  },
  {
    name: 'client_id',
    type: 'string',
    required: true,
    rules: 'identifier',
    minLength: 3,
    maxLength: 128,
    examples: () => [fixtures.suspendedClient, fixtures.pendingKycClient, fixtures.otherClient, clientId, `${clientId}#x`, 'no-such-client'],
  },
  {
    name: 'amount',
    type: 'number',
    required: true,
    above: 0,
    max: 99_999_999,
    examples: () => [0.01, 0.1, 0.5, 1, 0.001, 0.005, 0.01 + 0.02, 12.345, 1.2, 999_999.99, 1_000_000, 99_999, 99_999.999, 99_999_999, 100_000_000, 5e-324],
  },
  {
    name: 'currency',
    type: 'string',
    required: true,
    rules: 'plain',
    minLength: 3,
    maxLength: 3,
    examples: () => ['usd', 'USD', 'uSd', 'JPY', 'KWD', 'BHD', 'ISK', 'MGA', 'CLF', 'XXX', 'XTS', 'QQQ', 'BTC', 'EUR '],
  },
  { name: 'partner_reference', type: 'string', required: true, rules: 'text', minLength: 1, maxLength: 255, examples: () => ['\u{1f600}'.repeat(250), '\u{1f600}'.repeat(251), 'x'.repeat(255), 'fz-pending'] },
  { name: 'meta', type: 'object', required: false, examples: () => [{}, JSON.parse('{"__proto__":{"polluted":true}}') as JsonObject, Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])), { big: 'x'.repeat(4096) }] },
];
const checkoutFields: FieldSpec[] = [
  ...paymentFields,
  { name: 'email', type: 'string', required: true, rules: 'plain', minLength: 1, examples: () => ['a@b.co', 'not-an-email', 'x@localhost', '"q"@example.com', 'a@b', 'ü@exämple.com'] },
  {
    name: 'statement_descriptor_suffix',
    type: 'string',
    required: false,
    rules: 'plain',
    minLength: 1,
    maxLength: 22,
    examples: () => ['A'.repeat(22), 'A'.repeat(23), 'ok-1_2.3', 'Caf\u00e9', '<script>', ' padded', '***'],
  },
];

function paymentBase(seed: Seed, checkout: boolean): JsonObject {
  const body: JsonObject = {
    partner_id: partner.partnerId,
    client_id: clientId,
    amount: seed.money.amount,
    currency: seed.money.currency,
    partner_reference: `fz-${randomUUID()} ${seed.text}`,
  };
  if (checkout) body.email = `buyer.${randomUUID().slice(0, 8)}@example.com`;
  if (checkout && seed.descriptor !== null) body.statement_descriptor_suffix = seed.descriptor;
  if (seed.meta !== null) body.meta = seed.meta;
  return body;
}

/** A created transaction holds what was sent: the answer's id, the reference, the amount, the currency, `meta`. */
async function verifyCreatedTransaction(base: JsonObject, before: Observation, after: Observation, answer: Answer, sent: Buffer): Promise<string | undefined> {
  const fresh = created(before, after);
  if (!ok(answer)) return fresh.length === 0 ? undefined : `a refused request (${answer.status}) created ${fresh.join(', ')}`;
  if (fresh.length !== 1 || fresh[0] !== answer.json?.svc_tx_id) return `an accepted request created [${fresh.join(', ')}], answering ${answer.json?.svc_tx_id}`;
  const body = JSON.parse(sent.toString('utf8')) as JsonObject;
  const read = (await api.read(partner, `/transactions/${encodeURIComponent(String(answer.json.svc_tx_id))}`)).body;
  // Found by its reference; the base's reference is unique to the run (a mutated one, such as "{", need not be).
  const byReference = await api.read(partner, `/transactions?partner_reference=${encodeURIComponent(String(body.partner_reference))}`);
  const holders = ((byReference.body.items ?? []) as Array<{ svcTxId: string }>).map((tx) => tx.svcTxId);
  if (!holders.includes(String(answer.json.svc_tx_id))) return `GET /transactions?partner_reference= does not find ${answer.json.svc_tx_id}`;
  if (body.partner_reference === base.partner_reference && holders.length !== 1) return `${holders.length} transactions hold the run's own partner_reference`;
  const stored = {
    partnerReference: read.partnerReference,
    amount: read.amount,
    currency: read.currency,
    meta: JSON.stringify(read.meta ?? null),
  };
  const sentFields = {
    partnerReference: body.partner_reference,
    amount: body.amount,
    currency: String(body.currency).toUpperCase(),
    meta: JSON.stringify(body.meta ?? null),
  };
  return JSON.stringify(stored) === JSON.stringify(sentFields) ? undefined : `stored ${JSON.stringify(stored)} for sent ${JSON.stringify(sentFields)}`;
}

export const routes: Route[] = [
  {
    name: 'POST /clients',
    path: '/clients',
    callers: ['partner'],
    fields: [
      { name: 'partner_id', type: 'string', required: false, rules: 'plain', examples: () => [partner.partnerId, fixtures.otherPartner, '', 'ptr_000000000000000000000000'] },
      { name: 'client_id', type: 'string', required: true, rules: 'identifier', minLength: 3, maxLength: 128, examples: () => [clientId, fixtures.suspendedClient, fixtures.otherClient, 'abc', 'ab', 'x'.repeat(128), 'x'.repeat(129)] },
      { name: 'legal_name', type: 'string', required: true, rules: 'text', minLength: 2, maxLength: 200, examples: () => ['AB', 'A', 'x'.repeat(200), 'x'.repeat(201), 'Caf\u00e9 \u{1f600} \u200d'] },
      { name: 'status', type: 'string', required: false, rules: 'plain', examples: () => ['active', 'suspended', 'pending_kyc', 'ACTIVE', 'deleted', null] },
      { name: 'partner_fee_percentage', type: 'number', required: false, nullable: true, min: 0, max: 100, examples: () => [0, 0.5, 1, 1.4999, 1.5, 1.5001, 2.12345, 100, 100.0001, null] },
      { name: 'partner_fee_flat_usd', type: 'number', required: false, nullable: true, min: 0, max: 10, examples: () => [0, 0.01, 0.001, 0.1 + 0.2, 9.99, 10, 10.01, null] },
    ],
    prepare: async (seed) => ({
      ...(seed.namesPartner ? { partner_id: partner.partnerId } : {}),
      client_id: `fz-${randomUUID().slice(0, 18)}${seed.suffix}`,
      legal_name: seed.text,
      status: 'active',
      partner_fee_percentage: 2.5,
      partner_fee_flat_usd: 0.3,
    }),
    observe: async () => ({ newest: await newestClients() }),
    verify: async (_base, before, after, answer, sent) => {
      const fresh = created(before, after);
      if (!ok(answer)) return fresh.length === 0 ? undefined : `a refused request (${answer.status}) created clients ${fresh.join(', ')}`;
      if (fresh.length !== 1 || fresh[0] !== answer.json?.client_id) return `an accepted request created [${fresh.join(', ')}], answering ${answer.json?.client_id}`;
      const body = JSON.parse(sent.toString('utf8')) as JsonObject;
      return answer.json.client_id === body.client_id && answer.json.legal_name === body.legal_name ? undefined : `stored ${answer.text.slice(0, 200)} for sent ${sent.toString('utf8').slice(0, 200)}`;
    },
  },
  {
    name: 'POST /transactions/initialize',
    path: '/transactions/initialize',
    callers: ['partner', 'platform'],
    fields: paymentFields,
    prepare: async (seed) => paymentBase(seed, false),
    observe: async () => ({ newest: await newestTransactions() }),
    verify: (base, before, after, answer, sent) => verifyCreatedTransaction(base, before, after, answer, sent),
  },
  {
    name: 'POST /transactions/checkout-intent',
    path: '/transactions/checkout-intent',
    callers: ['partner', 'platform'],
    fields: checkoutFields,
    prepare: async (seed) => paymentBase(seed, true),
    observe: async () => ({ newest: await newestTransactions() }),
    verify: (base, before, after, answer, sent) => verifyCreatedTransaction(base, before, after, answer, sent),
  },
  {
    name: 'POST /transactions/checkout-intent-v2',
    path: '/transactions/checkout-intent-v2',
    callers: ['partner', 'platform'],
    fields: checkoutFields,
    prepare: async (seed) => paymentBase(seed, true),
    observe: async () => ({ newest: await newestTransactions() }),
    verify: (base, before, after, answer, sent) => verifyCreatedTransaction(base, before, after, answer, sent),
  },
  {
    name: 'POST /transactions/attach-intent',
    path: '/transactions/attach-intent',
    callers: ['partner', 'platform'],
    fields: [
      { name: 'svc_tx_id', type: 'string', required: true, rules: 'plain', minLength: 1, maxLength: 64, examples: () => [fixtures.pendingTx, fixtures.otherTx, `svc_tx_${'0'.repeat(24)}`] },
      {
        name: 'processor_payment_intent_id',
        type: 'string',
        required: true,
        rules: 'plain',
        minLength: 1,
        examples: () => [fixtures.wrongAmountIntent, fixtures.canceledIntent, fixtures.pendingTxIntent, 'pi_000000000000000000000000', `pi_${'x'.repeat(65)}`],
      },
    ],
    // A fresh initialized transaction (JPY 1500) and a fresh intent at the sandbox processor that fits it.
    prepare: async () => {
      const initialized = await api.signed(partner, '/transactions/initialize', {
        partner_id: partner.partnerId,
        client_id: clientId,
        amount: 1500,
        currency: 'JPY',
        partner_reference: `fz-attach-${randomUUID()}`,
      });
      if (initialized.status !== 201) throw new Error(`initialize failed: ${JSON.stringify(initialized.body)}`);
      const intent = await stripe.paymentIntents.create({ amount: 1500, currency: 'jpy', automatic_payment_methods: { enabled: true } });
      return { svc_tx_id: initialized.body.svc_tx_id, processor_payment_intent_id: intent.id };
    },
    observe: async (base) => {
      const tx = (await api.read(partner, `/transactions/${base.svc_tx_id}`)).body;
      return { newest: await newestTransactions(), tx: { status: tx.status, processorPaymentIntentId: tx.processorPaymentIntentId } };
    },
    verify: async (base, before, after, answer) => {
      const fresh = created(before, after);
      if (fresh.length > 0) return `attach-intent created transactions ${fresh.join(', ')}`;
      const { tx } = after;
      if (ok(answer) && answer.json?.svc_tx_id === base.svc_tx_id) {
        // decisions.md §12: the attach applies the outcome the intent already has, and answers the status it applied.
        const expected = statusOfIntent(await stripe.paymentIntents.retrieve(String(answer.json.processor_payment_intent_id)));
        return tx?.status === expected && answer.json.status === expected && tx.processorPaymentIntentId === answer.json.processor_payment_intent_id
          ? undefined
          : `an accepted attach left the transaction ${JSON.stringify(tx)}, its intent's state says ${expected} (answer ${answer.text.slice(0, 200)})`;
      }
      return tx?.status === 'initialized' && tx.processorPaymentIntentId === null ? undefined : `a refused attach (${answer.status}) moved the transaction to ${JSON.stringify(tx)}`;
    },
  },
];

/**
 * The status an attach leaves, by the intent's state at the processor (decisions.md §5, §12): still open → pending;
 * succeeded → succeeded; declined and waiting for another payment method → failed; canceled → abandoned.
 */
function statusOfIntent(intent: { status: string; last_payment_error?: unknown }): string {
  if (intent.status === 'succeeded') return 'succeeded';
  if (intent.status === 'canceled') return 'abandoned';
  return intent.status === 'requires_payment_method' && intent.last_payment_error != null ? 'failed' : 'pending';
}
