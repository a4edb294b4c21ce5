/**
 * The admin webhook routes over HTTP (decisions.md §2): endpoints (create with a secret shown once, list
 * without secrets, delete, at most 20), deliveries (list, status filter, paging, resend) and audit events.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { issueLocalAdminToken } from '../../../lib/auth/admin-token';
import { config } from '../../../lib/config';
import { ServiceError } from '../../../lib/domain/errors';
import { newId } from '../../../lib/domain/ids';
import type { DeliveryStatus, WebhookDelivery } from '../../../lib/domain/webhooks';
import { deliveryItem } from '../../../lib/store/deliveries';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import { webhookEndpointDeps } from '../../../lib/composition/webhook-endpoints';
import { createWebhookEndpoint } from '../../../lib/use-cases/webhook-endpoints';
import type { Resolver } from '../../../lib/webhooks/url-safety';
import { type PartnerCredentials, TestApi } from '../../support/api';

let api: TestApi;
let partner: PartnerCredentials;
beforeAll(async () => {
  api = await TestApi.start();
  partner = await api.createPartner();
});
afterAll(() => api.close());

const endpointsPath = (partnerId: string) => `/admin/partners/${partnerId}/webhook-endpoints`;
const validEndpoint = { name: 'Orders', url: 'http://127.0.0.1:9/hook', events: ['transaction_succeeded', 'transaction_refunded'] };

/** Creation times that strictly increase, so "newest first" has one right answer even within a millisecond. */
let lastCreated = 0;
const nextCreatedAt = () => new Date((lastCreated = Math.max(Date.now(), lastCreated + 1))).toISOString();

/** Writes a delivery in any status directly (as the processor webhook and the consumer would leave it). */
async function writeDelivery(partnerId: string, status: DeliveryStatus, endpointId = 'whe_unused'): Promise<WebhookDelivery> {
  const now = nextCreatedAt();
  const delivery: WebhookDelivery = {
    id: newId.webhookDelivery(),
    eventId: newId.partnerEvent(),
    endpointId,
    partnerId,
    event: 'transaction_succeeded',
    svcTxId: 'svc_tx_0123456789abcdefghjkmnpq',
    payload: '{"event":"transaction_succeeded"}',
    status,
    attempts: status === 'pending' ? 0 : status === 'failed' ? 3 : 1,
    lastHttpStatus: status === 'pending' ? null : status === 'failed' ? 500 : 200,
    lastError: status === 'failed' ? 'HTTP 500: not a 2xx answer' : null,
    createdAt: now,
    updatedAt: now,
  };
  await documentClient.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: tableName, Item: deliveryItem(delivery) } }] }));
  return delivery;
}

describe('admin access to the webhook routes', () => {
  const routes: Array<[string, string]> = [
    ['POST', `${endpointsPath('ptr_x')}`],
    ['GET', `${endpointsPath('ptr_x')}`],
    ['DELETE', `${endpointsPath('ptr_x')}/whe_x`],
    ['GET', '/admin/partners/ptr_x/webhook-deliveries'],
    ['POST', '/admin/webhook-deliveries/dlv_x/resend'],
    ['GET', '/admin/audit-events'],
  ];

  it.each(routes)('%s %s: 401 ADMIN_TOKEN_INVALID without a token, 403 ADMIN_FORBIDDEN without the admin role', async (method, path) => {
    const support = await issueLocalAdminToken(config, { role: 'support' });

    const anonymous = await api.request(method, path, { headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
    const forbidden = await api.admin(method, path, method === 'POST' ? validEndpoint : undefined, support);

    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'ADMIN_TOKEN_INVALID']);
    expect([forbidden.status, forbidden.body.code]).toEqual([403, 'ADMIN_FORBIDDEN']);
  });
});

describe('webhook endpoints', () => {
  it('creates an endpoint and shows its whsec_ secret once; the table holds it sealed', async () => {
    const created = await api.admin('POST', endpointsPath(partner.partnerId), validEndpoint);

    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^whe_[0-9a-z]{24}$/),
      name: 'Orders',
      url: 'http://127.0.0.1:9/hook',
      events: ['transaction_succeeded', 'transaction_refunded'],
      // A new endpoint: its first delivery probes it (docs/webhooks.md: Slow endpoints)
      circuit: { state: 'probing', open_until: null },
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.any(String),
    });
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.webhookEndpoint(partner.partnerId, created.body.id), ConsistentRead: true }),
    );
    expect(JSON.stringify(Item)).not.toContain(created.body.secret.slice('whsec_'.length));
    expect(Item?.secret).toEqual(expect.objectContaining({ v: 1, kek: 'local', ct: expect.any(String), edk: expect.any(String) }));
  });

  it.each(['http://127.0.0.1:4567', 'HTTP://LocalHost:4567/Hook?a=1#frag'])('answers and lists the url exactly as given (%s), not normalised', async (url) => {
    const partner = await api.createPartner();

    const created = await api.admin('POST', endpointsPath(partner.partnerId), { ...validEndpoint, url });
    const listed = await api.admin('GET', endpointsPath(partner.partnerId));

    expect(created.status).toBe(201);
    expect(created.body.url).toBe(url);
    expect(listed.body.items.map((item: { url: string }) => item.url)).toEqual([url]);
  });

  it('lists endpoints newest first and never their secrets', async () => {
    const owner = await api.createPartner();
    const first = await api.admin('POST', endpointsPath(owner.partnerId), { ...validEndpoint, name: 'First' });
    const second = await api.admin('POST', endpointsPath(owner.partnerId), { ...validEndpoint, name: 'Second', events: ['transaction_failed'] });

    const listed = await api.admin('GET', endpointsPath(owner.partnerId));

    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      items: [
        { id: second.body.id, name: 'Second', url: validEndpoint.url, events: ['transaction_failed'], circuit: { state: 'probing', open_until: null }, created_at: second.body.created_at },
        { id: first.body.id, name: 'First', url: validEndpoint.url, events: validEndpoint.events, circuit: { state: 'probing', open_until: null }, created_at: first.body.created_at },
      ],
    });
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain('secret');
    expect(text).not.toContain(first.body.secret);
  });

  it.each([
    [{ ...validEndpoint, events: [] }, 'events'],
    [{ ...validEndpoint, events: ['transaction_succeeded', 'transaction_succeeded'] }, 'events'],
    [{ ...validEndpoint, events: ['transaction_created'] }, 'events'],
    [{ ...validEndpoint, name: '' }, 'name'],
    [{ ...validEndpoint, url: 'not a url' }, 'url'],
    [{ ...validEndpoint, url: 'ftp://127.0.0.1/hook' }, 'url'],
    [{ ...validEndpoint, url: 'http://user:secret@127.0.0.1/hook' }, 'url'],
    [{ name: 'Orders', events: ['transaction_failed'] }, 'url'],
  ])('refuses %j with 400 VALIDATION_ERROR on %s', async (body, field) => {
    const response = await api.admin('POST', endpointsPath(partner.partnerId), body);

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(response.body.details.fieldErrors)).toEqual([field]);
  });

  it('refuses an unknown field', async () => {
    const response = await api.admin('POST', endpointsPath(partner.partnerId), { ...validEndpoint, secret: 'whsec_mine' });

    expect(response.status).toBe(400);
    expect(response.body.details.formErrors.join(' ')).toContain('secret');
  });

  it('answers 404 PARTNER_NOT_FOUND for an unknown partner, on create and list', async () => {
    const created = await api.admin('POST', endpointsPath('ptr_000000000000000000000000'), validEndpoint);
    const listed = await api.admin('GET', endpointsPath('ptr_000000000000000000000000'));

    expect([created.status, created.body.code]).toEqual([404, 'PARTNER_NOT_FOUND']);
    expect([listed.status, listed.body.code]).toEqual([404, 'PARTNER_NOT_FOUND']);
  });

  it('deletes an endpoint (204), then 404 WEBHOOK_ENDPOINT_NOT_FOUND for it and for another partner’s endpoint', async () => {
    const other = await api.createPartner();
    const mine = await api.admin('POST', endpointsPath(partner.partnerId), validEndpoint);
    const theirs = await api.admin('POST', endpointsPath(other.partnerId), validEndpoint);

    const deleted = await api.admin('DELETE', `${endpointsPath(partner.partnerId)}/${mine.body.id}`);
    const again = await api.admin('DELETE', `${endpointsPath(partner.partnerId)}/${mine.body.id}`);
    const crossPartner = await api.admin('DELETE', `${endpointsPath(partner.partnerId)}/${theirs.body.id}`);

    expect(deleted.status).toBe(204);
    expect([again.status, again.body.code]).toEqual([404, 'WEBHOOK_ENDPOINT_NOT_FOUND']);
    expect([crossPartner.status, crossPartner.body.code]).toEqual([404, 'WEBHOOK_ENDPOINT_NOT_FOUND']);
    const listed = await api.admin('GET', endpointsPath(partner.partnerId));
    expect(listed.body.items.map((item: { id: string }) => item.id)).not.toContain(mine.body.id);
    expect((await api.admin('GET', endpointsPath(other.partnerId))).body.items).toHaveLength(1);
  });

  it('holds a partner to 20 endpoints, even when 25 are created at once, and frees a place on delete', async () => {
    const owner = await api.createPartner();

    const responses = await Promise.all(Array.from({ length: 25 }, () => api.admin('POST', endpointsPath(owner.partnerId), validEndpoint)));

    expect(responses.filter((response) => response.status === 201)).toHaveLength(20);
    const refused = responses.filter((response) => response.status !== 201);
    expect(refused.map((response) => [response.status, response.body.code])).toEqual(Array(5).fill([409, 'WEBHOOK_ENDPOINT_LIMIT_REACHED']));
    expect((await api.admin('GET', endpointsPath(owner.partnerId))).body.items).toHaveLength(20);
    const someone = responses.find((response) => response.status === 201)?.body.id as string;
    expect((await api.admin('DELETE', `${endpointsPath(owner.partnerId)}/${someone}`)).status).toBe(204);
    expect((await api.admin('POST', endpointsPath(owner.partnerId), validEndpoint)).status).toBe(201);
  });
});

describe('endpoint URL rules without ALLOW_INSECURE_WEBHOOK_URLS (the AWS setting)', () => {
  const resolve: Resolver = async (hostname) =>
    hostname === 'hooks.partner.example'
      ? [{ address: '93.184.216.34', family: 4 }]
      : hostname === 'split.partner.example'
        ? [
            { address: '93.184.216.34', family: 4 },
            { address: '192.168.0.10', family: 4 },
          ]
        : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
  const deps = { ...webhookEndpointDeps, urlPolicy: { allowInsecure: false }, resolve };
  const create = (url: string) => createWebhookEndpoint(deps, partner.partnerId, { name: 'Strict', url, events: ['transaction_succeeded'] });

  it('accepts an https URL whose host resolves only to public addresses, on any port', async () => {
    await expect(create('https://hooks.partner.example:8443/in')).resolves.toMatchObject({ endpoint: { url: 'https://hooks.partner.example:8443/in' } });
  });

  it.each([
    ['http://hooks.partner.example/in', 'https://'],
    ['https://127.0.0.1/in', 'public address'],
    ['https://[::ffff:169.254.169.254]/in', 'public address'],
    ['https://split.partner.example/in', '192.168.0.10'],
    ['https://nowhere.partner.example/in', 'does not resolve'],
  ])('refuses %s with 400 VALIDATION_ERROR on url (%s)', async (url, message) => {
    const error = await create(url).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: { fieldErrors: { url: [expect.stringContaining(message)] } } });
  });
});

describe('webhook deliveries', () => {
  it('lists a partner’s deliveries newest first, paged, with the status filter, and only that partner’s', async () => {
    // Arrange
    const owner = await api.createPartner();
    const other = await api.createPartner();
    const written = [];
    for (const status of ['pending', 'succeeded', 'failed', 'failed', 'succeeded'] as const) written.push(await writeDelivery(owner.partnerId, status));
    await writeDelivery(other.partnerId, 'failed');
    const base = `/admin/partners/${owner.partnerId}/webhook-deliveries`;

    // Act
    const firstPage = await api.admin('GET', `${base}?limit=2`);
    const secondPage = await api.admin('GET', `${base}?limit=2&cursor=${encodeURIComponent(firstPage.body.next_cursor)}`);
    const lastPage = await api.admin('GET', `${base}?limit=2&cursor=${encodeURIComponent(secondPage.body.next_cursor)}`);
    const failed = await api.admin('GET', `${base}?status=failed`);

    // Assert
    const ids = (page: { body: { items: Array<{ id: string }> } }) => page.body.items.map((item) => item.id);
    expect([...ids(firstPage), ...ids(secondPage), ...ids(lastPage)]).toEqual(written.map((delivery) => delivery.id).reverse());
    expect(lastPage.body.next_cursor).toBeNull();
    expect(ids(failed)).toEqual([written[3]?.id, written[2]?.id]);
    expect(failed.body.items[0]).toEqual({
      id: written[3]?.id,
      event_id: written[3]?.eventId,
      endpoint_id: 'whe_unused',
      event: 'transaction_succeeded',
      svc_tx_id: 'svc_tx_0123456789abcdefghjkmnpq',
      status: 'failed',
      attempts: 3,
      last_http_status: 500,
      last_error: 'HTTP 500: not a 2xx answer',
      created_at: written[3]?.createdAt,
      updated_at: written[3]?.updatedAt,
    });
  });

  it('refuses a bad status, a cursor of another filter, and an unknown partner', async () => {
    const base = `/admin/partners/${partner.partnerId}/webhook-deliveries`;
    await writeDelivery(partner.partnerId, 'succeeded');
    await writeDelivery(partner.partnerId, 'succeeded');
    const page = await api.admin('GET', `${base}?limit=1`);

    const badStatus = await api.admin('GET', `${base}?status=delivered`);
    const otherFilter = await api.admin('GET', `${base}?limit=1&status=failed&cursor=${encodeURIComponent(page.body.next_cursor)}`);
    const unknown = await api.admin('GET', '/admin/partners/ptr_000000000000000000000000/webhook-deliveries');

    expect([badStatus.status, Object.keys(badStatus.body.details.fieldErrors)]).toEqual([400, ['status']]);
    expect([otherFilter.status, Object.keys(otherFilter.body.details.fieldErrors)]).toEqual([400, ['cursor']]);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'PARTNER_NOT_FOUND']);
  });

  it('resends: 404 WEBHOOK_DELIVERY_NOT_FOUND for an unknown delivery, 409 WEBHOOK_ENDPOINT_DELETED when its endpoint is gone', async () => {
    const endpoint = await api.admin('POST', endpointsPath(partner.partnerId), validEndpoint);
    const delivery = await writeDelivery(partner.partnerId, 'failed', endpoint.body.id);
    await api.admin('DELETE', `${endpointsPath(partner.partnerId)}/${endpoint.body.id}`);

    const unknown = await api.admin('POST', `/admin/webhook-deliveries/${newId.webhookDelivery()}/resend`);
    const gone = await api.admin('POST', `/admin/webhook-deliveries/${delivery.id}/resend`);

    expect([unknown.status, unknown.body.code]).toEqual([404, 'WEBHOOK_DELIVERY_NOT_FOUND']);
    expect([gone.status, gone.body.code]).toEqual([409, 'WEBHOOK_ENDPOINT_DELETED']);
  });

  it('writes the resent delivery into the outbox, for the relay to enqueue', async () => {
    const endpoint = await api.admin('POST', endpointsPath(partner.partnerId), validEndpoint);
    const delivery = await writeDelivery(partner.partnerId, 'succeeded', endpoint.body.id);

    const resent = await api.admin('POST', `/admin/webhook-deliveries/${delivery.id}/resend`);

    expect(resent.status).toBe(202);
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.webhookDelivery(resent.body.id), ConsistentRead: true }));
    expect(Item).toMatchObject({ status: 'pending', attempts: 0, eventId: delivery.eventId, payload: delivery.payload, gsi7pk: expect.stringMatching(/^OUTBOX#\d+$/), entity: 'webhookDelivery' });
  });
});

describe('audit events', () => {
  it('lists a partner’s events newest first, filtered by type, paged; and all partners’ without partner_id', async () => {
    // Arrange: three endpoint events of a fresh partner
    const owner = await api.createPartner();
    const first = await api.admin('POST', endpointsPath(owner.partnerId), { ...validEndpoint, name: `a-${randomUUID()}` });
    const second = await api.admin('POST', endpointsPath(owner.partnerId), validEndpoint);
    await api.admin('DELETE', `${endpointsPath(owner.partnerId)}/${first.body.id}`);

    // Act
    const all = await api.admin('GET', `/admin/audit-events?partner_id=${owner.partnerId}`);
    const created = await api.admin('GET', `/admin/audit-events?partner_id=${owner.partnerId}&type=webhook_endpoint.created&limit=1`);
    const next = await api.admin('GET', `/admin/audit-events?partner_id=${owner.partnerId}&type=webhook_endpoint.created&limit=1&cursor=${encodeURIComponent(created.body.next_cursor)}`);
    const platform = await api.admin('GET', '/admin/audit-events?limit=200');
    const badType = await api.admin('GET', '/admin/audit-events?type=everything');

    // Assert
    // After the partner's own creation and its key's (TestApi.createPartner issues one).
    expect(all.body.items.map((event: { type: string; resource_id: string }) => [event.type, event.resource_id])).toEqual([
      ['webhook_endpoint.deleted', first.body.id],
      ['webhook_endpoint.created', second.body.id],
      ['webhook_endpoint.created', first.body.id],
      ['api_key.created', expect.stringMatching(/\S/)],
      ['partner.created', owner.partnerId],
    ]);
    expect(all.body.items[2]).toEqual({
      id: expect.stringMatching(/^aud_/),
      type: 'webhook_endpoint.created',
      partner_id: owner.partnerId,
      resource_type: 'webhook_endpoint',
      resource_id: first.body.id,
      details: { admin: 'local-admin', name: first.body.name, events: 'transaction_succeeded,transaction_refunded' },
      created_at: expect.any(String),
    });
    expect([...created.body.items, ...next.body.items].map((event: { resource_id: string }) => event.resource_id)).toEqual([second.body.id, first.body.id]);
    expect(platform.body.items.map((event: { partner_id: string }) => event.partner_id)).toContain(owner.partnerId);
    expect([badType.status, Object.keys(badType.body.details.fieldErrors)]).toEqual([400, ['type']]);
  });
});
