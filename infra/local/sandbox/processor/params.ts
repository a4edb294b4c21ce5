/**
 * Typed access to parsed form parameters, refusing what Stripe refuses in Stripe's words (`parameter_unknown`,
 * `parameter_missing`, `parameter_invalid_empty`, ...) and naming the parameter as Stripe names it (`a[b]`).
 */
import { invalidRequest, type ApiError } from './errors';
import { isHash, type FormHash, type FormValue } from './form';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** One level of parameters (`prefix` names nested ones: `a[b]`); unknown keys are refused on construction. */
export class Params {
  constructor(
    private readonly hash: FormHash,
    allowed: readonly string[],
    private readonly prefix = '',
  ) {
    for (const key of Object.keys(hash)) {
      if (allowed.includes(key)) continue;
      if (key === 'expand' && prefix === '') {
        // Stripe accepts it everywhere; answering unexpanded objects instead would mislead the caller.
        throw invalidRequest('The processor sandbox does not implement expand: it returns objects with ids, unexpanded.', { param: 'expand', code: 'parameter_unknown' });
      }
      throw invalidRequest(`Received unknown parameter: ${this.name(key)}`, { param: this.name(key), code: 'parameter_unknown' });
    }
  }

  name(key: string): string {
    return this.prefix === '' ? key : `${this.prefix}[${key}]`;
  }

  /** undefined when absent, '' when sent empty (Stripe's "unset"). */
  optionalString(key: string, maxLength = 5_000): string | undefined {
    const value = this.hash[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw invalidRequest(`Invalid string: ${this.name(key)} must be a string, not a list or hash`, { param: this.name(key) });
    if (value.length > maxLength) {
      throw invalidRequest(`Invalid string: ${this.name(key)} must be at most ${maxLength} characters`, { param: this.name(key) });
    }
    return value;
  }

  requiredString(key: string): string {
    const value = this.optionalString(key);
    if (value === undefined) throw missingParam(this.name(key));
    if (value === '') throw emptyParam(this.name(key));
    return value;
  }

  optionalInteger(key: string, minimum: number): number | undefined {
    const text = this.optionalString(key);
    if (text === undefined) return undefined;
    if (text === '') throw emptyParam(this.name(key));
    const value = Number(text);
    if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) {
      throw invalidRequest(`Invalid integer: ${text}`, { param: this.name(key), code: 'parameter_invalid_integer' });
    }
    if (value < minimum) {
      throw invalidRequest(`This value must be greater than or equal to ${minimum}.`, { param: this.name(key), code: 'parameter_invalid_integer' });
    }
    return value;
  }

  requiredInteger(key: string, minimum: number): number {
    const value = this.optionalInteger(key, minimum);
    if (value === undefined) throw missingParam(this.name(key));
    return value;
  }

  optionalBoolean(key: string): boolean | undefined {
    const text = this.optionalString(key);
    if (text === undefined) return undefined;
    if (text !== 'true' && text !== 'false') throw invalidRequest(`Invalid boolean: ${text}`, { param: this.name(key) });
    return text === 'true';
  }

  optionalEnum<T extends string>(key: string, values: readonly T[]): T | undefined {
    const text = this.optionalString(key);
    if (text === undefined || text === '') return undefined;
    if (!(values as readonly string[]).includes(text)) {
      throw invalidRequest(`Invalid ${this.name(key)}: must be one of ${listing(values)}`, { param: this.name(key) });
    }
    return text as T;
  }

  requiredEnum<T extends string>(key: string, values: readonly T[]): T {
    this.requiredString(key); // missing or empty: refused as such, before the value is read
    return this.optionalEnum(key, values) as T;
  }

  /** An email address such as `receipt_email`: undefined when absent, null when sent empty (unset). */
  optionalEmail(key: string): string | null | undefined {
    const email = this.optionalString(key, 800);
    if (email === undefined) return undefined;
    if (email === '') return null;
    if (!EMAIL.test(email)) throw invalidRequest(`Invalid email address: ${email}`, { param: this.name(key), code: 'email_invalid' });
    return email;
  }

  optionalHash(key: string, allowed: readonly string[]): Params | undefined {
    const value = this.hash[key];
    if (value === undefined) return undefined;
    if (!isHash(value)) throw invalidRequest(`Invalid object: ${this.name(key)} must be a hash`, { param: this.name(key) });
    return new Params(value, allowed, this.name(key));
  }

  /** A list sent as `k[]=a&k[]=b` or `k[0]=a&k[1]=b`. */
  optionalStringArray(key: string): string[] | undefined {
    const value = this.hash[key];
    if (value === undefined) return undefined;
    let items: FormValue[];
    if (Array.isArray(value)) {
      items = value;
    } else if (isHash(value) && Object.keys(value).every((index) => /^\d+$/.test(index))) {
      items = Object.keys(value)
        .sort((a, b) => Number(a) - Number(b))
        .map((index) => value[index] ?? '');
    } else {
      throw invalidRequest(`Invalid array: ${this.name(key)} must be a list`, { param: this.name(key) });
    }
    if (items.length === 0) throw emptyParam(this.name(key));
    return items.map((item, index) => {
      if (typeof item !== 'string' || item === '') {
        throw invalidRequest(`Invalid array: ${this.name(key)}[${index}] must be a non-empty string`, { param: this.name(key) });
      }
      return item;
    });
  }

  /** Stripe's metadata rules: at most 50 keys of up to 40 characters, string values of up to 500; '' unsets. */
  optionalMetadata(key: string): Record<string, string> | undefined {
    const value = this.hash[key];
    if (value === undefined) return undefined;
    if (value === '') return {};
    if (!isHash(value)) throw invalidRequest(`Invalid object: ${this.name(key)} must be a hash of strings`, { param: this.name(key) });
    const entries = Object.entries(value);
    if (entries.length > 50) throw invalidRequest(`Invalid ${this.name(key)}: you can specify up to 50 keys`, { param: this.name(key) });
    const kept: Array<[string, string]> = [];
    for (const [metadataKey, metadataValue] of entries) {
      const param = `${this.name(key)}[${metadataKey}]`;
      if (metadataKey.length > 40) {
        throw invalidRequest(`Metadata keys can have up to 40 characters, but you passed in a key that is ${metadataKey.length} characters. Invalid key: ${metadataKey}`, { param });
      }
      if (typeof metadataValue !== 'string') throw invalidRequest(`Invalid string: ${param} must be a string`, { param });
      if (metadataValue.length > 500) {
        throw invalidRequest(`Metadata values can have up to 500 characters, but you passed in a value that is ${metadataValue.length} characters.`, { param });
      }
      if (metadataValue !== '') kept.push([metadataKey, metadataValue]);
    }
    // fromEntries defines own properties, so even a key such as `__proto__` is kept as sent.
    return Object.fromEntries(kept);
  }
}

/** Also for a nested parameter a handler requires only in some cases (`automatic_payment_methods[enabled]`). */
export function missingParam(param: string): ApiError {
  return invalidRequest(`Missing required param: ${param}.`, { param, code: 'parameter_missing' });
}

function emptyParam(param: string): ApiError {
  return invalidRequest(
    `You passed an empty string for '${param}'. We assume empty values are an attempt to unset a parameter; however '${param}' cannot be unset. You should remove '${param}' from your request or supply a non-empty value.`,
    { param, code: 'parameter_invalid_empty' },
  );
}

function listing(values: readonly string[]): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')}, or ${values[values.length - 1]}`;
}
