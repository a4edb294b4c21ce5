/**
 * Property-based fuzzing of POST /webhooks/processor over HTTP with VALID signatures (`t=<now>,v1=<hmac>`
 * keyed by the local webhook secret, as the sandbox processor signs: `signatureHeader`), in `processor-signature`,
 * `Stripe-Signature` or both. Each run makes a real checkout (a pending transaction linked to a sandbox intent)
 * and sends it a sequence of arbitrary events: any type (the mapped ones most of the time), fresh, reused or odd
 * event ids, objects of the right or wrong shape naming its intent, an earlier run's, an unknown one or none, with
 * exact, other or missing money, full, partial or odd refunds, disputes of all or part of the payment, opened or
 * closed, with or without a fee, odd metadata, and envelopes that are not events at all.
 *
 * The oracle is a model of decisions.md §5 and §5a written out in the suite (`test/support/reliability/lifecycle.ts`: the
 * lifecycle, the facts merged in any order, the partner events and the ledger entries they call for) fed by the
 * suite's own reading of each event's bytes (`readEvent`). Properties, after every event, for every transaction it
 * could touch:
 *   1. never a 5xx; a non-2xx is the spec's `{ error, code }`, never a signature refusal (the signature is valid);
 *      the answer is the one the reading calls for: 200 `{ received, svc_tx_id, status }` (the transaction's status
 *      now) for an event about one of ours, 200 `{ message: "Ignored event type <type>" }` for an unmapped type,
 *      400 MISSING_INTENT_ID, 404 PAYMENT_INTENT_NOT_FOUND, 400 INVALID_WEBHOOK_JSON;
 *   2. the transaction is exactly what the model says after the events applied so far: its status (moving only
 *      along the allowed lifecycle; a refund or dispute before the success is recorded and takes effect with it),
 *      `refundedAmount`, `disputedAmount`, `disputeStatus`; each processor event id is applied once, and an event
 *      whose money cannot be the transaction's changes nothing;
 *   3. amount, currency, reference, client, meta and creation time never change; fees are set once (on the move
 *      to succeeded) and never change afterwards;
 *   4. the partner events are exactly the model's: one per status move, `transaction_partially_refunded` (with the
 *      cumulative `refunded_amount`) and `transaction_dispute_closed` (with `dispute_status`) where they are due,
 *      one delivery each to the endpoint subscribed to all seven, each with its own event id;
 *   5. the ledger entries after the sale are exactly the model's, to the minor unit: each refund step, dispute,
 *      dispute fee and reinstatement once, proportional to the payment's split, all waiting for settlement.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { signatureHeader } from '../../infra/local/sandbox/processor/events';
import { PARTNER_EVENTS } from '../../lib/domain/webhooks';
import { keys } from '../../lib/store/keys';
import { TestApi, type PartnerCredentials } from '../support/api';
import { answerProblem, assertThat, fuzzParameters, send, type Answer } from '../support/fuzz/http';
import { showBytes } from '../support/fuzz/json';
import { eventPlan, renderEvent, type EventPlan, type Followed, type RenderedEvent } from '../support/fuzz/processor-events';
import { deliveriesOf, entriesOf, webhookSecret } from '../support/processor-events';
import { applyEvent, entriesFor, newPayment, type Notice, type Payment } from '../support/reliability/lifecycle';

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
    events: [...PARTNER_EVENTS],
  });
  if (endpoint.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(endpoint.body)}`);
}, 60_000);
afterAll(() => api.close());

/** Checkouts of every kind of amount: two-decimal, zero-decimal, three-decimal, and ISK (two decimals at Stripe). */
const MONEY = [
  { amount: 49.99, currency: 'USD', stripeAmount: 4999, exponent: 2, stripeScale: 1 },
  { amount: 5000, currency: 'JPY', stripeAmount: 5000, exponent: 0, stripeScale: 1 },
  { amount: 1.23, currency: 'KWD', stripeAmount: 1230, exponent: 3, stripeScale: 1 },
  { amount: 10, currency: 'EUR', stripeAmount: 1000, exponent: 2, stripeScale: 1 },
  { amount: 500, currency: 'ISK', stripeAmount: 50_000, exponent: 0, stripeScale: 100 },
] as const;

/** What the suite knows of a transaction: what must never change, the model of its payment, and its partner events. */
interface Model extends Followed {
  exponent: number;
  fixed: string;
  fees: string | null;
  payment: Payment;
  notices: Notice[];
}

const models = new Map<string, Model>();
/** Event ids sent so far (a `reuse` picks among them), and those applied to a transaction (each is applied once). */
const sentIds: string[] = [];
const appliedIds = new Set<string>();
const stats = { runs: 0, events: 0, moves: 0, canonical: 0, reversals: 0, beforeSuccess: 0, partiallyRefunded: 0, disputesClosed: 0, entries: 0, statuses: new Map<string, number>() };

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
    stripeScale: money.stripeScale,
    disputes: [],
    exponent: money.exponent,
    fixed: pick(read, FIXED_FIELDS),
    fees: null,
    payment: newPayment(money.stripeAmount / money.stripeScale, read.status),
    notices: [],
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

/**
 * The model after `event`: what it says applied to the transaction it is about, unless its id was applied before
 * (a processed event is never applied again). Returns the transaction it changed, if any.
 */
function applyToModel(event: RenderedEvent): Model | undefined {
  const reading = event.reading;
  if (reading?.kind !== 'about' || reading.said === null || appliedIds.has(reading.eventId)) return undefined;
  const model = models.get(reading.followed.svcTxId)!;
  const applied = applyEvent(model.payment, reading.said);
  if (applied === undefined) return undefined;
  appliedIds.add(reading.eventId);
  if (applied.payment.status !== model.payment.status) stats.moves++;
  if (reading.said.kind !== 'outcome') stats.reversals++;
  if (reading.said.kind !== 'outcome' && !model.payment.split) stats.beforeSuccess++;
  stats.partiallyRefunded += applied.notices.filter((notice) => notice.event === 'transaction_partially_refunded').length;
  stats.disputesClosed += applied.notices.filter((notice) => notice.event === 'transaction_dispute_closed').length;
  model.payment = applied.payment;
  model.notices.push(...applied.notices);
  return model;
}

/** Property 1's answer for what the event reads as (the generic rules are checked for every answer). */
function answerProblemFor(event: RenderedEvent, answer: Answer): string | undefined {
  const reading = event.reading;
  const expected = (status: number, code: string) => (answer.status === status && answer.json?.code === code ? undefined : `answered ${answer.status} ${answer.text.slice(0, 200)}, not ${status} ${code}`);
  switch (reading?.kind) {
    case undefined:
      return undefined;
    case 'invalid':
      return expected(400, 'INVALID_WEBHOOK_JSON');
    case 'no-intent':
      return expected(400, 'MISSING_INTENT_ID');
    case 'unknown-intent':
      return expected(404, 'PAYMENT_INTENT_NOT_FOUND');
    case 'ignored':
      return answer.status === 200 && answer.json?.message === `Ignored event type ${event.type}` ? undefined : `answered ${answer.status} ${answer.text.slice(0, 200)} to an unmapped type`;
    case 'about':
      return answer.status === 200 && answer.json?.received === true && answer.json.svc_tx_id === reading.followed.svcTxId && answer.json.status === models.get(reading.followed.svcTxId)?.payment.status
        ? undefined
        : `answered ${answer.status} ${answer.text.slice(0, 200)} about ${reading.followed.svcTxId}, now ${models.get(reading.followed.svcTxId)?.payment.status}`;
  }
}

const minorOf = (major: unknown, exponent: number) => (typeof major === 'number' ? Math.round(major * 10 ** exponent) : NaN);
const noticeKey = (notice: { event: unknown; status: unknown; refunded?: unknown; dispute?: unknown }) => JSON.stringify([notice.event, notice.status, notice.refunded ?? null, notice.dispute ?? null]);

/** Properties 2-5 for one transaction, against its model (already updated by the event). */
async function checkTransaction(model: Model, context: () => string): Promise<void> {
  const read = (await api.read(partner, `/transactions/${model.svcTxId}`)).body as Record<string, unknown>;
  const fees = read.netAmount === null ? null : pick(read, FEE_FIELDS);
  const { payment } = model;

  // 2. Status and facts as the model has them.
  const shown = { status: read.status, refunded: minorOf(read.refundedAmount, model.exponent), disputed: minorOf(read.disputedAmount, model.exponent), disputeStatus: read.disputeStatus };
  const expected = {
    status: payment.status,
    refunded: payment.refundedMinor,
    disputed: payment.disputes.reduce((sum, dispute) => sum + dispute.amountMinor, 0),
    disputeStatus: payment.disputes.at(-1)?.status ?? null,
  };
  assertThat(JSON.stringify(shown) === JSON.stringify(expected), () => `${context()}: the transaction is ${JSON.stringify(shown)}, the model says ${JSON.stringify(expected)}`);

  // 3. Fixed fields; fees exactly when the payment succeeded once, set once.
  assertThat(pick(read, FIXED_FIELDS) === model.fixed, () => `${context()}: the transaction's fixed fields changed: ${model.fixed} -> ${pick(read, FIXED_FIELDS)}`);
  assertThat((fees !== null) === payment.split, () => `${context()}: fee fields ${fees} while the model ${payment.split ? 'has' : 'has no'} split`);
  if (model.fees !== null) assertThat(fees === model.fees, () => `${context()}: fees changed ${model.fees} -> ${fees}`);
  model.fees = fees;

  // 4. The partner events, each once, with its own id and the ledger's extra field.
  const deliveries = await deliveriesOf(partner.partnerId, model.svcTxId);
  const delivered = deliveries
    .map((delivery) => {
      const body = JSON.parse(delivery.payload) as Record<string, unknown>;
      assertThat(body.event === delivery.event && body.svc_tx_id === model.svcTxId && body.partner_id === partner.partnerId, () => `${context()}: delivery ${delivery.id} carries ${delivery.payload}`);
      return noticeKey({ event: body.event, status: body.status, refunded: body.refunded_amount === undefined ? undefined : minorOf(body.refunded_amount, model.exponent), dispute: body.dispute_status });
    })
    .sort();
  const due = model.notices.map((notice) => noticeKey({ event: notice.event, status: notice.status, refunded: notice.refundedMinor, dispute: notice.disputeStatus })).sort();
  assertThat(JSON.stringify(delivered) === JSON.stringify(due), () => `${context()}: partner events ${JSON.stringify(delivered)}, the model's ${JSON.stringify(due)}`);
  assertThat(new Set(deliveries.map((delivery) => delivery.eventId)).size === deliveries.length, () => `${context()}: two deliveries share a partner event id`);

  // 5. The ledger entries after the sale, to the minor unit, all waiting for settlement.
  const entries = (await entriesOf(model.svcTxId))
    .map((item) => {
      assertThat(item.entity === 'ledgerEntry' && item.svcTxId === model.svcTxId && item.settlementStatus === 'unsettled' && item.gsi3pk === keys.settlementShardOf(partner.partnerId, model.svcTxId), () => `${context()}: entry ${JSON.stringify(item)}`);
      const { key, type, grossMinor, processorFeeMinor, platformFeeMinor, svcEarningMinor, netMinor } = item;
      return JSON.stringify({ key, type, grossMinor, processorFeeMinor, platformFeeMinor, svcEarningMinor, netMinor });
    })
    .sort();
  const split = { processorFeeMinor: minorOf(read.processorFee, model.exponent), platformFeeMinor: minorOf(read.platformFee, model.exponent), svcEarningMinor: minorOf(read.svcEarningAmount, model.exponent) };
  const owed = entriesFor(payment, split).map((entry) => JSON.stringify(entry)).sort();
  assertThat(JSON.stringify(entries) === JSON.stringify(owed), () => `${context()}: entries ${JSON.stringify(entries)}, the model's ${JSON.stringify(owed)} (split ${JSON.stringify(split)})`);
  stats.entries = Math.max(stats.entries, entries.length);
}

describe('fuzz POST /webhooks/processor (valid signatures)', () => {
  it('arbitrary signed events: never a 5xx; status, refunds, disputes, partner events and ledger entries exactly as the model of §5 and §5a says; fixed amounts', async () => {
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
          // The model, then the answer the reading calls for.
          const changed = applyToModel(event);
          const wrongAnswer = answerProblemFor(event, answer);
          assertThat(wrongAnswer === undefined, () => `${context()}: ${wrongAnswer}`);
          // Every transaction the event could have touched: the run's, the earlier one it names, the one it is about.
          const touched = new Set([run.svcTxId, ...(event.names === undefined ? [] : [event.names.svcTxId])]);
          if (changed !== undefined) touched.add(changed.svcTxId);
          if (answer.json?.svc_tx_id !== undefined) {
            assertThat(models.has(String(answer.json.svc_tx_id)), () => `${context()}: answered about ${answer.json.svc_tx_id}, which it does not name`);
            touched.add(String(answer.json.svc_tx_id));
          }
          for (const svcTxId of touched) await checkTransaction(models.get(svcTxId)!, context);
        }
      }),
      fuzzParameters('processor webhook events', 30),
    );
  }, 600_000);

  it('was not vacuous: events moved transactions, and the canonical ones were sent', () => {
    console.log('fuzz processor webhook:', JSON.stringify({ ...stats, statuses: Object.fromEntries(stats.statuses) }));
    expect(stats.moves).toBeGreaterThan(0);
    expect(stats.canonical).toBeGreaterThan(0);
    expect(stats.reversals).toBeGreaterThan(0);
    expect(stats.beforeSuccess).toBeGreaterThan(0);
    expect(stats.entries).toBeGreaterThan(0);
  });
});
