/** Widget mode (decisions.md §10): the public branding packet and checkout-intent-v2. */
import { describe, expect, it } from '@jest/globals';
import { usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite({ partner: { name: 'Widget Pay' } });

describe('GET /branding/packet', () => {
  it("serves the partner's branding publicly, with CORS, and no secrets", async () => {
    const patched = await suite.api.admin('PATCH', `/admin/partners/${suite.partner.partnerId}`, {
      branding: { display_name: 'Widget Pay Checkout', logo_url: 'https://cdn.example.com/logo.png', brand_color: '#1a2b3c' },
    });

    const packet = await suite.api.request('GET', `/branding/packet?partner_id=${suite.partner.partnerId}&client_id=${suite.clientId}`, {
      headers: { origin: 'https://shop.example.com' },
    });

    expect(patched.body.branding).toEqual({ display_name: 'Widget Pay Checkout', logo_url: 'https://cdn.example.com/logo.png', brand_color: '#1a2b3c' });
    expect(packet.status).toBe(200);
    expect(packet.headers.get('access-control-allow-origin')).toBe('*');
    expect(packet.body).toEqual({
      partner_id: suite.partner.partnerId,
      client_id: suite.clientId,
      display_name: 'Widget Pay Checkout',
      logo_url: 'https://cdn.example.com/logo.png',
      brand_color: '#1a2b3c',
      processor_publishable_key: 'pk_test_sandbox_local',
    });
  });

  it('answers the CORS preflight', async () => {
    const preflight = await suite.api.request('OPTIONS', `/branding/packet?partner_id=${suite.partner.partnerId}&client_id=${suite.clientId}`, {
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET' },
    });

    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
  });

  it('answers 400 VALIDATION_ERROR without a parameter and 404 for an unknown partner or client, with CORS', async () => {
    const missing = await suite.api.request('GET', `/branding/packet?partner_id=${suite.partner.partnerId}`);
    const unknownPartner = await suite.api.request('GET', `/branding/packet?partner_id=ptr_nobody&client_id=${suite.clientId}`);
    const unknownClient = await suite.api.request('GET', `/branding/packet?partner_id=${suite.partner.partnerId}&client_id=nobody`);

    expect(missing.status).toBe(400);
    expect(missing.body.details.fieldErrors.client_id).toBeDefined();
    expect(unknownPartner.status).toBe(404);
    expect(unknownPartner.body.code).toBe('PARTNER_NOT_FOUND');
    expect(unknownClient.status).toBe(404);
    expect(unknownClient.body.code).toBe('CLIENT_NOT_FOUND');
    for (const response of [missing, unknownPartner, unknownClient]) expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it("falls back to the partner's name when no branding is set", async () => {
    const plain = await suite.api.createPartner({ name: 'Plain Pay' });
    const plainClient = await suite.api.createClient(plain);

    const packet = await suite.api.request('GET', `/branding/packet?partner_id=${plain.partnerId}&client_id=${plainClient}`);

    expect(packet.body).toMatchObject({ display_name: 'Plain Pay', logo_url: null, brand_color: null });
  });

  it('refuses bad branding in PATCH /admin/partners', async () => {
    const response = await suite.api.admin('PATCH', `/admin/partners/${suite.partner.partnerId}`, { branding: { logo_url: 'javascript:alert(1)', brand_color: 'red' } });

    expect(response.status).toBe(400);
    expect(Object.keys(response.body.details.fieldErrors)).toEqual(['branding']);
  });

  it('refuses a logo URL with a user name or password: the packet is public', async () => {
    const answers = await Promise.all(
      ['https://bob:PW123@cdn.example/logo.png', 'https://token@cdn.example/logo.png'].map((logo_url) =>
        suite.api.admin('PATCH', `/admin/partners/${suite.partner.partnerId}`, { branding: { logo_url } }),
      ),
    );

    expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual([
      [400, 'VALIDATION_ERROR'],
      [400, 'VALIDATION_ERROR'],
    ]);
  });
});

describe('POST /transactions/checkout-intent-v2', () => {
  it('answers like checkout-intent plus branding, and is not CORS-enabled', async () => {
    const response = await suite.api.signed(suite.partner, '/transactions/checkout-intent-v2', {
      partner_id: suite.partner.partnerId,
      client_id: suite.clientId,
      amount: 20,
      currency: 'EUR',
      email: 'buyer@example.com',
      partner_reference: 'widget-order-1',
    }, { headers: { origin: 'https://shop.example.com' } });
    const preflight = await suite.api.request('OPTIONS', '/transactions/checkout-intent-v2', { headers: { origin: 'https://shop.example.com' } });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      svc_tx_id: expect.stringMatching(/^svc_tx_/),
      status: 'pending',
      processor_payment_intent_id: expect.stringMatching(/^pi_/),
      client_secret: expect.any(String),
      processor_publishable_key: 'pk_test_sandbox_local',
      branding: { display_name: 'Widget Pay Checkout', logo_url: 'https://cdn.example.com/logo.png', brand_color: '#1a2b3c' },
    });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.status).toBe(405);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});
