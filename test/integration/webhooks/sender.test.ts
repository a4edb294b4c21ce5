/**
 * The HTTP sender against a real receiver on 127.0.0.1, with DNS answers injected: the delivery-time URL check,
 * and that the connection goes to the very address that was checked (DNS rebinding).
 */
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHttpSender } from '../../../lib/webhooks/http-sender';
import { checkWebhookUrl, type Resolver } from '../../../lib/webhooks/url-safety';
import { freePort } from '../../support/ports';
import { WebhookReceiver } from '../../support/webhook-receiver';

let receiver: WebhookReceiver;
let port: number;
beforeAll(async () => {
  receiver = await WebhookReceiver.start({ anyBody: true });
  port = Number(new URL(receiver.url()).port);
});
afterAll(() => receiver.close());

const answers =
  (...sequence: string[][]): Resolver =>
  async () => {
    const addresses = sequence.length > 1 ? (sequence.shift() ?? []) : (sequence[0] ?? []);
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const request = (url: string) => ({ url, headers: { 'Content-Type': 'application/json' }, body: '{"event":"transaction_succeeded"}' });

describe('the delivery-time URL check', () => {
  it('connects to the address its own lookup returned (a name no real DNS knows reaches the receiver)', async () => {
    const send = createHttpSender({ policy: { allowInsecure: true }, resolve: answers(['127.0.0.1']) });
    const before = receiver.requests.length;

    const result = await send(request(`http://partner-hooks.invalid:${port}/pinned`));

    expect(result).toEqual({ httpStatus: 200 });
    expect(receiver.requests.slice(before)).toEqual([expect.objectContaining({ path: '/pinned', headers: expect.objectContaining({ host: `partner-hooks.invalid:${port}` }) })]);
  });

  it('refuses, before connecting, a host that now resolves to a private address (DNS rebinding after creation)', async () => {
    const resolve = answers(['93.184.216.34'], ['127.0.0.1']);
    const url = `https://rebinding.invalid:${port}/rebound`;
    await expect(checkWebhookUrl(url, { allowInsecure: false }, resolve)).resolves.toBe(url); // the check at creation
    const send = createHttpSender({ policy: { allowInsecure: false }, resolve });
    const before = receiver.requests.length;

    const result = await send(request(url));

    expect(result).toEqual({ error: expect.stringMatching(/^Refused: .*127\.0\.0\.1/) });
    expect(receiver.requests.length).toBe(before);
  });

  it('refuses a host with one public and one private address', async () => {
    const send = createHttpSender({ policy: { allowInsecure: false }, resolve: answers(['93.184.216.34', '10.1.2.3']) });

    expect(await send(request('https://mixed.invalid/hook'))).toEqual({ error: expect.stringContaining('10.1.2.3') });
  });

  it('refuses http:// and private literal addresses without ALLOW_INSECURE_WEBHOOK_URLS', async () => {
    const send = createHttpSender({ policy: { allowInsecure: false } });
    const before = receiver.requests.length;

    expect(await send(request(receiver.url()))).toEqual({ error: 'Refused: Must be an https:// URL' });
    expect(await send(request(`https://127.0.0.1:${port}/`))).toEqual({ error: expect.stringContaining('127.0.0.1 is not one') });
    expect(receiver.requests.length).toBe(before);
  });

  it('reports a refused connection without the URL', async () => {
    const send = createHttpSender({ policy: { allowInsecure: true } });

    expect(await send(request(`http://127.0.0.1:${await freePort()}/secret-token-path`))).toEqual({ error: 'Connection refused' });
  });
});
