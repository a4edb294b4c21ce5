/**
 * Issue 11: property-based fuzzing of POST /webhooks/processor over HTTP with VALID signatures (`t=<now>,v1=<hmac>`
 * keyed by the local webhook secret, as the sandbox processor signs: `signatureHeader`), in `processor-signature`,
 * `Stripe-Signature` or both. Each run makes a real checkout (a pending transaction linked to a sandbox intent)
 * and sends it a sequence of arbitrary events: any type (the mapped ones most of the time), fresh, reused or odd
 * event ids, objects of the right or wrong shape naming its intent, an earlier run's, an unknown one or none, with
 * exact, other or missing money and refund flags, odd metadata, and envelopes that are not events at all.
 *
 * Properties, after every event, for every transaction it could touch (decisions.md §5):
 *   1. never a 5xx; a non-2xx is the spec's `{ error, code }`, never a signature refusal (the signature is valid);
 *      a 2xx is `{ received, svc_tx_id, status }` (the transaction's status now) or
 *      `{ message: "Ignored event type <type>" }`;
 *   2. the status only moves along the allowed lifecycle, one step, by an event of the type mapped to the new
 *      status, whose id never moved anything before ("each processor event id is processed once");
 *   3. amount, currency, reference, client, meta and creation time never change; fees are set once (on the move
 *      to succeeded) and never change afterwards;
 *   4. every move emitted exactly one partner event, none without a move: one delivery per move to the endpoint
 *      subscribed to all five events, each with its own event id;
 *   5. an event the processor would send for an allowed move (exact money, fresh id) moves it; one whose money is
 *      not the transaction's, or a partial refund, moves nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { signatureHeader } from '../../infra/local/processor-sandbox-events';
import { TestApi, type PartnerCredentials } from '../support/api';
import { answerProblem, assertThat, fuzzParameters, send, type Answer } from '../support/fuzz-http';
import { showBytes } from '../support/fuzz-json';
import { ALLOWED_MOVES, eventPlan, renderEvent, STATUS_OF_TYPE, type EventPlan, type Followed, type RenderedEvent } from '../support/fuzz-processor-events';
import { deliveriesOf, webhookSecret } from '../support/processor-events';

let api: TestApi;
let partner: PartnerCredentials;
let clientId: string;

beforeAll(async () => {
  api = await TestApi.start();
  partner = await api.createPartner({ rate_limit_per_minute: 1_000_000 });
  // Fees of its own (3 % + 0.30 USD flat) over the partner's 1.5 %, so the split has every part.
  clientId = await api.createClient(partner, { partner_fee_percentage: 3, partner_fee_flat_usd: 0.3 });
  const endpoint = await api.admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, {
    name: 'fuzz: every event',
    url: 'https://partner.example/webhooks/fuzz',
    events: ['transaction_succeeded', 'transaction_failed', 'transaction_abandoned', 'transaction_refunded', 'transaction_chargeback'],
  });
  if (endpoint.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(endpoint.body)}`);
}, 60_000);
afterAll(() => api.close());

/** Checkouts of every kind of amount: two-decimal, zero-decimal, three-decimal, and ISK (two decimals at Stripe). */
const MONEY = [
  { amount: 49.99, currency: 'USD', stripeAmount: 4999 },
  { amount: 5000, currency: 'JPY', stripeAmount: 5000 },
  { amount: 1.23, currency: 'KWD', stripeAmount: 1230 },
  { amount: 10, currency: 'EUR', stripeAmount: 1000 },
  { amount: 500, currency: 'ISK', stripeAmount: 50_000 },
] as const;

/** What the suite knows of a transaction: what must never change, and the moves it saw. */
interface Model extends Followed {
  fixed: string;
  status: string;
  fees: string | null;
  moves: string[];
}

const models = new Map<string, Model>();
/** Event ids sent so far (a `reuse` picks among them), and those that moved a transaction. */
const sentIds: string[] = [];
const movingIds = new Set<string>();
const stats = { runs: 0, events: 0, moves: 0, canonical: 0, statuses: new Map<string, number>() };

const FEE_FIELDS = ['processorFeePercent', 'partnerFeePercent', 'partnerPayoutPercent', 'svcEarningPercent', 'svcEarningAmount', 'processorFee', 'platformFee', 'netAmount'];
const FIXED_FIELDS = ['svcTxId', 'partnerId', 'clientId', 'partnerReference', 'processorPaymentIntentId', 'amount', 'currency', 'meta', 'createdAt'];
const pick = (read: Record<string, unknown>, fields: string[]) => JSON.stringify(fields.map((field) => [field, read[field]]));

async function checkout(money: (typeof MONEY)[number]): Promise<Model> {
  const response = await api.signed(partner, '/transactions/checkout-intent', {
    partner_id: partner.partnerId,
    client_id: clientId,
    amount: money.amount,
    currency: money.currency,
    email: 'buyer@example.com',
    partner_reference: `fz-hook-${randomUUID()}`,
    meta: { fuzz: true, nested: { list: [1, 'two', null] } },
  });
  if (response.status !== 201) throw new Error(`checkout failed: ${response.status} ${JSON.stringify(response.body)}`);
  const read = (await api.read(partner, `/transactions/${response.body.svc_tx_id}`)).body;
  const model: Model = {
    svcTxId: response.body.svc_tx_id,
    intentId: response.body.processor_payment_intent_id,
    currency: money.currency,
    stripeAmount: money.stripeAmount,
    fixed: pick(read, FIXED_FIELDS),
    status: read.status,
    fees: null,
    moves: [],
  };
  models.set(model.svcTxId, model);
  return model;
}

/** The event, signed now (or up to 4 minutes ago: within the 300 s tolerance) with the local webhook secret. */
async function post(event: RenderedEvent, plan: EventPlan): Promise<Answer> {
  const timestamp = Math.floor(Date.now() / 1000) - plan.ageSeconds;
  const text = event.bytes.toString('utf8');
  const signature = Buffer.from(text, 'utf8').equals(event.bytes)
    ? signatureHeader(webhookSecret(), text, timestamp)
    : `t=${timestamp},v1=${createHmac('sha256', webhookSecret()).update(`${timestamp}.`).update(event.bytes).digest('hex')}`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (plan.header !== 'stripe-signature') headers['processor-signature'] = signature;
  // With both, Stripe's header holds someone else's signature: the spec's header is the one read.
  headers['stripe-signature'] = plan.header === 'both' ? `t=${timestamp},v1=${'0'.repeat(64)}` : signature;
  if (plan.header === 'processor-signature') delete headers['stripe-signature'];
  return send(`${api.baseUrl}/webhooks/processor`, { method: 'POST', headers, body: event.bytes });
}

/** Properties 2-5 for one transaction after one event; updates its model. */
async function checkTransaction(model: Model, event: RenderedEvent, answer: Answer, context: () => string): Promise<void> {
  const read = (await api.read(partner, `/transactions/${model.svcTxId}`)).body as Record<string, unknown>;
  const status = String(read.status);
  const fees = read.netAmount === null ? null : pick(read, FEE_FIELDS);
  const named = event.names?.svcTxId === model.svcTxId;

  assertThat(pick(read, FIXED_FIELDS) === model.fixed, () => `${context()}: the transaction's fixed fields changed: ${model.fixed} -> ${pick(read, FIXED_FIELDS)}`);
  if (status !== model.status) {
    assertThat(ALLOWED_MOVES[model.status]?.includes(status) === true, () => `${context()}: moved ${model.status} -> ${status}, not an allowed move`);
    assertThat(named, () => `${context()}: moved ${model.status} -> ${status} by an event that does not name it`);
    assertThat(STATUS_OF_TYPE[event.type] === status, () => `${context()}: moved to ${status} by an event of type ${JSON.stringify(event.type)}`);
    assertThat(typeof event.id === 'string' && !movingIds.has(event.id), () => `${context()}: moved by event id ${JSON.stringify(event.id)}, which ${typeof event.id === 'string' ? 'had moved a transaction already' : 'is not a string'}`);
    assertThat(event.mustNotMove === undefined, () => `${context()}: moved ${model.status} -> ${status} though ${event.mustNotMove}`);
  } else if (named && event.canonical && ALLOWED_MOVES[model.status]?.includes(STATUS_OF_TYPE[event.type] ?? '') && typeof event.id === 'string' && !sentIds.slice(0, -1).includes(event.id)) {
    assertThat(false, () => `${context()}: a valid ${event.type} with a fresh id did not move ${model.status} -> ${STATUS_OF_TYPE[event.type]} (answer ${answer.status} ${answer.text.slice(0, 200)})`);
  }
  // Fees: computed once, on the move to succeeded, and never changed afterwards.
  if (model.fees === null) assertThat(fees === null || (status === 'succeeded' && model.status !== 'succeeded'), () => `${context()}: fees appeared without a move to succeeded (${model.status} -> ${status})`);
  else assertThat(fees === model.fees, () => `${context()}: fees changed ${model.fees} -> ${fees}`);
  if (status !== model.status) {
    model.moves.push(status);
    if (typeof event.id === 'string') movingIds.add(event.id);
    stats.moves++;
  }
  model.status = status;
  model.fees = fees;

  // A 200 about this transaction names it and its status now.
  if (answer.status === 200 && answer.json?.received === true && answer.json.svc_tx_id === model.svcTxId) {
    assertThat(answer.json.status === status, () => `${context()}: answered status ${answer.json.status}, the transaction is ${status}`);
  }
  // One partner event per move, none otherwise.
  const deliveries = await deliveriesOf(partner.partnerId, model.svcTxId);
  const delivered = deliveries.map((delivery) => delivery.event).sort();
  const expected = model.moves.map((moved) => `transaction_${moved}`).sort();
  assertThat(JSON.stringify(delivered) === JSON.stringify(expected), () => `${context()}: partner events ${JSON.stringify(delivered)} for moves ${JSON.stringify(model.moves)}`);
  assertThat(new Set(deliveries.map((delivery) => delivery.eventId)).size === deliveries.length, () => `${context()}: two deliveries share a partner event id`);
}

describe('fuzz POST /webhooks/processor (valid signatures)', () => {
  it('arbitrary signed events: never a 5xx, only allowed moves by their own event, fixed amounts, one partner event per move', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...MONEY), fc.array(eventPlan, { minLength: 1, maxLength: 8 }), async (money, plans) => {
        stats.runs++;
        const run = await checkout(money);
        const older = [...models.values()].filter((model) => model.svcTxId !== run.svcTxId);
        for (const [index, plan] of plans.entries()) {
          const event = renderEvent(plan, run, older, sentIds);
          if (typeof event.id === 'string') sentIds.push(event.id);
          const context = () => `event ${index + 1}/${plans.length} (${plan.header}, ${event.canonical ? 'canonical' : 'not canonical'}) ${showBytes(event.bytes, 600)}`;
          const answer = await post(event, plan);
          stats.events++;
          const label = `${answer.status} ${answer.json?.code ?? answer.json?.status ?? 'ignored'}`;
          stats.statuses.set(label, (stats.statuses.get(label) ?? 0) + 1);
          if (event.canonical) stats.canonical++;

          const problem = answerProblem(answer);
          assertThat(problem === undefined, () => `${context()}: ${problem}`);
          // Every event here is validly signed, the empty body too: never refused for its signature.
          assertThat(answer.json?.code !== 'PROCESSOR_SIGNATURE_INVALID' && answer.json?.code !== 'PROCESSOR_SIGNATURE_MISSING', () => `${context()}: a valid signature refused: ${answer.text}`);
          if (answer.status === 200) {
            const keys = Object.keys(answer.json ?? {}).sort().join(',');
            assertThat(keys === 'received,status,svc_tx_id' || (keys === 'message' && answer.json.message === `Ignored event type ${event.type}`) || (keys === 'message' && plan.envelope === 'arbitrary'), () => `${context()}: a 200 of another shape: ${answer.text.slice(0, 200)}`);
          }
          // Every transaction the event could have touched: the run's, and the earlier one it names.
          const touched = new Set([run.svcTxId, ...(event.names === undefined ? [] : [event.names.svcTxId])]);
          if (answer.json?.svc_tx_id !== undefined) {
            assertThat(models.has(String(answer.json.svc_tx_id)), () => `${context()}: answered about ${answer.json.svc_tx_id}, which it does not name`);
            touched.add(String(answer.json.svc_tx_id));
          }
          for (const svcTxId of touched) await checkTransaction(models.get(svcTxId)!, event, answer, context);
        }
      }),
      fuzzParameters('processor webhook events', 30),
    );
  }, 600_000);

  it('was not vacuous: events moved transactions, and the canonical ones were sent', () => {
    console.log('fuzz processor webhook:', JSON.stringify({ ...stats, statuses: Object.fromEntries(stats.statuses) }));
    expect(stats.moves).toBeGreaterThan(0);
    expect(stats.canonical).toBeGreaterThan(0);
  });
});
