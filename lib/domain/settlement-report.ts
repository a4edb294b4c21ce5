/**
 * A settlement batch's reconciliation report as CSV (decisions.md §7): what a partner's finance team opens to
 * check a payout line by line. Pure: built from the batch as stored, so the same batch always gives the same
 * bytes.
 *
 * Format (RFC 4180):
 * - header `type,svc_tx_id,partner_reference,created_at,currency,gross,processor_fee,platform_fee,net`;
 * - one row per ledger entry the batch settles (decisions.md §5a), in the batch's order: `type` is the entry's
 *   (`transaction` for a sale, `refund`, `chargeback`, `dispute_fee`, `dispute_reinstated`), amounts as stored
 *   (a reversal's negative);
 * - a `total` row equal to the batch's stored totals, with svc_tx_id, partner_reference and created_at empty;
 * - every record ends with CRLF, the last one included; a field is quoted only when it holds a comma, a double
 *   quote, CR or LF, and a double quote inside is doubled. Text is written as stored (UTF-8 on the wire).
 *
 * Amounts are major units with exactly the currency's number of decimals (JPY `1000`, USD `12.30`, KWD `1.234`,
 * `-12.30`), written by money's `formatMinorUnits` from the integer minor units: no double ever holds the
 * major amount, so no rounding can change a digit, and an amount that is not a safe integer is refused.
 *
 * Spreadsheet formula injection (OWASP "CSV Injection"): partner_reference is partner-supplied text, and a cell
 * starting with `=`, `+`, `-`, `@`, TAB or CR is run as a formula by Excel, LibreOffice and Sheets. Such a text
 * cell gets a leading `'`, which those programs read as "this is text" and do not show. It is applied to the
 * text columns only (svc_tx_id and partner_reference: created_at, type and currency are written by the
 * service and never start so). Not to the amount columns: they are numbers the service formats itself (digits,
 * one point, an optional leading minus), so they cannot hold a formula, and a reconciliation needs `-12.30` to
 * stay a number a spreadsheet can add, not the text `'-12.30`. The price is that a reference stored as `=x`
 * reads `'=x` in the file; a program comparing it with the API strips one leading `'` first. A text that itself
 * starts with `'` gets one more (`'x` is written `''x`), so that stripping is never ambiguous.
 */
import { type CurrencyCode, formatMinorUnits } from './money';
import { type BatchLimits, MAX_LINES_PER_BATCH, type SettlementBatch, type SettlementItem } from './settlement';

/** The `content-type` of the report. */
export const SETTLEMENT_REPORT_CONTENT_TYPE = 'text/csv; charset=utf-8';

const HEADER = ['type', 'svc_tx_id', 'partner_reference', 'created_at', 'currency', 'gross', 'processor_fee', 'platform_fee', 'net'];

const CRLF = '\r\n';

/** What of a batch its report shows beside its lines: the total row. */
type ReportedBatch = Pick<SettlementBatch, 'totals' | 'currency'>;

/** Builds the report of one batch from its lines: header, one row per line in the batch's order, then the total row. */
export function batchReportCsv(batch: ReportedBatch, lines: readonly SettlementItem[]): string {
  return record(HEADER) + rowsOf(lines) + record(totalRecord(batch));
}

/**
 * The same report in pieces, as the batch's lines are read chunk by chunk (its `LINES#` items): the header, the rows
 * of each chunk, the total row. Only one chunk of lines is held at a time (docs/settlement.md "Reports").
 */
export async function* batchReportPieces(batch: ReportedBatch, chunks: AsyncIterable<readonly SettlementItem[]>): AsyncGenerator<string> {
  yield record(HEADER);
  for await (const lines of chunks) yield rowsOf(lines);
  yield record(totalRecord(batch));
}

/**
 * The bytes a line's row takes in the report as a Lambda's response carries it: UTF-8, inside the JSON string of the
 * response's body (a `"` or CR/LF escaped). What bounds a batch ({@link MAX_REPORT_BYTES}), so that
 * every report fits in one response.
 */
export const reportRowBytes = (line: SettlementItem): number => utf8.encode(JSON.stringify(record(lineRecord(line)))).length - 2;

/**
 * The rows of one batch's report at most, in bytes as a Lambda's response carries them ({@link reportRowBytes}):
 * under its 6 MB with room for the header, the total row and the response's envelope (docs/settlement.md
 * "Reconciliation report"). 10,000 rows take about 1.5 MB with references of a few dozen characters.
 */
export const MAX_REPORT_BYTES = 4_500_000;

/** What one batch may hold (decisions.md §7): {@link MAX_LINES_PER_BATCH} lines, and a report that fits in one answer. */
export const BATCH_LIMITS: BatchLimits = { lines: MAX_LINES_PER_BATCH, reportBytes: MAX_REPORT_BYTES, rowBytes: reportRowBytes };

const utf8 = new TextEncoder();

const record = (fields: readonly string[]) => fields.map(csvField).join(',') + CRLF;

const rowsOf = (lines: readonly SettlementItem[]) => lines.map((line) => record(lineRecord(line))).join('');

const totalRecord = ({ totals, currency }: ReportedBatch) => [
  'total',
  '',
  '',
  '',
  currency,
  ...amounts(currency, [totals.grossMinor, totals.processorFeesMinor, totals.platformFeesMinor, totals.netMinor]),
];

/** The report's download name, `settlement-<batch id>.csv`. */
export function batchReportFilename(batch: Pick<SettlementBatch, 'id'>): string {
  return `settlement-${batch.id}.csv`;
}

/**
 * The `content-disposition` header that downloads the report under {@link batchReportFilename}. The id goes
 * into a quoted header value, so one that is not a plain identifier (a quote, CR/LF, a path) is refused with a
 * RangeError rather than written: batch ids are the service's own, so that would be a bug, not input.
 */
export function batchReportContentDisposition(batch: Pick<SettlementBatch, 'id'>): string {
  if (!/^[A-Za-z0-9_-]+$/.test(batch.id)) throw new RangeError(`Not a batch id: ${JSON.stringify(batch.id)}`);
  return `attachment; filename="${batchReportFilename(batch)}"`;
}

function lineRecord(line: SettlementItem): string[] {
  return [
    line.type,
    defuseFormula(line.svcTxId),
    defuseFormula(line.partnerReference),
    line.createdAt,
    line.currency,
    ...amounts(line.currency, [line.grossMinor, line.processorFeeMinor, line.platformFeeMinor, line.netMinor]),
  ];
}

function amounts(currency: CurrencyCode, minors: number[]): string[] {
  return minors.map((minor) => formatMinorUnits(minor, currency));
}

/**
 * OWASP's CSV-injection advice: a text cell that a spreadsheet would run as a formula gets a leading `'`; so does
 * one that starts with `'` itself, so that removing one leading `'` always gives the stored text back.
 */
function defuseFormula(text: string): string {
  return /^[=+\-@\t\r']/.test(text) ? `'${text}` : text;
}

/** RFC 4180: quoted only when needed, inner quotes doubled. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
