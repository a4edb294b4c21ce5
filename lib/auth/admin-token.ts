/**
 * Admin bearer tokens (decisions.md §2). Locally: HS256 with `ADMIN_JWT_SECRET`. In AWS: verified against the
 * issuer's JWKS (`ADMIN_JWKS_URL`), with issuer and audience checked and the algorithm pinned to RS256.
 * Either way the issuer and audience are checked (local defaults in `lib/config.ts`), the token must be
 * unexpired, issued no later than now, live at most {@link MAX_TOKEN_LIFETIME_SECONDS}, and carry `role: "admin"`.
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { type Config, ConfigError } from '../config';
import { errors } from '../domain/errors';

export interface AdminIdentity {
  subject: string;
}

type Verify = (token: string) => Promise<JWTPayload>;

/** The longest an admin token may live (`exp - iat`): a leaked or forgotten token stops working within a day. */
const MAX_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

/** Builds the verifier for this configuration; fails the cold start if admin auth is not configured. */
export function createAdminTokenVerifier(config: Config): Verify {
  const claims = {
    ...(config.ADMIN_JWT_ISSUER === undefined ? {} : { issuer: config.ADMIN_JWT_ISSUER }),
    ...(config.ADMIN_JWT_AUDIENCE === undefined ? {} : { audience: config.ADMIN_JWT_AUDIENCE }),
    requiredClaims: ['exp'],
    // Requires `iat`, not in the future and at most this old.
    maxTokenAge: MAX_TOKEN_LIFETIME_SECONDS,
  };
  if (config.ADMIN_JWKS_URL !== undefined) {
    if (config.ADMIN_JWT_ISSUER === undefined || config.ADMIN_JWT_AUDIENCE === undefined) {
      throw new ConfigError('ADMIN_JWT_ISSUER and ADMIN_JWT_AUDIENCE are required with ADMIN_JWKS_URL');
    }
    const jwks = createRemoteJWKSet(new URL(config.ADMIN_JWKS_URL));
    return withCappedLifetime(async (token) => (await jwtVerify(token, jwks, { ...claims, algorithms: ['RS256'] })).payload);
  }
  if (config.ADMIN_JWT_SECRET === undefined) {
    throw new ConfigError('Admin authentication is not configured: set ADMIN_JWKS_URL (AWS) or ADMIN_JWT_SECRET (local)');
  }
  const secret = new TextEncoder().encode(config.ADMIN_JWT_SECRET);
  return withCappedLifetime(async (token) => (await jwtVerify(token, secret, { ...claims, algorithms: ['HS256'] })).payload);
}

/**
 * jose's `maxTokenAge` bounds how long ago `iat` was, not how far away `exp` is: without this, a token issued
 * now with a year-3000 expiry would pass. Refused as a claim failure, so it answers 401 like any bad token.
 */
const withCappedLifetime =
  (verify: Verify): Verify =>
  async (token) => {
    const payload = await verify(token);
    if ((payload.exp ?? Number.POSITIVE_INFINITY) - (payload.iat ?? Number.NEGATIVE_INFINITY) > MAX_TOKEN_LIFETIME_SECONDS) {
      throw new joseErrors.JWTClaimValidationFailed('"exp" claim is more than 24 hours after "iat"', payload, 'exp', 'check_failed');
    }
    return payload;
  };

/** `Authorization: Bearer <jwt>` -> the admin, or 401 ADMIN_TOKEN_INVALID / 403 ADMIN_FORBIDDEN. */
export async function authenticateAdmin(verify: Verify, authorization: string | undefined): Promise<AdminIdentity> {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (token === undefined) throw errors.adminTokenInvalid();
  let payload: JWTPayload;
  try {
    payload = await verify(token);
  } catch (error) {
    if (error instanceof joseErrors.JOSEError) throw errors.adminTokenInvalid();
    throw error;
  }
  if (payload.role !== 'admin') throw errors.adminForbidden();
  return { subject: payload.sub ?? 'admin' };
}

/** A local HS256 admin token (`npm run admin-token`, `npm start`). */
export async function issueLocalAdminToken(config: Config, options: { subject?: string; role?: string; ttl?: string } = {}) {
  if (config.ADMIN_JWT_SECRET === undefined) throw new ConfigError('ADMIN_JWT_SECRET is not set');
  let jwt = new SignJWT({ role: options.role ?? 'admin' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.subject ?? 'local-admin')
    .setIssuedAt()
    .setExpirationTime(options.ttl ?? '12h');
  if (config.ADMIN_JWT_ISSUER !== undefined) jwt = jwt.setIssuer(config.ADMIN_JWT_ISSUER);
  if (config.ADMIN_JWT_AUDIENCE !== undefined) jwt = jwt.setAudience(config.ADMIN_JWT_AUDIENCE);
  return jwt.sign(new TextEncoder().encode(config.ADMIN_JWT_SECRET));
}
