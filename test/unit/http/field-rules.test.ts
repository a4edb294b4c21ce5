/**
 * Field rules shared by the routes (lib/http/schemas.ts): `limit` is a plain decimal integer; identifiers and
 * free-text names hold no invisible or look-alike characters, and are refused, not trimmed, when they start or
 * end with whitespace (a partner's reference is kept exactly as sent, or not at all).
 */
import { describe, expect, it } from '@jest/globals';
import { CreatePartnerBody, UpdatePartnerBody } from '../../../lib/http/partner-schemas';
import { identifier, PageQuery, text } from '../../../lib/http/schemas';
import { InitializeBody } from '../../../lib/http/transaction-schemas';
import { CreateWebhookEndpointBody } from '../../../lib/http/webhook-schemas';

describe('limit', () => {
  it.each(['1', '50', '200', '007'])('takes %s', (limit) => {
    expect(PageQuery.safeParse({ limit })).toEqual({ success: true, data: { limit: Number(limit) } });
  });

  it.each(['0x10', '  5', ' 5', '5 ', '+5', '1e2', '10.0', '5.', '0b11', '', '0', '201', '-1', 'Infinity', '1_0', '٥'])('refuses %j', (limit) => {
    expect(PageQuery.safeParse({ limit }).success).toBe(false);
  });

  it('defaults to 50', () => {
    expect(PageQuery.parse({})).toEqual({ limit: 50 });
  });
});

/** Characters no identifier or name may hold: controls, and the bidi controls that reorder what is shown. */
const INVISIBLE = [
  ['NUL', '\u0000'],
  ['DEL', '\u007f'],
  ['a C1 control', '\u0085'],
  ['LRE', '\u202a'],
  ['RLO', '\u202e'],
  ['LRI', '\u2066'],
  ['PDI', '\u2069'],
  ['RLM', '\u200f'],
  ['the line separator U+2028', '\u2028'],
  ['the paragraph separator U+2029', '\u2029'],
];

describe('identifier()', () => {
  const clientId = identifier(3, 128);

  it.each([
    ...INVISIBLE,
    ['a zero-width space', '\u200b'],
    ['a zero-width joiner', '\u200d'],
    ['a byte order mark', '\ufeff'],
    ['a soft hyphen', '\u00ad'],
    ['#', '#'],
  ])('refuses %s inside', (_what, char) => {
    expect(clientId.safeParse(`merchant${char}1`).success).toBe(false);
  });

  it.each(['merchant-1 ', ' merchant-1', 'merchant-1\u00a0', '\u3000merchant-1', 'merchant-1\t', 'merchant-1\u200b', '\u200bmerchant-1'])(
    'refuses whitespace or an invisible character at either end: %j',
    (value) => {
      expect(clientId.safeParse(value).success).toBe(false);
    },
  );

  it.each(['merchant-1', 'Café Zoë 42', 'شركة-1', '商户_1', 'a b'])('takes %j', (value) => {
    expect(clientId.safeParse(value)).toEqual({ success: true, data: value });
  });
});

describe('text()', () => {
  const name = text(1, 100);

  it.each(INVISIBLE)('refuses %s anywhere in a name', (_what, char) => {
    for (const value of [`Acme${char}Ltd`, `${char}Acme`, `Acme${char}`]) expect(name.safeParse(value).success).toBe(false);
  });

  it.each([' Acme', 'Acme ', 'Acme\u00a0', '\u3000Acme', '   '])('refuses leading or trailing whitespace, never trims it: %j', (value) => {
    expect(name.safeParse(value).success).toBe(false);
  });

  it.each(['Acme Ltd', 'Zoë & Co.', 'مؤسسة الأمل', 'חברה בע"מ', '👩‍👩‍👧 Family Shop', 'می‌خواهم'])('takes %j as given (letters of any script, joiners inside)', (value) => {
    expect(name.safeParse(value)).toEqual({ success: true, data: value });
  });
});

describe('the name fields of every route', () => {
  const reference = (partner_reference: string) =>
    InitializeBody.safeParse({ partner_id: 'ptr_1', client_id: 'merchant-1', amount: 1, currency: 'USD', partner_reference });

  it.each([
    ['a partner name', (value: string) => CreatePartnerBody.safeParse({ name: value, service_fee_percentage: 1 })],
    ['a partner rename', (value: string) => UpdatePartnerBody.safeParse({ name: value })],
    ['a branding display name', (value: string) => UpdatePartnerBody.safeParse({ branding: { display_name: value } })],
    ['a webhook endpoint name', (value: string) => CreateWebhookEndpointBody.safeParse({ name: value, url: 'https://example.com/hook', events: ['transaction_succeeded'] })],
    ['a partner_reference', reference],
  ])('%s refuses NUL, a bidi override and leading or trailing whitespace, and takes a plain name', (_field, parse) => {
    for (const bad of ['Acme\u0000', 'Acme \u202egnp.exe', 'invoice-\u2066 1', ' Acme', 'Acme ']) expect(parse(bad).success).toBe(false);
    expect(parse('Acme Ltd').success).toBe(true);
  });

  it('keeps a partner_reference exactly as sent: a reference with spaces around it is refused, not trimmed', () => {
    expect(reference('order-1 ').success).toBe(false);
    expect(reference(' order-1').success).toBe(false);
    expect(reference('order 1')).toMatchObject({ success: true, data: { partner_reference: 'order 1' } });
  });
});
