import { describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { authenticateAdmin, createAdminTokenVerifier, issueLocalAdminToken } from '../../../lib/auth/admin-token';
import { loadConfig } from '../../../lib/config';
import { ServiceError } from '../../../lib/domain/errors';

const local = loadConfig({ ADMIN_JWT_SECRET: 'x'.repeat(40), ADMIN_JWT_ISSUER: 'svc-local', ADMIN_JWT_AUDIENCE: 'svc-admin' });

describe('admin tokens', () => {
  it('accept a local HS256 token with role admin, issuer and audience', async () => {
    const token = await issueLocalAdminToken(local, { subject: 'ops@example.com' });

    await expect(authenticateAdmin(createAdminTokenVerifier(local), `Bearer ${token}`)).resolves.toEqual({ subject: 'ops@example.com' });
  });

  it('refuse a token for another audience or issuer', async () => {
    const otherAudience = await issueLocalAdminToken({ ...local, ADMIN_JWT_AUDIENCE: 'someone-else' });
    const otherIssuer = await issueLocalAdminToken({ ...local, ADMIN_JWT_ISSUER: 'someone-else' });
    const verify = createAdminTokenVerifier(local);

    for (const token of [otherAudience, otherIssuer]) {
      await expect(authenticateAdmin(verify, `Bearer ${token}`)).rejects.toMatchObject({ code: 'ADMIN_TOKEN_INVALID', status: 401 });
    }
  });

  it('are checked for issuer and audience locally too, with the local defaults', async () => {
    // Arrange: the configuration `npm start` runs with (no ADMIN_JWT_* set but the secret's default)
    const defaults = loadConfig({});
    const verify = createAdminTokenVerifier(defaults);
    const sign = (claims: { iss?: string; aud?: string }) => {
      let jwt = new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h');
      if (claims.iss !== undefined) jwt = jwt.setIssuer(claims.iss);
      if (claims.aud !== undefined) jwt = jwt.setAudience(claims.aud);
      return jwt.sign(new TextEncoder().encode(defaults.ADMIN_JWT_SECRET));
    };

    // Act
    const issued = await issueLocalAdminToken(defaults);
    const foreign = [await sign({}), await sign({ iss: 'anyone', aud: 'partner-payments-admin' }), await sign({ iss: 'partner-payments-local', aud: 'anything' })];

    // Assert
    expect(defaults).toMatchObject({ ADMIN_JWT_ISSUER: 'partner-payments-local', ADMIN_JWT_AUDIENCE: 'partner-payments-admin' });
    await expect(authenticateAdmin(verify, `Bearer ${issued}`)).resolves.toEqual({ subject: 'local-admin' });
    for (const token of foreign) {
      await expect(authenticateAdmin(verify, `Bearer ${token}`)).rejects.toMatchObject({ code: 'ADMIN_TOKEN_INVALID', status: 401 });
    }
  });

  it('refuse a token that lives longer than 24 hours, or has no iat', async () => {
    const verify = createAdminTokenVerifier(local);
    const now = Math.floor(Date.now() / 1000);
    const sign = (times: { iat?: number; exp: number }) => {
      let jwt = new SignJWT({ role: 'admin' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('svc-local')
        .setAudience('svc-admin')
        .setExpirationTime(times.exp);
      if (times.iat !== undefined) jwt = jwt.setIssuedAt(times.iat);
      return jwt.sign(new TextEncoder().encode(local.ADMIN_JWT_SECRET));
    };

    const year3000 = await sign({ iat: now, exp: Date.UTC(3000, 0, 1) / 1000 });
    const dayAndASecond = await sign({ iat: now, exp: now + 24 * 3600 + 1 });
    const withoutIat = await sign({ exp: now + 3600 });
    const fullDay = await sign({ iat: now, exp: now + 24 * 3600 });

    for (const token of [year3000, dayAndASecond, withoutIat]) {
      await expect(authenticateAdmin(verify, `Bearer ${token}`)).rejects.toMatchObject({ code: 'ADMIN_TOKEN_INVALID', status: 401 });
    }
    await expect(authenticateAdmin(verify, `Bearer ${fullDay}`)).resolves.toEqual({ subject: 'admin' });
  });

  it('refuse an "alg: none" token even with role admin', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ role: 'admin', exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url');

    await expect(authenticateAdmin(createAdminTokenVerifier(local), `Bearer ${header}.${payload}.`)).rejects.toBeInstanceOf(ServiceError);
  });

  it('refuse a header that is not "Bearer <token>"', async () => {
    const token = await issueLocalAdminToken(local);
    const verify = createAdminTokenVerifier(local);

    for (const header of [undefined, '', token, `Basic ${token}`, 'Bearer ']) {
      await expect(authenticateAdmin(verify, header)).rejects.toMatchObject({ code: 'ADMIN_TOKEN_INVALID' });
    }
  });

  it('refuse to start without a way to verify tokens, or with JWKS but no issuer/audience', () => {
    const aws = loadConfig({ SVC_RUNTIME: 'aws', AWS_REGION: 'eu-west-1', TABLE_NAME: 'tbl', KMS_KEY_ID: 'k' });

    expect(() => createAdminTokenVerifier(aws)).toThrow(/ADMIN_JWKS_URL/);
    expect(() => createAdminTokenVerifier({ ...aws, ADMIN_JWKS_URL: 'https://issuer.example/jwks.json' })).toThrow(/ADMIN_JWT_ISSUER/);
    expect(() =>
      createAdminTokenVerifier({ ...aws, ADMIN_JWKS_URL: 'https://issuer.example/jwks.json', ADMIN_JWT_ISSUER: 'i', ADMIN_JWT_AUDIENCE: 'a' }),
    ).not.toThrow();
  });
});
