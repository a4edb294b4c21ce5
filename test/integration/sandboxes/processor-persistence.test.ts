/**
 * The processor sandbox with a state directory (what `npm start` gives it beside `.data/dynamodb`): a restart,
 * or a crash, on the same directory loses no intent, idempotency key or undelivered event.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcessorSandbox, type ProcessorSandbox } from '../../../infra/local/sandbox/processor';
import { freePort } from '../../support/ports';
import { deliveryOf, runModule, sdk, startReceiver, waitFor } from '../../support/processor-sandbox';

const SECRET_KEY = 'sk_test_sandbox_persistence_0123456789';
const WEBHOOK_SECRET = 'whsec_sandbox_persistence';

/** A sandbox-only route (the dispute triggers), with the secret key. */
async function sandboxPost(sandbox: ProcessorSandbox, path: string, body: string): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** The object of the last event of `type` about `objectId`, as the sandbox recorded it. */
function lastEventObject(sandbox: ProcessorSandbox, type: string, objectId: string): Record<string, any> | undefined {
  const events = sandbox.events().filter((e) => e.event.type === type && (e.event.data.object as { id: string }).id === objectId);
  return events.at(-1)?.event.data.object as Record<string, any> | undefined;
}

describe('the processor sandbox on a state directory', () => {
  let stateDir: string;
  let port: number;
  let webhookUrl: string;
  const running: ProcessorSandbox[] = [];

  /** A sandbox on this test's directory and port, as `npm start` would start one after a restart. */
  const start = async (retryDelaysMs = [50]) => {
    const sandbox = await startProcessorSandbox({ port, host: '127.0.0.1', secretKey: SECRET_KEY, publishableKey: 'pk_test_persistence', webhookSecret: WEBHOOK_SECRET, webhookUrl, retryDelaysMs, stateDir });
    running.push(sandbox);
    return sandbox;
  };
  const stop = async (sandbox: ProcessorSandbox) => {
    running.splice(running.indexOf(sandbox), 1);
    await sandbox.close();
  };

  beforeEach(async () => {
    stateDir = join(mkdtempSync(join(tmpdir(), 'processor-sandbox-state-')), 'processor-sandbox');
    port = await freePort();
    webhookUrl = `http://127.0.0.1:${await freePort()}/webhooks/processor`;
  });
  afterEach(async () => {
    for (const sandbox of running.splice(0)) await sandbox.close();
    rmSync(join(stateDir, '..'), { recursive: true, force: true });
  });

  it('after a restart retrieves and confirms an earlier intent, and replays its create under the same idempotency key', async () => {
    // Arrange: an intent created through the SDK with an idempotency key, then a restart
    const first = await start();
    const params = { amount: 2_500, currency: 'usd', metadata: { svc_tx_id: 'svc_tx_restart' } };
    const created = await sdk(first, SECRET_KEY).paymentIntents.create(params, { idempotencyKey: 'checkout-restart' });
    await stop(first);
    const second = await start();
    const stripe = sdk(second, SECRET_KEY);

    // Act
    const retrieved = await stripe.paymentIntents.retrieve(created.id);
    const confirmed = await stripe.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' });
    const retried = await stripe.paymentIntents.create(params, { idempotencyKey: 'checkout-restart' });

    // Assert
    expect({ ...retrieved }).toEqual({ ...created });
    expect(confirmed).toMatchObject({ id: created.id, status: 'succeeded', amount_received: 2_500 });
    expect(retried.id).toBe(created.id);
    expect(retried.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(second.intents().map((intent) => intent.id)).toEqual([created.id]);
  });

  it('keeps charges and their refunds: after a restart a charge refunds only what is left of it', async () => {
    const first = await start();
    const before = sdk(first, SECRET_KEY);
    const intent = await before.paymentIntents.create({ amount: 1_000, currency: 'usd' });
    const paid = await before.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });
    await before.refunds.create({ charge: String(paid.latest_charge), amount: 400 });
    await stop(first);
    const stripe = sdk(await start(), SECRET_KEY);

    const tooMuch = await stripe.refunds.create({ payment_intent: intent.id, amount: 601 }).catch((error: unknown) => error);
    const rest = await stripe.refunds.create({ payment_intent: intent.id });

    expect(tooMuch).toMatchObject({ statusCode: 400, code: 'amount_too_large' });
    expect(rest).toMatchObject({ amount: 600, charge: paid.latest_charge });
  });

  it('keeps a charge\'s refunds and a dispute\'s balance transactions and status: after a restart they are listed, closed and refused as before', async () => {
    // Arrange: a partly refunded charge and a dispute with its amount and fee, then a restart
    const first = await start();
    const before = sdk(first, SECRET_KEY);
    const refunded = await before.paymentIntents.confirm((await before.paymentIntents.create({ amount: 1_000, currency: 'usd' })).id, { payment_method: 'pm_card_visa' });
    const firstRefund = await before.refunds.create({ payment_intent: refunded.id, amount: 400 });
    const disputed = await before.paymentIntents.confirm((await before.paymentIntents.create({ amount: 3_000, currency: 'usd' })).id, { payment_method: 'pm_card_visa' });
    const opened = await sandboxPost(first, `/sandbox/payment_intents/${disputed.id}/dispute`, 'amount=2000&fee=1800');
    expect(opened.status).toBe(200);
    await stop(first);
    const second = await start();

    // Act
    const secondRefund = await sdk(second, SECRET_KEY).refunds.create({ payment_intent: refunded.id, amount: 100 });
    const won = await sandboxPost(second, `/sandbox/disputes/${opened.body.id}/close`, 'status=won');
    await stop(second);
    const third = await start();
    const again = await sandboxPost(third, `/sandbox/disputes/${opened.body.id}/close`, 'status=lost');

    // Assert: the refund after the restart lists the one before it; the dispute kept its withdrawal and, closed, stays closed
    const charge = lastEventObject(third, 'charge.refunded', String(refunded.latest_charge));
    expect(charge).toMatchObject({ amount_refunded: 500, refunds: { object: 'list', total_count: 2, has_more: false } });
    expect(charge?.refunds.data).toEqual([{ ...secondRefund }, { ...firstRefund }]);
    expect(won.status).toBe(200);
    expect(won.body.balance_transactions).toEqual([
      opened.body.balance_transactions[0],
      expect.objectContaining({ amount: 2_000, fee: 0, net: 2_000, reporting_category: 'dispute_reversal' }),
    ]);
    expect(opened.body.balance_transactions[0]).toMatchObject({ amount: -2_000, fee: 1_800, net: -3_800, reporting_category: 'dispute' });
    expect(lastEventObject(third, 'charge.dispute.closed', opened.body.id)).toEqual(won.body);
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 'dispute_already_closed' });
  });

  it('loads a state file saved before disputes carried balance transactions, and closes such a dispute', async () => {
    // Arrange: a dispute saved as an older sandbox saved it, without balance_transactions
    const first = await start();
    const stripe = sdk(first, SECRET_KEY);
    const paid = await stripe.paymentIntents.confirm((await stripe.paymentIntents.create({ amount: 1_500, currency: 'usd' })).id, { payment_method: 'pm_card_visa' });
    const opened = await sandboxPost(first, `/sandbox/payment_intents/${paid.id}/dispute`, '');
    await stop(first);
    const path = join(stateDir, 'state.json');
    const saved = JSON.parse(readFileSync(path, 'utf8')) as { disputes: Array<Record<string, unknown>> };
    for (const dispute of saved.disputes) delete dispute.balance_transactions;
    writeFileSync(path, JSON.stringify(saved));

    // Act
    const second = await start();
    const won = await sandboxPost(second, `/sandbox/disputes/${opened.body.id}/close`, 'status=won');

    // Assert: no withdrawal is made up for it (its charge.dispute.created named none); the reinstatement is added
    expect(won.status).toBe(200);
    expect(won.body).toMatchObject({ id: opened.body.id, amount: 1_500, status: 'won' });
    expect(won.body.balance_transactions).toEqual([expect.objectContaining({ amount: 1_500, fee: 0, net: 1_500, reporting_category: 'dispute_reversal', source: opened.body.id })]);
  });

  it('keeps every intent of concurrent requests, each saved before it is answered: a crash loses none', async () => {
    // Arrange: a child process creates 20 intents at once and is killed (no close, no chance to save later)
    const child = await runModule(
      `
      import Stripe from 'stripe';
      import { startProcessorSandbox } from './infra/local/sandbox/processor/index.ts';
      const sandbox = await startProcessorSandbox({
        port: ${port}, host: '127.0.0.1', secretKey: '${SECRET_KEY}', publishableKey: 'pk_test_persistence', webhookSecret: '${WEBHOOK_SECRET}',
        webhookUrl: '${webhookUrl}', retryDelaysMs: [], stateDir: ${JSON.stringify(stateDir)},
      });
      const stripe = new Stripe('${SECRET_KEY}', { host: '127.0.0.1', port: sandbox.port, protocol: 'http' });
      const intents = await Promise.all(Array.from({ length: 20 }, (_, i) => stripe.paymentIntents.create({ amount: 100 + i, currency: 'usd' })));
      console.log(JSON.stringify(intents.map((intent) => intent.id)));
      process.kill(process.pid, 'SIGKILL');
      `,
      15_000,
    );
    expect(child).toMatchObject({ signal: 'SIGKILL', timedOut: false });
    const answered = JSON.parse(child.stdout) as string[];

    // Act
    const sandbox = await start();

    // Assert: every intent the child was answered about is there, and no temporary file is taken for state
    expect(answered).toHaveLength(20);
    expect(sandbox.intents().map((intent) => intent.id).sort()).toEqual([...answered].sort());
    expect(JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'))).toMatchObject({ version: 1 });
  }, 20_000);

  it('delivers after a restart, with the same event id, an event the receiver had not taken before the sandbox closed', async () => {
    // Arrange: the receiver is down, so the first attempt fails and the retry is ten minutes away when the sandbox closes
    const first = await start([600_000]);
    const intent = await sdk(first, SECRET_KEY).paymentIntents.create({ amount: 900, currency: 'usd' });
    await sdk(first, SECRET_KEY).paymentIntents.cancel(intent.id);
    const pending = await waitFor('the scheduled retry', () => first.events().find((e) => e.nextAttemptAt !== null));
    await stop(first);
    const receiver = await startReceiver(() => 200, Number(new URL(webhookUrl).port));
    try {
      // Act
      const second = await start();

      // Assert
      const delivery = await deliveryOf(receiver, 'payment_intent.canceled', intent.id);
      expect(delivery.eventId).toBe(pending.event.id);
      const recorded = await waitFor('the delivered outcome', () => second.events().find((e) => e.event.id === pending.event.id && e.outcome === 'delivered'));
      expect(recorded.attempts.map((attempt) => attempt.status)).toEqual([null, 200]);
      expect(receiver.deliveries).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('ignores a temporary file a crash left half-written, and refuses to start on a state file it cannot read', async () => {
    const first = await start();
    const intent = await sdk(first, SECRET_KEY).paymentIntents.create({ amount: 700, currency: 'usd' });
    await stop(first);
    writeFileSync(join(stateDir, 'state.json.tmp'), '{"version":1,"intents":[{"id":"pi_torn');

    const second = await start();
    expect(second.intents().map((i) => i.id)).toEqual([intent.id]);
    await stop(second);
    writeFileSync(join(stateDir, 'state.json'), 'not json');

    await expect(start()).rejects.toThrow(`processor sandbox: cannot read its state from ${join(stateDir, 'state.json')}`);
    expect(readdirSync(stateDir)).toContain('state.json');
  });
});
