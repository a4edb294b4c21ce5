/** The legacy two-step flow: initialize (no processor call), then attach an intent: initialized -> pending. */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { config } from '../../../lib/config';
import { currencyCode } from '../../../lib/domain/money';
import { usePartnerSuite } from '../../support/api';
import { NO_REVERSALS } from '../../../lib/domain/ledger';

const sandboxUrl = new URL(config.PROCESSOR_API_BASE ?? '');
const stripe = new Stripe(config.PROCESSOR_SECRET_KEY ?? '', { host: sandboxUrl.hostname, port: Number(sandboxUrl.port), protocol: 'http' });

const suite = usePartnerSuite();

const initialize = (overrides: Record<string, unknown> = {}, credentials = suite.partner) =>
  suite.api.signed(credentials, '/transactions/initialize', {
    partner_id: suite.partner.partnerId,
    client_id: suite.clientId,
    amount: 1500,
    currency: 'JPY',
    partner_reference: `order-${randomUUID()}`,
    ...overrides,
  });

const newIntent = (amount = 1500, currency = 'jpy') =>
  stripe.paymentIntents.create({ amount, currency, automatic_payment_methods: { enabled: true } });

const attach = (svcTxId: string, intentId: string, idempotencyKey = `attach-${svcTxId}-${randomUUID()}`) =>
  suite.api.signed(suite.partner, '/transactions/attach-intent', { svc_tx_id: svcTxId, processor_payment_intent_id: intentId }, { idempotencyKey });

describe('legacy flow', () => {
  it('initialize creates an initialized transaction without any processor intent', async () => {

    const response = await initialize({ meta: { basket: 'b-7' } });
    const read = await suite.api.read(suite.partner, `/transactions/${response.body.svc_tx_id}`);

    expect(response.status).toBe(201);
    expect(response.body).toEqual({ svc_tx_id: expect.stringMatching(/^svc_tx_[0-9a-z]{24}$/), status: 'initialized' });
    expect(read.body).toMatchObject({ status: 'initialized', processorPaymentIntentId: null, amount: 1500, currency: 'JPY', meta: { basket: 'b-7' } });
  });

  it('attach-intent moves initialized -> pending, replays under its key, and answers again for the same intent', async () => {
    const tx = await initialize();
    const intent = await newIntent();
    const key = `attach-${tx.body.svc_tx_id}`;

    const attached = await attach(tx.body.svc_tx_id, intent.id, key);
    const replay = await attach(tx.body.svc_tx_id, intent.id, key);
    const again = await attach(tx.body.svc_tx_id, intent.id);
    const read = await suite.api.read(suite.partner, `/transactions/${tx.body.svc_tx_id}`);

    expect(attached.status).toBe(200);
    expect(attached.body).toEqual({ svc_tx_id: tx.body.svc_tx_id, status: 'pending', processor_payment_intent_id: intent.id });
    expect(replay.body).toEqual({ ...attached.body, idempotentReplay: true });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(attached.body);
    expect(read.body).toMatchObject({ status: 'pending', processorPaymentIntentId: intent.id });
  });

  it('refuses a second, different intent once the transaction is pending (409 TX_NOT_INITIALIZED)', async () => {
    const tx = await initialize();
    await attach(tx.body.svc_tx_id, (await newIntent()).id);

    const second = await attach(tx.body.svc_tx_id, (await newIntent()).id);

    expect(second.status).toBe(409);
    expect(second.body.code).toBe('TX_NOT_INITIALIZED');
  });

  it.each([
    ['a malformed intent id', async () => 'not-an-intent'],
    ['an intent the processor does not know', async () => 'pi_000000000000000000000000'],
    ['an intent for another amount', async () => (await newIntent(1499)).id],
    ['an intent in another currency', async () => (await newIntent(1500, 'usd')).id],
    ['an intent in a currency the service does not take', async () => (await newIntent(1500, 'bgn')).id],
  ])('refuses %s with 400 VALIDATION_ERROR and leaves the transaction initialized', async (_name, intentId) => {
    const tx = await initialize();

    const response = await attach(tx.body.svc_tx_id, await intentId());
    const read = await suite.api.read(suite.partner, `/transactions/${tx.body.svc_tx_id}`);

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(response.body.details.fieldErrors)).toEqual(['processor_payment_intent_id']);
    expect(read.body.status).toBe('initialized');
  });

  it("refuses an intent whose svc_tx_id or partner_id metadata names another transaction or partner, and takes one whose metadata matches", async () => {
    // Arrange: intents of the right amount, made outside this transaction by someone else
    const tx = await initialize();
    const other = await initialize();
    const withMetadata = (metadata: Record<string, string>) =>
      stripe.paymentIntents.create({ amount: 1500, currency: 'jpy', metadata, automatic_payment_methods: { enabled: true } });
    const otherTransaction = await withMetadata({ svc_tx_id: other.body.svc_tx_id, partner_id: suite.partner.partnerId });
    const otherPartner = await withMetadata({ svc_tx_id: tx.body.svc_tx_id, partner_id: 'ptr_someoneelse00000000000000' });
    const matching = await withMetadata({ svc_tx_id: tx.body.svc_tx_id, partner_id: suite.partner.partnerId });

    // Act
    const refused = [await attach(tx.body.svc_tx_id, otherTransaction.id), await attach(tx.body.svc_tx_id, otherPartner.id)];
    const afterRefusals = await suite.api.read(suite.partner, `/transactions/${tx.body.svc_tx_id}`);
    const accepted = await attach(tx.body.svc_tx_id, matching.id);

    // Assert
    for (const response of refused) {
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
      expect(Object.keys(response.body.details.fieldErrors)).toEqual(['processor_payment_intent_id']);
    }
    expect(afterRefusals.body.status).toBe('initialized');
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ svc_tx_id: tx.body.svc_tx_id, status: 'pending', processor_payment_intent_id: matching.id });
  });

  it("answers another partner's intent exactly as one the processor does not know, whatever its amount: nothing of it leaks", async () => {
    // Arrange: another partner's intent, in another amount than this transaction's, and one in the same
    const tx = await initialize();
    const theirs = (amount: number) =>
      stripe.paymentIntents.create({ amount, currency: 'jpy', metadata: { svc_tx_id: 'svc_tx_theirs', partner_id: 'ptr_someoneelse00000000000000' } });
    const [otherAmount, sameAmount] = [await theirs(999), await theirs(1500)];

    // Act
    const answers = [
      await attach(tx.body.svc_tx_id, otherAmount.id),
      await attach(tx.body.svc_tx_id, sameAmount.id),
      await attach(tx.body.svc_tx_id, 'pi_000000000000000000000000'),
    ];

    // Assert: three identical refusals
    const [first, ...rest] = answers.map((response) => ({ status: response.status, body: response.body }));
    expect(first).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR' } });
    for (const answer of rest) expect(answer).toEqual(first);
  });

  it('refuses an intent already linked to another transaction', async () => {
    const first = await initialize();
    const second = await initialize();
    const intent = await newIntent();
    await attach(first.body.svc_tx_id, intent.id);

    const response = await attach(second.body.svc_tx_id, intent.id);
    const read = await suite.api.read(suite.partner, `/transactions/${second.body.svc_tx_id}`);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      error: 'Payment intent already linked',
      details: { fieldErrors: { processor_payment_intent_id: ['This payment intent is already linked to another transaction'] }, formErrors: [] },
    });
    expect(read.body.status).toBe('initialized');
  });

  it("answers 404 TX_NOT_FOUND for an unknown svc_tx_id and for another partner's transaction", async () => {
    const other = await suite.api.createPartner();
    const theirs = await suite.api.signed(other, '/transactions/initialize', {
      partner_id: other.partnerId,
      client_id: await suite.api.createClient(other),
      amount: 10,
      currency: 'USD',
      partner_reference: 'theirs',
    });
    const intent = await newIntent(1000, 'usd');

    const unknown = await attach('svc_tx_000000000000000000000000', intent.id);
    const foreign = await attach(theirs.body.svc_tx_id, intent.id);

    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('TX_NOT_FOUND');
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('TX_NOT_FOUND');
  });

  it('refuses to attach once the partner is suspended (403 PARTNER_NOT_ACTIVE), leaving the transaction initialized', async () => {
    const paused = await suite.api.createPartner();
    const pausedClient = await suite.api.createClient(paused);
    const tx = await suite.api.signed(paused, '/transactions/initialize', { partner_id: paused.partnerId, client_id: pausedClient, amount: 1500, currency: 'JPY', partner_reference: 'paused' });
    await suite.api.admin('PATCH', `/admin/partners/${paused.partnerId}`, { status: 'suspended' });
    const intent = await newIntent();

    const response = await suite.api.signed(paused, '/transactions/attach-intent', { svc_tx_id: tx.body.svc_tx_id, processor_payment_intent_id: intent.id });
    await suite.api.admin('PATCH', `/admin/partners/${paused.partnerId}`, { status: 'active' });
    const read = await suite.api.read(paused, `/transactions/${tx.body.svc_tx_id}`);

    expect(response.status).toBe(403);
    expect(response.body.code).toBe('PARTNER_NOT_ACTIVE');
    expect(read.body.status).toBe('initialized');
  });
});

describe('crash safety of initialize', () => {
  it('a retry of the same attempt after the write (the answer was lost) gets the same transaction, not a second one', async () => {
    const { initializeTransaction } = await import('../../../lib/use-cases/transactions');
    const { getPartner } = await import('../../../lib/store/partners');
    const { transactionDeps } = await import('../../../lib/composition');
    const partner = await getPartner(suite.partner.partnerId);
    if (partner === undefined) throw new Error('partner missing');
    const caller = { kind: 'partner' as const, keyId: suite.partner.keyId, partner };
    const input = { partnerId: partner.partnerId, clientId: suite.clientId, amountMinor: 1500, currency: currencyCode('JPY'), partnerReference: 'crash-1', meta: undefined };
    const attempt = { owner: partner.partnerId, endpoint: 'POST /api/v1/transactions/initialize', idempotencyKey: `init-${randomUUID()}`, fingerprint: 'same-body', nonce: randomUUID() };

    const first = await initializeTransaction(transactionDeps, caller, input, attempt);
    const retry = await initializeTransaction(transactionDeps, caller, input, attempt);
    const list = await suite.api.read(suite.partner, '/transactions?partner_reference=crash-1');

    expect(retry.svcTxId).toBe(first.svcTxId);
    expect(list.body.items).toHaveLength(1);
  });

  it('re-checks the payment gate inside the write, naming what changed: partner suspended, KYC revoked, partner or client unknown, client suspended', async () => {
    const { createTransaction } = await import('../../../lib/store/transactions');
    const now = new Date().toISOString();
    const writeFor = (partnerId: string, clientId: string) =>
      createTransaction({
        id: `txn_${randomUUID()}`, svcTxId: `svc_tx_${randomUUID().replace(/-/g, '').slice(0, 24)}`, partnerId, partnerName: 'P',
        clientId, clientName: 'C', partnerReference: 'race', processorPaymentIntentId: null, amountMinor: 100, currency: currencyCode('USD'),
        status: 'initialized', settlementStatus: 'unsettled', fees: null, reversals: NO_REVERSALS, revision: 0, receiptEmail: null, statementDescriptorSuffix: null, meta: null, createdAt: now, updatedAt: now,
      });
    const payee = async () => {
      const partner = await suite.api.createPartner();
      return { partner, clientId: await suite.api.createClient(partner) };
    };
    const [suspended, kycRevoked] = [await payee(), await payee()];
    await suite.api.admin('PATCH', `/admin/partners/${suspended.partner.partnerId}`, { status: 'suspended' });
    await suite.api.admin('PATCH', `/admin/partners/${kycRevoked.partner.partnerId}`, { kyc_status: 'rejected' });
    const suspendedClient = `suspended-${randomUUID()}`;
    const created = await suite.api.signed(suite.partner, '/clients', { client_id: suspendedClient, legal_name: 'Suspended client', status: 'suspended' });
    expect(created.status).toBe(201);

    await expect(writeFor(suspended.partner.partnerId, suspended.clientId)).rejects.toMatchObject({ code: 'PARTNER_NOT_ACTIVE', status: 403 });
    await expect(writeFor(kycRevoked.partner.partnerId, kycRevoked.clientId)).rejects.toMatchObject({ code: 'KYC_NOT_APPROVED', status: 403 });
    await expect(writeFor(`ptr_${'0'.repeat(24)}`, suspended.clientId)).rejects.toMatchObject({ code: 'PARTNER_NOT_FOUND', status: 404 });
    await expect(writeFor(suite.partner.partnerId, 'no-such-client')).rejects.toMatchObject({ code: 'CLIENT_NOT_FOUND', status: 404 });
    await expect(writeFor(suite.partner.partnerId, suspendedClient)).rejects.toMatchObject({ code: 'CLIENT_NOT_ACTIVE', status: 403 });
  });
});
