import { describe, expect, it } from '@jest/globals';
import { createHash, createHmac } from 'node:crypto';
import { generateApiKey, generateHmacSecret, hashApiKey, signatureMatches, signBody } from '../../../lib/auth/credentials';

describe('API keys and HMAC secrets', () => {
  it('are random, 32 bytes after a recognisable prefix that names the scope', () => {
    const partnerKeys = new Set(Array.from({ length: 100 }, () => generateApiKey('partner')));

    expect(partnerKeys.size).toBe(100);
    for (const key of partnerKeys) expect(Buffer.from(key.replace('svc_partner_', ''), 'base64url')).toHaveLength(32);
    expect(generateApiKey('platform')).toMatch(/^svc_platform_[A-Za-z0-9_-]{43}$/);
    expect(generateHmacSecret()).toMatch(/^svc_hmac_[A-Za-z0-9_-]{43}$/);
  });

  it('are stored as the SHA-256 hex of the key', () => {
    expect(hashApiKey('svc_partner_abc')).toBe(createHash('sha256').update('svc_partner_abc').digest('hex'));
    expect(hashApiKey('svc_partner_abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('svc_partner_abc')).not.toBe(hashApiKey('svc_partner_abd'));
  });
});

describe('request signatures', () => {
  const secret = 'svc_hmac_test-secret';
  const body = '{"client_id":"merchant-1","legal_name":"Zoë Ltd"}';

  it('are HMAC-SHA256 of the exact raw body, lowercase hex', () => {
    const expected = createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex');

    expect(signBody(secret, body)).toBe(expected);
    expect(signBody(secret, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('match only the same body and secret', () => {
    const signature = signBody(secret, body);

    expect(signatureMatches(secret, body, signature)).toBe(true);
    expect(signatureMatches(secret, `${body} `, signature)).toBe(false);
    expect(signatureMatches(secret, body.replace('Zoë', 'Zoe'), signature)).toBe(false);
    expect(signatureMatches('svc_hmac_other', body, signature)).toBe(false);
  });

  it('refuse anything that is not a 64-digit hex digest, without throwing', () => {
    const signature = signBody(secret, body);

    for (const received of ['', 'abc', signature.slice(0, 63), `${signature}00`, `${signature.slice(0, 63)}g`, 'sha256=' + signature]) {
      expect(signatureMatches(secret, body, received)).toBe(false);
    }
  });
});
