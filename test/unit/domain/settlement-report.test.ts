import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CURRENCY_EXPONENTS, type CurrencyCode, MAX_MINOR_UNITS, currencyCode, currencyExponent } from '../../../lib/domain/money';
import { ENTRY_TYPES, type EntryType } from '../../../lib/domain/ledger';
import { contentsOf, type SettlementBatch, type SettlementItem, totalsOf } from '../../../lib/domain/settlement';
import {
  SETTLEMENT_REPORT_CONTENT_TYPE,
  batchReportContentDisposition,
  batchReportCsv,
  batchReportFilename,
} from '../../../lib/domain/settlement-report';
import { fixPropertySeed } from '../../support/seeds';

fixPropertySeed();

const HEADER = 'type,svc_tx_id,partner_reference,created_at,currency,gross,processor_fee,platform_fee,net';

type Amounts = Pick<SettlementItem, 'grossMinor' | 'processorFeeMinor' | 'platformFeeMinor' | 'netMinor'>;

/** A batch line: a ledger entry of `type`. Its payment was made a day before the entry, so a report writing the
 * payment's date instead of the entry's would show. */
function line(type: EntryType, currency: string, fields: Partial<SettlementItem> & Amounts): SettlementItem {
  return {
    type,
    key: type === 'transaction' ? 'sale' : `${type}#1`,
    cause: 'pi_1',
    svcTxId: 'svc_tx_a',
    partnerId: 'ptr_1',
    clientId: 'cli_1',
    partnerReference: 'order-1',
    currency: currencyCode(currency),
    txCreatedAt: '2026-02-28T10:00:00.000Z',
    createdAt: '2026-03-01T10:00:00.000Z',
    svcEarningMinor: 0,
    settlesTransaction: type === 'transaction',
    ...fields,
  };
}

/** A committed batch of `lines` as readers see it: its contents and totals built from them, the lines read apart. */
function batchOf(lines: SettlementItem[], currency = lines[0]?.currency ?? currencyCode('USD')): SettlementBatch {
  return {
    id: 'stl_0123456789abcdefghjkmnpq',
    partnerId: 'ptr_1',
    clientId: 'cli_1',
    currency,
    ...contentsOf(lines),
    totals: totalsOf(lines),
    status: 'pending',
    rail: 'railA',
    transferId: null,
    payoutClaim: null,
    payoutAttempts: 0,
    failureReason: null,
    createdAt: '2026-03-03T00:00:00.000Z',
    updatedAt: '2026-03-03T00:00:00.000Z',
  };
}

/** The report of a batch of `lines`, as the report's use case builds it: the batch, and its lines read apart. */
const reportOf = (lines: SettlementItem[], currency?: CurrencyCode) => batchReportCsv(batchOf(lines, currency), lines);

/** The partner_reference cell of a one-line USD batch whose reference is `reference`. */
function referenceCell(reference: string): string {
  const csv = reportOf([line('transaction', 'USD', { partnerReference: reference, grossMinor: 100, processorFeeMinor: 0, platformFeeMinor: 0, netMinor: 100 })]);
  const row = csv.slice(HEADER.length + 2, csv.indexOf('\r\ntotal,'));
  const prefix = 'transaction,svc_tx_a,';
  const suffix = ',2026-03-01T10:00:00.000Z,USD,1.00,0.00,0.00,1.00';
  expect(row.startsWith(prefix) && row.endsWith(suffix)).toBe(true);
  return row.slice(prefix.length, row.length - suffix.length);
}

describe('batchReportCsv', () => {
  it('writes a USD batch: header, a transaction row, a refund row (negative), the total row, CRLF after each', () => {
    // Arrange
    const lines = [
      line('transaction', 'USD', { svcTxId: 'svc_tx_a', partnerReference: 'order-1', grossMinor: 1230, processorFeeMinor: 36, platformFeeMinor: 18, netMinor: 1176 }),
      line('refund', 'USD', {
        svcTxId: 'svc_tx_b',
        partnerReference: 'order-0',
        createdAt: '2026-03-02T09:00:00.000Z',
        grossMinor: -500,
        processorFeeMinor: 0,
        platformFeeMinor: -5,
        netMinor: -495,
      }),
    ];
    const batch = batchOf(lines);

    // Act
    const csv = batchReportCsv(batch, lines);

    // Assert
    expect(csv).toBe(
      `${HEADER}\r\n` +
        'transaction,svc_tx_a,order-1,2026-03-01T10:00:00.000Z,USD,12.30,0.36,0.18,11.76\r\n' +
        'refund,svc_tx_b,order-0,2026-03-02T09:00:00.000Z,USD,-5.00,0.00,-0.05,-4.95\r\n' +
        'total,,,,USD,7.30,0.36,0.13,6.81\r\n',
    );
  });

  it('writes a row for every line it is given, the sales the batch pays included, not only the batch`s adjustments', () => {
    // Arrange: two paid sales and a refund; the batch itself lists the sales as transaction ids, the refund as an adjustment.
    const lines = [
      line('transaction', 'USD', { svcTxId: 'svc_tx_a', grossMinor: 1000, processorFeeMinor: 30, platformFeeMinor: 20, netMinor: 950 }),
      line('transaction', 'USD', { svcTxId: 'svc_tx_b', grossMinor: 2000, processorFeeMinor: 60, platformFeeMinor: 40, netMinor: 1900 }),
      line('refund', 'USD', { svcTxId: 'svc_tx_a', grossMinor: -500, processorFeeMinor: -15, platformFeeMinor: -10, netMinor: -475 }),
    ];
    const batch = batchOf(lines);
    expect([batch.transactionIds, batch.adjustments.map((it) => it.type), batch.lineCount]).toEqual([['svc_tx_a', 'svc_tx_b'], ['refund'], 3]);

    // Act
    const rows = batchReportCsv(batch, lines).split('\r\n');

    // Assert
    expect(rows.slice(1, -1)).toEqual([
      'transaction,svc_tx_a,order-1,2026-03-01T10:00:00.000Z,USD,10.00,0.30,0.20,9.50',
      'transaction,svc_tx_b,order-1,2026-03-01T10:00:00.000Z,USD,20.00,0.60,0.40,19.00',
      'refund,svc_tx_a,order-1,2026-03-01T10:00:00.000Z,USD,-5.00,-0.15,-0.10,-4.75',
      'total,,,,USD,25.00,0.75,0.50,23.75',
    ]);
  });

  it('writes each ledger entry as a row of its own type: the sale, a refund, a chargeback, the dispute fee and a reinstatement', () => {
    // Arrange: a 100.00 EUR sale refunded 20.00, disputed for the rest, with a 15.00 dispute fee; the dispute won.
    const entries: [EntryType, Amounts][] = [
      ['transaction', { grossMinor: 10_000, processorFeeMinor: 290, platformFeeMinor: 300, netMinor: 9_410 }],
      ['refund', { grossMinor: -2_000, processorFeeMinor: -58, platformFeeMinor: -60, netMinor: -1_882 }],
      ['chargeback', { grossMinor: -8_000, processorFeeMinor: -232, platformFeeMinor: -240, netMinor: -7_528 }],
      ['dispute_fee', { grossMinor: 0, processorFeeMinor: 1_500, platformFeeMinor: 0, netMinor: -1_500 }],
      ['dispute_reinstated', { grossMinor: 8_000, processorFeeMinor: 232, platformFeeMinor: 240, netMinor: 7_528 }],
    ];
    const lines = entries.map(([type, amounts], i) => line(type, 'EUR', { ...amounts, createdAt: `2026-03-0${i + 1}T10:00:00.000Z` }));

    // Act
    const csv = reportOf(lines);

    // Assert
    expect(csv).toBe(
      `${HEADER}\r\n` +
        'transaction,svc_tx_a,order-1,2026-03-01T10:00:00.000Z,EUR,100.00,2.90,3.00,94.10\r\n' +
        'refund,svc_tx_a,order-1,2026-03-02T10:00:00.000Z,EUR,-20.00,-0.58,-0.60,-18.82\r\n' +
        'chargeback,svc_tx_a,order-1,2026-03-03T10:00:00.000Z,EUR,-80.00,-2.32,-2.40,-75.28\r\n' +
        'dispute_fee,svc_tx_a,order-1,2026-03-04T10:00:00.000Z,EUR,0.00,15.00,0.00,-15.00\r\n' +
        'dispute_reinstated,svc_tx_a,order-1,2026-03-05T10:00:00.000Z,EUR,80.00,2.32,2.40,75.28\r\n' +
        'total,,,,EUR,80.00,17.32,2.40,60.28\r\n',
    );
  });

  it('writes amounts with exactly the currency’s decimals: JPY none, KWD three', () => {
    const jpy = [line('transaction', 'JPY', { grossMinor: 1000, processorFeeMinor: 29, platformFeeMinor: 15, netMinor: 956 })];
    const kwd = [line('transaction', 'KWD', { grossMinor: 1234, processorFeeMinor: 36, platformFeeMinor: 5, netMinor: 1193 })];

    expect(reportOf(jpy)).toBe(
      `${HEADER}\r\ntransaction,svc_tx_a,order-1,2026-03-01T10:00:00.000Z,JPY,1000,29,15,956\r\ntotal,,,,JPY,1000,29,15,956\r\n`,
    );
    expect(reportOf(kwd)).toBe(
      `${HEADER}\r\ntransaction,svc_tx_a,order-1,2026-03-01T10:00:00.000Z,KWD,1.234,0.036,0.005,1.193\r\ntotal,,,,KWD,1.234,0.036,0.005,1.193\r\n`,
    );
  });

  it('writes the largest amounts exactly, digit for digit, where dividing a double would not', () => {
    // (9007199254740990 / 100).toFixed(2) is "90071992547409.91"; (2^53 - 1) / 1000 rounds to ….990.
    const usd = [line('transaction', 'USD', { grossMinor: MAX_MINOR_UNITS, processorFeeMinor: 0, platformFeeMinor: 0, netMinor: 9_007_199_254_740_990 })];
    const kwd = [line('transaction', 'KWD', { grossMinor: -Number.MAX_SAFE_INTEGER, processorFeeMinor: 0, platformFeeMinor: 0, netMinor: Number.MAX_SAFE_INTEGER })];

    expect(reportOf(usd)).toContain(',USD,999999.99,0.00,0.00,90071992547409.90\r\n');
    expect(reportOf(kwd)).toContain(',KWD,-9007199254740.991,0.000,0.000,9007199254740.991\r\n');
  });

  it('writes the total row from the batch’s stored totals', () => {
    const lines = [line('transaction', 'USD', { grossMinor: 100, processorFeeMinor: 3, platformFeeMinor: 2, netMinor: 95 })];
    const batch = { ...batchOf(lines), totals: { grossMinor: 1, processorFeesMinor: 2, platformFeesMinor: 3, netMinor: -4 } };

    expect(batchReportCsv(batch, lines).endsWith('total,,,,USD,0.01,0.02,0.03,-0.04\r\n')).toBe(true);
  });

  it('refuses an amount that is not a safe integer of minor units instead of writing a wrong one', () => {
    const fractional = [line('transaction', 'USD', { grossMinor: 12.5, processorFeeMinor: 0, platformFeeMinor: 0, netMinor: 0 })];
    const huge = [line('transaction', 'USD', { grossMinor: 1e21, processorFeeMinor: 0, platformFeeMinor: 0, netMinor: 0 })];

    expect(() => reportOf(fractional)).toThrow(RangeError);
    expect(() => reportOf(huge)).toThrow(RangeError);
  });

  it.each([
    ['a comma', 'a,b', '"a,b"'],
    ['a double quote', 'say "hi"', '"say ""hi"""'],
    ['a comma and quotes, in UTF-8', 'café, "x"', '"café, ""x"""'],
    ['a line feed', 'one\ntwo', '"one\ntwo"'],
    ['a carriage return and line feed', 'one\r\ntwo', '"one\r\ntwo"'],
    ['nothing special (unquoted)', 'order 42', 'order 42'],
    ['other scripts and emoji (unquoted, as written)', '注文 🙂 ñ', '注文 🙂 ñ'],
    ['a single quote', "it's", "it's"],
  ])('quotes partner_reference per RFC 4180 only when needed: %s', (_what, reference, cell) => {
    expect(referenceCell(reference)).toBe(cell);
  });

  /**
   * OWASP "CSV Injection": a text cell starting with `=`, `+`, `-`, `@`, TAB or CR gets a leading `'`; nothing
   * else changes, and the result is then quoted per RFC 4180 like any other field. Each row is the exact field
   * the file must hold, written out by hand rather than computed by a copy of the rule.
   */
  it.each([
    ['=1+1', "'=1+1"],
    ['+x', "'+x"],
    ['-x', "'-x"],
    ['@x', "'@x"],
    ['\tx', "'\tx"],
    ['\rx', `"'\rx"`],
    ['=a,b', `"'=a,b"`],
    ['=HYPERLINK("http://evil.example","x")', `"'=HYPERLINK(""http://evil.example"",""x"")"`],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['a=b', 'a=b'],
    // A text that itself starts with ' gets one more, so "strip one leading '" always gives the text back.
    ["'x", "''x"],
    ["'=x", "''=x"],
    ['', ''],
    ['🙂', '🙂'],
    ['🙂=1', '🙂=1'],
  ])('writes the text %j in svc_tx_id and partner_reference as the field %j', (text, field) => {
    // Arrange
    const lines = [line('transaction', 'USD', { svcTxId: text, partnerReference: text, grossMinor: 100, processorFeeMinor: 0, platformFeeMinor: 0, netMinor: 100 })];

    // Act
    const csv = batchReportCsv(batchOf(lines), lines);

    // Assert
    expect(csv).toBe(`${HEADER}\r\ntransaction,${field},${field},2026-03-01T10:00:00.000Z,USD,1.00,0.00,0.00,1.00\r\ntotal,,,,USD,1.00,0.00,0.00,1.00\r\n`);
  });

  it('defuses svc_tx_id too, but never the amounts: a negative amount stays a number', () => {
    const lines = [
      line('transaction', 'USD', { svcTxId: '=1+1', grossMinor: 100, processorFeeMinor: 0, platformFeeMinor: 0, netMinor: 100 }),
      line('chargeback', 'USD', { svcTxId: 'svc_tx_b', grossMinor: -100, processorFeeMinor: 0, platformFeeMinor: 0, netMinor: -100 }),
    ];

    const rows = reportOf(lines).split('\r\n');

    expect(rows[1]).toBe("transaction,'=1+1,order-1,2026-03-01T10:00:00.000Z,USD,1.00,0.00,0.00,1.00");
    expect(rows[2]).toBe('chargeback,svc_tx_b,order-1,2026-03-01T10:00:00.000Z,USD,-1.00,0.00,0.00,-1.00');
  });
});

describe('the report’s HTTP metadata', () => {
  it('is UTF-8 CSV, downloaded as settlement-<batch id>.csv', () => {
    const batch = batchOf([]);

    expect(SETTLEMENT_REPORT_CONTENT_TYPE).toBe('text/csv; charset=utf-8');
    expect(batchReportFilename(batch)).toBe('settlement-stl_0123456789abcdefghjkmnpq.csv');
    expect(batchReportContentDisposition(batch)).toBe('attachment; filename="settlement-stl_0123456789abcdefghjkmnpq.csv"');
  });

  it.each(['a"b', 'a\r\nx-evil: 1', '../x', ''])('refuses a batch id that is not a plain identifier (%j), so it cannot break the header', (id) => {
    expect(() => batchReportContentDisposition({ ...batchOf([]), id })).toThrow(RangeError);
  });
});

/**
 * A strict RFC 4180 parser: every record ends with CRLF; a bare CR or LF, or a quote, outside a quoted field is an
 * error, so the report cannot pass by being lenient about what it wrote.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let at = 0;
  while (at < text.length) {
    let field = '';
    if (text[at] === '"') {
      at++;
      for (;;) {
        if (at >= text.length) throw new Error('unterminated quoted field');
        if (text[at] === '"') {
          if (text[at + 1] === '"') {
            field += '"';
            at += 2;
            continue;
          }
          at++;
          break;
        }
        field += text[at];
        at++;
      }
    } else {
      while (at < text.length && !',\r\n'.includes(text[at] as string)) {
        if (text[at] === '"') throw new Error(`quote inside an unquoted field at ${at}`);
        field += text[at];
        at++;
      }
    }
    record.push(field);
    if (text[at] === ',') {
      at++;
    } else if (text.startsWith('\r\n', at)) {
      records.push(record);
      record = [];
      at += 2;
    } else {
      throw new Error(`expected a comma or CRLF at ${at}`);
    }
  }
  if (record.length > 0) throw new Error('the last record does not end with CRLF');
  return records;
}

/** A cell's amount in exact minor units, refusing anything but the canonical form with exactly `exponent` decimals. */
function minorOf(cell: string, exponent: number): bigint {
  const match = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?$/.exec(cell);
  if (match === null) throw new Error(`not an amount: ${cell}`);
  const [, sign, whole, fraction = ''] = match;
  if (fraction.length !== exponent || (exponent === 0 && cell.includes('.'))) throw new Error(`wrong decimals: ${cell}`);
  const magnitude = BigInt(`${whole}${fraction}`);
  if (sign === '-' && magnitude === 0n) throw new Error(`negative zero: ${cell}`);
  return sign === '-' ? -magnitude : magnitude;
}

/** The characters that make a spreadsheet run a cell as a formula (OWASP "CSV Injection"). */
const FORMULA_STARTS = ['=', '+', '-', '@', '\t', '\r'];

/**
 * Checks a text cell (as parsed back) against the text it was written from without re-implementing the writer:
 * it is the text, or the text behind one `'`; no spreadsheet would run it; it is changed only when the text would
 * have been run or starts with `'`; and removing one leading `'` always gives the text back.
 */
function expectSafeTextCell(cell: string | undefined, text: string): void {
  const startsFormula = (value: string) => FORMULA_STARTS.some((start) => value.startsWith(start));
  expect([text, `'${text}`]).toContain(cell);
  expect(startsFormula(cell as string)).toBe(false);
  expect(cell === text).toBe(!startsFormula(text) && !text.startsWith("'"));
  expect((cell as string).startsWith("'") ? (cell as string).slice(1) : cell).toBe(text);
}

const CURRENCIES = Object.keys(CURRENCY_EXPONENTS).map(currencyCode);
const tricky = fc.constantFrom(',', '"', '\r', '\n', '\r\n', '=', '+', '-', '@', '\t', "'", ' ', 'a', 'é', '🙂', '注');
const anyText = fc.oneof(fc.string({ unit: tricky, maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 }));
/** Mostly amounts the service accepts; sometimes far larger ones (still safe once summed), where floats lose digits. */
const LARGE = Math.floor(Number.MAX_SAFE_INTEGER / 64);
const anyAmount = (min: number, max: number) =>
  fc.oneof({ arbitrary: fc.integer({ min, max }), weight: 4 }, { arbitrary: fc.integer({ min: min < 0 ? -LARGE : 0, max: max > 0 ? LARGE : 0 }), weight: 1 });

const anyInstant = fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
/** Sales and reinstatements add money; refunds, chargebacks and dispute fees take it back (negative amounts). */
const isCredit = (type: EntryType) => type === 'transaction' || type === 'dispute_reinstated';

const anyLine = (type: EntryType, currency: CurrencyCode) =>
  fc
    .record({
      svcTxId: anyText,
      partnerReference: anyText,
      txCreatedAt: anyInstant,
      createdAt: anyInstant,
      grossMinor: isCredit(type) ? anyAmount(0, MAX_MINOR_UNITS) : anyAmount(-MAX_MINOR_UNITS, 0),
      processorFeeMinor: isCredit(type) ? anyAmount(0, 10_000_000) : anyAmount(-10_000_000, 0),
      platformFeeMinor: isCredit(type) ? anyAmount(0, 10_000_000) : anyAmount(-10_000_000, 0),
    })
    .map(({ grossMinor, processorFeeMinor, platformFeeMinor, ...rest }) =>
      line(type, currency, { ...rest, grossMinor, processorFeeMinor, platformFeeMinor, netMinor: grossMinor - processorFeeMinor - platformFeeMinor }),
    );

const REVERSAL_TYPES = ENTRY_TYPES.filter((type) => type !== 'transaction');
const anyBatch = fc.constantFrom(...CURRENCIES).chain((currency) =>
  fc
    .tuple(
      fc.array(anyLine('transaction', currency), { maxLength: 12 }),
      fc.array(fc.constantFrom(...REVERSAL_TYPES).chain((type) => anyLine(type, currency)), { maxLength: 6 }),
    )
    .map(([sales, reversals]) => {
      const lines = [...sales, ...reversals];
      return { batch: batchOf(lines, currency), lines };
    }),
);

describe('batchReportCsv (property)', () => {
  it('parses back to every line, and its rows add up exactly to the total row in every amount column', () => {
    fc.assert(
      fc.property(anyBatch, ({ batch, lines }) => {
        // Arrange
        const exponent = currencyExponent(batch.currency);

        // Act
        const records = parseCsv(batchReportCsv(batch, lines));

        // Assert: the header, one row per line in order (as many as the batch counts), the total row
        expect(records).toHaveLength(lines.length + 2);
        expect(records[0]?.join(',')).toBe(HEADER);
        const rows = records.slice(1, -1);
        expect(rows).toHaveLength(batch.lineCount);
        rows.forEach((row, index) => {
          const item = lines[index] as SettlementItem;
          expect([row[0], row[3], row[4]]).toEqual([item.type, item.createdAt, item.currency]);
          expectSafeTextCell(row[1], item.svcTxId);
          expectSafeTextCell(row[2], item.partnerReference);
          expect(row.slice(5).map((cell) => minorOf(cell, exponent))).toEqual(
            [item.grossMinor, item.processorFeeMinor, item.platformFeeMinor, item.netMinor].map(BigInt),
          );
        });
        const total = records[records.length - 1] as string[];
        expect(total.slice(0, 5)).toEqual(['total', '', '', '', batch.currency]);
        const totalMinor = total.slice(5).map((cell) => minorOf(cell, exponent));
        const { grossMinor, processorFeesMinor, platformFeesMinor, netMinor } = batch.totals;
        expect(totalMinor).toEqual([grossMinor, processorFeesMinor, platformFeesMinor, netMinor].map(BigInt));
        const columnSums = [0, 1, 2, 3].map((column) => rows.reduce((sum, row) => sum + minorOf(row[5 + column] as string, exponent), 0n));
        expect(columnSums).toEqual(totalMinor);
      }),
      { numRuns: 300 },
    );
  });
});
