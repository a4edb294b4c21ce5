import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { SignJWT } from 'jose';
import { hashApiKey } from '../../../lib/auth/credentials';
import { issueLocalAdminToken } from '../../../lib/auth/admin-token';
import { config } from '../../../lib/config';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import { TestApi } from '../../support/api';

let api: TestApi;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(() => api.close());

describe('admin authentication', () => {
  it('refuses a missing, malformed, wrongly signed or expired token with 401 ADMIN_TOKEN_INVALID', async () => {
    const wrongSecret = await new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-that-is-long-enough-to-use'));
    const expired = await new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(new TextEncoder().encode(config.ADMIN_JWT_SECRET ?? ''));
    const noExpiry = await new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(config.ADMIN_JWT_SECRET ?? ''));

    const responses = [
      await api.request('GET', '/admin/partners'),
      await api.admin('GET', '/admin/partners', undefined, 'not-a-jwt'),
      await api.admin('GET', '/admin/partners', undefined, wrongSecret),
      await api.admin('GET', '/admin/partners', undefined, expired),
      await api.admin('GET', '/admin/partners', undefined, noExpiry),
    ];

    for (const response of responses) {
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: expect.any(String), code: 'ADMIN_TOKEN_INVALID' });
    }
  });

  it('refuses a valid token without role admin with 403 ADMIN_FORBIDDEN', async () => {
    const token = await issueLocalAdminToken(config, { role: 'support' });

    const response = await api.admin('GET', '/admin/partners', undefined, token);

    expect(response.status).toBe(403);
    expect(response.body.code).toBe('ADMIN_FORBIDDEN');
  });
});

describe('partners', () => {
  it('creates a partner with the documented defaults', async () => {
    const response = await api.admin('POST', '/admin/partners', { name: 'Acme Pay', service_fee_percentage: 1.25 });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      partner_id: expect.stringMatching(/^ptr_[0-9a-z]{24}$/),
      name: 'Acme Pay',
      status: 'active',
      kyc_status: 'pending',
      service_fee_percentage: 1.25,
      rate_limit_per_minute: null,
      branding: { display_name: 'Acme Pay', logo_url: null, brand_color: null },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('validates the body: fields out of range and unknown fields are 400 VALIDATION_ERROR', async () => {
    const response = await api.admin('POST', '/admin/partners', { name: '', service_fee_percentage: 150, status: 'gone', colour: 'red' });

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(response.body.details.fieldErrors).sort()).toEqual(['name', 'service_fee_percentage', 'status']);
    expect(response.body.details.formErrors.join(' ')).toContain('colour');
  });

  it('reads, lists and updates a partner; an unknown partner is 404 PARTNER_NOT_FOUND', async () => {
    const created = await api.admin('POST', '/admin/partners', { name: 'Beta', service_fee_percentage: 2 });
    const id = created.body.partner_id as string;

    const read = await api.admin('GET', `/admin/partners/${id}`);
    const listed = await api.admin('GET', '/admin/partners?limit=200');
    const updated = await api.admin('PATCH', `/admin/partners/${id}`, { status: 'suspended', kyc_status: 'approved', rate_limit_per_minute: 30 });
    const cleared = await api.admin('PATCH', `/admin/partners/${id}`, { rate_limit_per_minute: null });
    const empty = await api.admin('PATCH', `/admin/partners/${id}`, {});
    const unknownRead = await api.admin('GET', '/admin/partners/ptr_unknown');
    const unknownPatch = await api.admin('PATCH', '/admin/partners/ptr_unknown', { name: 'X' });

    expect(read.body).toEqual(created.body);
    expect(listed.body.items.map((partner: { partner_id: string }) => partner.partner_id)).toContain(id);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ partner_id: id, name: 'Beta', status: 'suspended', kyc_status: 'approved', rate_limit_per_minute: 30 });
    expect(updated.body.updated_at >= created.body.updated_at).toBe(true);
    expect(cleared.body.rate_limit_per_minute).toBeNull();
    expect(empty.status).toBe(400);
    expect(unknownRead.status).toBe(404);
    expect(unknownRead.body.code).toBe('PARTNER_NOT_FOUND');
    expect(unknownPatch.status).toBe(404);
    expect(unknownPatch.body.code).toBe('PARTNER_NOT_FOUND');
  });
});

describe('API keys', () => {
  it('issues a partner key and HMAC secret once, and stores neither in plaintext', async () => {
    const partner = await api.admin('POST', '/admin/partners', { name: 'Gamma', service_fee_percentage: 1 });

    const response = await api.admin('POST', `/admin/partners/${partner.body.partner_id}/api-keys`, { scope: 'partner' });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      key_id: expect.stringMatching(/^key_/),
      api_key: expect.stringMatching(/^svc_partner_[A-Za-z0-9_-]{43}$/),
      hmac_secret: expect.stringMatching(/^svc_hmac_[A-Za-z0-9_-]{43}$/),
      scope: 'partner',
      partner_id: partner.body.partner_id,
    });
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.apiKey(hashApiKey(response.body.api_key)) }),
    );
    const stored = JSON.stringify(Item);
    expect(Item?.keyId).toBe(response.body.key_id);
    expect(stored).not.toContain(response.body.api_key);
    expect(stored).not.toContain(response.body.hmac_secret);
    expect(stored).not.toContain(response.body.hmac_secret.slice('svc_hmac_'.length));
  });

  it('issues platform keys, and refuses a key for an unknown partner or the wrong scope', async () => {
    const platform = await api.admin('POST', '/admin/api-keys', { scope: 'platform' });
    const unknownPartner = await api.admin('POST', '/admin/partners/ptr_unknown/api-keys', { scope: 'partner' });
    const wrongScope = await api.admin('POST', '/admin/api-keys', { scope: 'partner' });

    expect(platform.status).toBe(201);
    expect(platform.body.api_key).toMatch(/^svc_platform_/);
    expect(platform.body.scope).toBe('platform');
    expect(platform.body.partner_id).toBeUndefined();
    expect(unknownPartner.status).toBe(404);
    expect(unknownPartner.body.code).toBe('PARTNER_NOT_FOUND');
    expect(wrongScope.status).toBe(400);
    expect(wrongScope.body.details.fieldErrors.scope).toBeDefined();
  });

  it('revokes a key with 204, and an unknown or already revoked key is 404 API_KEY_NOT_FOUND', async () => {
    const platform = await api.admin('POST', '/admin/api-keys', { scope: 'platform' });

    const revoked = await api.admin('DELETE', `/admin/api-keys/${platform.body.key_id}`);
    const again = await api.admin('DELETE', `/admin/api-keys/${platform.body.key_id}`);

    expect(revoked.status).toBe(204);
    expect(revoked.body).toBeUndefined();
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('API_KEY_NOT_FOUND');
  });
});
