/**
 * A body's bytes are what the HMAC and the idempotency fingerprint cover, so no step may repair them: a body that
 * is not valid UTF-8 is refused (400 VALIDATION_ERROR, in formErrors) on every route, before authentication reads
 * it, instead of being decoded with U+FFFD in place of what could not be read. Sent over HTTP as raw bytes.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite();

interface RawAnswer {
  status: number;
  body: any;
}

/** One request whose body is exactly `bytes`, as a client that does not re-encode them sends it. */
function sendBytes(method: string, path: string, headers: Record<string, string>, bytes: Buffer): Promise<RawAnswer> {
  const url = new URL(`${suite.api.baseUrl}${path}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method, headers: { ...headers, 'content-length': String(bytes.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

/** A signed partner mutation over exactly these bytes (or over `signedOver`, to sign something else). */
const sendSigned = (path: string, bytes: Buffer, options: { idempotencyKey?: string; signedOver?: Buffer | string; contentType?: string } = {}) =>
  sendBytes('POST', path, {
    'content-type': options.contentType ?? 'application/json',
    'x-api-key': suite.partner.apiKey,
    'x-svc-hmac': createHmac('sha256', suite.partner.hmacSecret).update(options.signedOver ?? bytes).digest('hex'),
    'idempotency-key': options.idempotencyKey ?? randomUUID(),
  }, bytes);

/** A client body whose `legal_name` is "L" followed by `nameBytes`, as raw bytes. */
const clientBody = (nameBytes: number[]) =>
  Buffer.concat([Buffer.from(`{"client_id":"merchant-${randomUUID().slice(0, 8)}","legal_name":"L`), Buffer.from(nameBytes), Buffer.from('"}')]);

const refusedAsNotUtf8 = { status: 400, body: { error: expect.any(String), code: 'VALIDATION_ERROR', details: { fieldErrors: {}, formErrors: [expect.stringContaining('UTF-8')] } } };

describe('a request body that is not valid UTF-8', () => {
  it.each([
    ['a Latin-1 byte (E9)', [0xe9]],
    ['a lone surrogate encoded in UTF-8 (ED A0 80)', [0xed, 0xa0, 0x80]],
    ['an overlong "/" (C0 AF)', [0xc0, 0xaf]],
    ['a byte that never occurs in UTF-8 (FF)', [0xff]],
    ['a sequence cut short at the end of a string (C3)', [0xc3]],
  ])('is refused with 400 when it holds %s, signed over its exact bytes', async (_what, nameBytes) => {
    const response = await sendSigned('/clients', clientBody(nameBytes));

    expect(response).toEqual(refusedAsNotUtf8);
  });

  it('is refused with 400, not taken, when signed over the text with U+FFFD in place of the bad byte', async () => {
    // Arrange: what a decoder that repairs bytes would have made of the body, signed instead of the bytes
    const bytes = clientBody([0xe9]);
    const repaired = bytes.toString('utf8');

    // Act
    const response = await sendSigned('/clients', bytes, { signedOver: repaired });

    // Assert
    expect(repaired).toContain('L\ufffd');
    expect(response).toEqual(refusedAsNotUtf8);
  });

  it('never shares an idempotency fingerprint with another body: two different bad bodies under one key are both refused', async () => {
    // Arrange: same text once each byte is replaced, different bytes
    const key = randomUUID();
    const prefix = `{"client_id":"merchant-${randomUUID().slice(0, 8)}","legal_name":"L`;
    const first = Buffer.concat([Buffer.from(prefix), Buffer.from([0xe9]), Buffer.from('"}')]);
    const second = Buffer.concat([Buffer.from(prefix), Buffer.from([0xff]), Buffer.from('"}')]);

    // Act
    const answers = [
      await sendSigned('/clients', first, { idempotencyKey: key, signedOver: first.toString('utf8') }),
      await sendSigned('/clients', second, { idempotencyKey: key, signedOver: second.toString('utf8') }),
    ];

    // Assert
    expect(first.toString('utf8')).toBe(second.toString('utf8'));
    expect(answers).toEqual([refusedAsNotUtf8, refusedAsNotUtf8]);
  });

  it('is refused on every kind of route: admin, a read, and a body sent as another content type (base64 in the event)', async () => {
    const bad = Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]); // {"name":"<E9>"}

    const answers = [
      await sendBytes('POST', '/admin/partners', { authorization: `Bearer ${suite.api.adminToken}`, 'content-type': 'application/json' }, bad),
      await sendBytes('GET', '/clients', { 'x-api-key': suite.partner.apiKey, 'content-type': 'application/json' }, bad),
      await sendSigned('/clients', clientBody([0xe9]), { contentType: 'application/octet-stream' }),
    ];

    expect(answers).toEqual([refusedAsNotUtf8, refusedAsNotUtf8, refusedAsNotUtf8]);
  });

  it('still takes valid UTF-8 signed over its exact bytes, and stores the text exactly', async () => {
    const response = await sendSigned('/clients', clientBody([0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80])); // é😀

    expect(response.status).toBe(201);
    expect(response.body.legal_name).toBe('Lé😀');
  });
});
