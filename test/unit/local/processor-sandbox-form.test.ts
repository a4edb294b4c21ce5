/**
 * The processor sandbox's form parser and parameter checks, on their own: Stripe's form encoding (nested
 * hashes, `[]` and indexed lists) and Stripe's wording of refusals, without a server.
 */
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../../infra/local/sandbox/processor/errors';
import { canonical, parseForm } from '../../../infra/local/sandbox/processor/form';
import { Params } from '../../../infra/local/sandbox/processor/params';

/** The Stripe error body a call is refused with. */
function refusal(call: () => unknown): ApiError {
  try {
    call();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseForm', () => {
  it('reads nested hashes, [] lists and indexed keys; a repeated scalar keeps the last value', () => {
    const form = parseForm('a=1&b[c]=2&d[]=x&d[]=y&e[1]=w&e[0]=z&a=3&f=hello+world%21');

    expect(JSON.parse(JSON.stringify(form))).toEqual({ a: '3', b: { c: '2' }, d: ['x', 'y'], e: { '1': 'w', '0': 'z' }, f: 'hello world!' });
  });

  it('keeps __proto__ as a plain key, never touching a prototype', () => {
    const form = parseForm('__proto__[polluted]=yes&metadata[__proto__]=x');

    expect(Object.keys(form)).toEqual(['__proto__', 'metadata']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['a bad percent-encoding', 'amount=%ZZ', /bad percent-encoding/],
    ['a name that is not a[b][c]', 'a[b]c=1', /invalid parameter name/],
    ['an empty key inside a name', 'a[][b]=1', /invalid parameter name/],
    ['a scalar and a hash under one name', 'amount=1&amount[x]=2', /conflicts/],
    ['nesting deeper than any Stripe parameter', `metadata${'[a]'.repeat(40)}=1`, /nested/],
  ])('refuses %s with 400 invalid_request_error', (_case, body, message) => {
    const error = refusal(() => parseForm(body));

    expect(error.status).toBe(400);
    expect(error.body).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(message) });
  });
});

describe('canonical', () => {
  it('compares parameters regardless of their order, and tells different values apart', () => {
    expect(canonical(parseForm('a=1&m[x]=1&m[y]=2'))).toBe(canonical(parseForm('m[y]=2&a=1&m[x]=1')));
    expect(canonical(parseForm('a=1'))).not.toBe(canonical(parseForm('a=2')));
    expect(canonical(parseForm('l[]=1&l[]=2'))).not.toBe(canonical(parseForm('l[]=2&l[]=1')));
  });
});

describe('Params', () => {
  it('reads an indexed list in index order, and metadata without its unset keys', () => {
    const params = new Params(parseForm('types[1]=b&types[0]=a&metadata[k]=v&metadata[gone]='), ['types', 'metadata']);

    expect(params.optionalStringArray('types')).toEqual(['a', 'b']);
    expect(params.optionalMetadata('metadata')).toEqual({ k: 'v' });
  });

  it('names a nested parameter in its refusal, as Stripe does', () => {
    const outer = new Params(parseForm('automatic_payment_methods[enabled]=maybe'), ['automatic_payment_methods']);
    const inner = outer.optionalHash('automatic_payment_methods', ['enabled']);

    const error = refusal(() => inner?.optionalBoolean('enabled'));

    expect(error.body).toMatchObject({ message: 'Invalid boolean: maybe', param: 'automatic_payment_methods[enabled]' });
    expect(refusal(() => new Params(parseForm('colour=red'), [])).body).toMatchObject({ code: 'parameter_unknown', param: 'colour' });
  });
});
